"""charts.qkv builds plain figure dicts: each must be what Plotly's validated go.Figure sends (same JSON)."""

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
import streamlit  # noqa: F401 - registers the "streamlit" template the app's figures carry

from attention_core.qkv import (
    centroid, convex_hull, load_library, lookup, output_path, rgb_plane, temperature_sweep, zero_temperature_output,
)
from tests.reference_charts import weight_bars
from charts.qkv import bars, blend_bar, key_heatmap, value_plane, value_swatches
from tests.reference_charts import attention_heatmap
from charts.style import DIVERGING

LIB = load_library()
TITLES = [b.title["ja"] for b in LIB.books]
NAMES = {k: k for k in ("hull", "path", "current", "cold", "hot", "temperature", "x", "y")}


def as_sent(spec: dict) -> dict:
    return json.loads(pio.to_json(spec, validate=False))


def without_empty(obj):
    """JSON with empty objects dropped (an update_layout(title=None) leaves {} where validation of a dict leaves none)."""
    if isinstance(obj, dict):
        return {k: without_empty(v) for k, v in obj.items() if v != {}}
    if isinstance(obj, list):
        return [without_empty(v) for v in obj]
    return obj


def validated(spec: dict) -> dict:
    return json.loads(pio.to_json(go.Figure(spec).to_dict(), validate=False))


def figures(query, tau):
    found = lookup(query, LIB.keys, LIB.values, tau)
    temps = temperature_sweep(0.05, 20)
    path = output_path(query, LIB.keys, LIB.values, temps)
    points = rgb_plane(LIB.values)
    return found, {
        "keys": key_heatmap([query, *LIB.keys], ["q", *TITLES], ["a", "b", "c", "d"], "feature", "", "n", title="K"),
        "scores": bars(TITLES, found.scores, title="S", highlight=found.best, value_label="score"),
        "weights": bars(TITLES, found.weights, title="W", highlight=found.best, value_label="w", as_percent=True),
        "swatches": value_swatches(TITLES, LIB.values, "v", title="V"),
        "blend": blend_bar(TITLES, LIB.values, found.weights, found.output, "mix", "out", "share", title="B"),
        "plane": value_plane(points, LIB.values, TITLES, convex_hull(points), rgb_plane(path), path, temps,
                             rgb_plane(found.output), found.output,
                             rgb_plane(zero_temperature_output(query, LIB.keys, LIB.values)),
                             rgb_plane(centroid(LIB.values)), NAMES, title="P"),
    }


CASES = [(LIB.queries[0].vector, 1.0), ((-3.0, 3.0, -2.5, 0.1), 0.05), ((0.0, 0.0, 0.0, 0.0), 20.0)]


@pytest.mark.parametrize("query,tau", CASES)
def test_every_dict_is_unchanged_by_plotly_validation(query, tau):
    for name, spec in figures(query, tau)[1].items():
        assert isinstance(spec, dict)
        assert as_sent(spec) == validated(spec), name


@pytest.mark.parametrize("query,tau", CASES)
def test_the_same_json_as_the_go_figure_builders(query, tau):
    found, specs = figures(query, tau)
    M = np.asarray([query, *LIB.keys], dtype=np.float64)
    reach = max(float(np.abs(M).max()), 1.0)
    heat = attention_heatmap(M, ["q", *TITLES], ["a", "b", "c", "d"], title="K", highlight_row=0, zmax=None,
                             colorscale=DIVERGING, value_label="n", show_values=True)
    heat.update_traces(zmin=-reach, zmax=reach, zmid=0.0, texttemplate="%{z:.1f}")
    heat.update_layout(xaxis_title="feature", yaxis_title="", plot_bgcolor="rgba(0,0,0,0)")
    assert without_empty(as_sent(specs["keys"])) == without_empty(as_sent(heat.to_dict()))
    for name, kwargs in (("scores", dict(values=found.scores, title="S", value_label="score")),
                         ("weights", dict(values=found.weights, title="W", value_label="w", as_percent=True))):
        reference = weight_bars(TITLES, kwargs.pop("values"), highlight=found.best, **kwargs)
        assert without_empty(as_sent(specs[name])) == without_empty(as_sent(reference.to_dict())), name
