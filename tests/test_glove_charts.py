"""charts.glove: the rank histogram's shares and uniform line, the 3-D cloud's query and weights (validity for
Plotly: tests/test_all_charts.py; the loss curve: tests/test_all_charts.py)."""

from __future__ import annotations

import numpy as np
import streamlit  # noqa: F401 - Streamlit's default template, as in the app

from charts.glove import MAX_MARKER, MIN_MARKER, attention_cloud_3d, loss_curve, rank_histogram
from charts.style import ACCENT, SECOND
from tests.apptest_utils import decode_array

COUNTS = np.array([340, 170, 125, 102, 109, 111, 106, 109, 111, 140, 214, 363])


def cloud_input(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 3)), [f"w{i}" for i in range(n)], rng.dirichlet(np.ones(n))


def glove_figures() -> dict[str, tuple]:
    """Representative calls of every charts.glove builder: {name: (builder, args, kwargs)} (tests/test_all_charts.py)."""
    return {
        "histogram": (rank_histogram, (COUNTS, 3), dict(title="順位", rank_label="r", share_label="s")),
        "histogram_one_rank": (rank_histogram, (np.array([2000]),), {}),
        "cloud": (attention_cloud_3d, (*cloud_input(12), 8), dict(title="Row", weight_label="wt", query_label="q")),
        "cloud_two": (attention_cloud_3d, (*cloud_input(2), 0), {}),
        "loss": (loss_curve, ([1.0, 0.5],), {}),
    }


def test_rank_histogram_shows_shares_in_percent_with_the_uniform_line():
    spec = rank_histogram(COUNTS, 3, title="順位", rank_label="順位", share_label="割合", uniform_label="一様")
    bars, uniform = spec["data"]
    assert np.allclose(decode_array(bars["y"]), 100 * COUNTS / COUNTS.sum())
    assert np.array_equal(decode_array(bars["customdata"]), COUNTS)
    assert np.array_equal(decode_array(bars["x"]), np.arange(1, 13))
    assert bars["marker"]["color"] == [ACCENT if r == 3 else SECOND for r in range(1, 13)]
    assert np.allclose(decode_array(uniform["y"]), 100 / 12) and uniform["name"] == "一様"
    assert spec["layout"]["xaxis"]["tickvals"] == list(range(1, 13)) and spec["layout"]["title"]["text"] == "順位"
    assert spec["layout"]["yaxis"]["title"]["text"] == "割合 (%)"
    assert "title" not in rank_histogram(np.array([5, 0]))["layout"]


def test_attention_cloud_puts_the_query_apart_and_sizes_words_by_weight():
    coords, labels, weights = cloud_input(5)
    spec = attention_cloud_3d(coords, labels, weights, 2, weight_label="重み", query_label="クエリ")
    lines, words, query = spec["data"][:4], spec["data"][4], spec["data"][5]
    assert len(spec["data"]) == 6 and all(tr["mode"] == "lines" for tr in lines)  # one line per other word
    others = [0, 1, 3, 4]
    assert words["text"] == [labels[i] for i in others] and query["text"] == [labels[2]]
    assert np.allclose(decode_array(words["customdata"]), weights[others])
    sizes = decode_array(words["marker"]["size"])
    assert MIN_MARKER <= sizes.min() and sizes.max() <= MAX_MARKER
    assert int(np.argmax(sizes)) == int(np.argmax(weights[others]))
    assert (query["x"], query["y"], query["z"]) == ([coords[2, 0]], [coords[2, 1]], [coords[2, 2]])
    assert query["marker"]["symbol"] == "diamond" and query["marker"]["color"] == ACCENT
    assert words["marker"]["colorscale"][0] == [0.0, "#440154"]  # Viridis
    assert spec["layout"]["scene"]["xaxis"]["title"]["text"] == "PC1"


def test_the_loss_axis_labels_whole_decades_only():
    """The loss axis shows 1, 0.1, 0.01 (no 5, 2 minor labels) and spans at least one decade (two labels)."""
    from charts.glove import decade_label

    y = loss_curve([3.8, 1.0, 0.0076])["layout"]["yaxis"]
    assert y["type"] == "log" and y["tickmode"] == "array"
    assert y["tickvals"] == [0.001, 0.01, 0.1, 1.0, 10.0] and y["ticktext"] == ["0.001", "0.01", "0.1", "1", "10"]
    assert y["range"] == [-3, 1]
    narrow = loss_curve([0.69, 0.6])["layout"]["yaxis"]
    assert narrow["tickvals"] == [0.1, 1.0] and narrow["range"] == [-1, 0]
    assert decade_label(-5) == "10⁻⁵" and decade_label(4) == "10⁴" and decade_label(-3) == "0.001"
