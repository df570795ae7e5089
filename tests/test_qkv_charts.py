"""charts.qkv (lesson 2): keys, scores and weights, the values' swatches, the blend and the value plane show the
library's numbers with the books' titles (validity for Plotly: tests/test_all_charts.py)."""

import numpy as np
import pytest
import streamlit  # noqa: F401 - registers the "streamlit" template the app's figures carry

from attention_core.qkv import (
    centroid, convex_hull, load_library, lookup, output_path, rgb_plane, temperature_sweep, zero_temperature_output,
)
from charts.qkv import bars, blend_bar, key_heatmap, value_plane, value_swatches
from charts.style import ACCENT, SECOND
from tests.apptest_utils import decode_array

LIB = load_library()
TITLES = [b.title["ja"] for b in LIB.books]
NAMES = {k: k for k in ("hull", "path", "current", "cold", "hot", "temperature", "x", "y")}


def calls(query, tau) -> tuple:
    """(the lookup, {name: (builder, args, kwargs)}) for every charts.qkv builder (tests/test_all_charts.py)."""
    found = lookup(query, LIB.keys, LIB.values, tau)
    temps = temperature_sweep(0.05, 20)
    path = output_path(query, LIB.keys, LIB.values, temps)
    points = rgb_plane(LIB.values)
    return found, {
        "keys": (key_heatmap, ([query, *LIB.keys], ["q", *TITLES], ["a", "b", "c", "d"], "feature", "", "n"),
                 dict(title="K")),
        "scores": (bars, (TITLES, found.scores), dict(title="S", highlight=found.best, value_label="score")),
        "weights": (bars, (TITLES, found.weights), dict(title="W", highlight=found.best, value_label="w",
                                                        as_percent=True)),
        "swatches": (value_swatches, (TITLES, LIB.values, "v"), dict(title="V")),
        "blend": (blend_bar, (TITLES, LIB.values, found.weights, found.output, "mix", "out", "share"), dict(title="B")),
        "plane": (value_plane, (points, LIB.values, TITLES, convex_hull(points), rgb_plane(path), path, temps,
                                rgb_plane(found.output), found.output,
                                rgb_plane(zero_temperature_output(query, LIB.keys, LIB.values)),
                                rgb_plane(centroid(LIB.values)), NAMES), dict(title="P")),
    }


def figures(query, tau) -> tuple:
    found, table = calls(query, tau)
    return found, {name: builder(*args, **kwargs) for name, (builder, args, kwargs) in table.items()}


QUERY = LIB.queries[0].vector


def test_key_heatmap_shows_the_query_and_keys_centred_on_zero_with_the_query_outlined():
    spec = figures(QUERY, 1.0)[1]["keys"]
    (heat,) = spec["data"]
    M = np.asarray([QUERY, *LIB.keys], dtype=np.float64)
    assert np.array_equal(decode_array(heat["z"]).reshape(M.shape), M)
    reach = max(float(np.abs(M).max()), 1.0)
    assert (heat["zmin"], heat["zmid"], heat["zmax"]) == (-reach, 0.0, reach)
    assert heat["colorscale"][0] == [0.0, "rgb(103,0,31)"]  # RdBu
    assert spec["layout"]["yaxis"]["ticktext"] == ["q", *TITLES] and spec["layout"]["xaxis"]["ticktext"] == list("abcd")
    assert spec["layout"]["shapes"][0]["y1"] == 0.5 and spec["layout"]["title"]["text"] == "K"


@pytest.mark.parametrize("query, tau", [(QUERY, 1.0), ((-3.0, 3.0, -2.5, 0.1), 0.05)])
def test_score_and_weight_bars_highlight_the_best_book(query, tau):
    found, specs = figures(query, tau)
    scores, weights = specs["scores"]["data"][0], specs["weights"]["data"][0]
    assert np.allclose(decode_array(scores["y"]), found.scores)
    assert np.allclose(decode_array(weights["y"]), 100 * found.weights)
    assert weights["text"] == [f"{100 * w:.1f}%" for w in found.weights]
    colours = [ACCENT if i == found.best else SECOND for i in range(len(TITLES))]
    assert scores["marker"]["color"] == colours and weights["marker"]["color"] == colours
    assert specs["weights"]["layout"]["xaxis"]["ticktext"] == TITLES
    assert specs["weights"]["layout"]["yaxis"]["title"]["text"] == "w (%)"


def test_swatches_and_blend_carry_the_values_colours_and_shares():
    found, specs = figures(QUERY, 1.0)
    (swatch,) = specs["swatches"]["data"]
    hexes = ["#%02x%02x%02x" % tuple(int(round(c)) for c in v) for v in LIB.values]
    assert swatch["marker"]["color"] == hexes and specs["swatches"]["layout"]["yaxis"]["ticktext"] == TITLES
    *shares, out = specs["blend"]["data"]
    assert [s["name"] for s in shares] == TITLES and [s["marker"]["color"] for s in shares] == hexes
    assert np.allclose([s["x"][0] for s in shares], 100 * found.weights)
    assert out["y"] == ["out"] and out["marker"]["color"] == "#%02x%02x%02x" % tuple(
        int(np.clip(np.rint(c), 0, 255)) for c in found.output)


def test_value_plane_shows_the_hull_the_path_and_where_the_output_is():
    found, specs = figures(QUERY, 1.0)
    hull, path, books, cold, hot, now = specs["plane"]["data"]
    points = rgb_plane(LIB.values)
    corners = list(convex_hull(points))
    assert np.allclose(decode_array(hull["x"]), points[corners + corners[:1], 0])
    assert books["text"] == TITLES and np.allclose(decode_array(books["x"]), points[:, 0])
    assert np.allclose([now["x"][0], now["y"][0]], rgb_plane(found.output))
    assert (cold["name"], hot["name"], now["name"]) == ("cold", "hot", "current")
    assert len(path["customdata"]) == len(temperature_sweep(0.05, 20))
    assert specs["plane"]["layout"]["yaxis"]["scaleanchor"] == "x"
