"""Lesson 9's chart builders draw what they are given: the next-token bars (two series, most likely first), the
layer profile (two lines and the even-spread level, in percent), grouped bars and the log-scale model sizes.
(Plotly's own validator checks every case in tests/test_all_charts.py.)"""

from __future__ import annotations

import numpy as np

from charts.gpt import grouped_bars, induction_map, layer_profile, model_sizes, next_token_bars
from charts.style import ACCENT, SECOND
from tests.apptest_utils import decode_array


def gpt_figures() -> dict:
    """{name: (builder, args, kwargs)}: representative calls of every builder in charts/gpt.py."""
    probs = np.array([0.77, 0.06, 0.01])
    return {
        "next_token_bars": (next_token_bars, (["·Paris", "·the", "<E6 97>"], probs, np.array([0.9, 0.1, 0.0])),
                            dict(title="top", model_label="model", sampled_label="knobs")),
        "layer_profile": (layer_profile, (np.linspace(0.1, 0.9, 30), np.full(30, 0.3)), dict(reference=0.32,
                                                                                          reference_label="even")),
        "layer_profile_plain": (layer_profile, (np.zeros(2), np.ones(2)), {}),
        "grouped_bars": (grouped_bars, (["first", "second"], {"trained": [14.8, 3.3], "untrained": [11.0, 10.9]}),
                         dict(title="loss", value_label="nats", fmt=".1f")),
        "model_sizes": (model_sizes, (["SmolLM2 (このページ)", "GPT-2", "GPT-3"], [134.5e6, 1.5e9, 175e9]), {}),
        "induction_map": (induction_map, (np.array([[0.05, 0.31], [0.9, 0.3]]), ["L0", "L1"], ["H0", "H1"], 0.3),
                          dict(mark_label="≥ 0.3", title="induction", value_label="score")),
    }


def _build(name: str) -> dict:
    builder, args, kwargs = gpt_figures()[name]
    return builder(*args, **kwargs)


def test_next_token_bars_rank_the_tokens_and_draw_both_distributions_in_percent():
    fig = _build("next_token_bars")
    model, knobs = fig["data"]
    assert model["y"] == ["1. ·Paris", "2. ·the", "3. <E6 97>"] and fig["layout"]["yaxis"]["autorange"] == "reversed"
    np.testing.assert_allclose(decode_array(model["x"]), [77.0, 6.0, 1.0])
    np.testing.assert_allclose(decode_array(knobs["x"]), [90.0, 10.0, 0.0])
    assert (model["name"], knobs["name"]) == ("model", "knobs") and model["text"][0] == "77.0%"


def test_layer_profile_draws_both_models_and_the_even_level():
    fig = _build("layer_profile")
    trained, untrained, even = fig["data"]
    np.testing.assert_allclose(decode_array(trained["y"]), np.linspace(10, 90, 30))
    assert trained["x"] == list(range(30)) and trained["line"]["color"] == ACCENT
    assert untrained["line"]["color"] == SECOND and even["y"] == [32.0, 32.0] and even["name"] == "even"
    assert len(_build("layer_profile_plain")["data"]) == 2  # no reference asked: no third line


def test_grouped_bars_one_trace_per_series():
    fig = _build("grouped_bars")
    assert [t["name"] for t in fig["data"]] == ["trained", "untrained"] and fig["layout"]["barmode"] == "group"
    np.testing.assert_allclose(decode_array(fig["data"][1]["y"]), [11.0, 10.9])
    assert fig["data"][0]["text"] == ["14.8", "3.3"]


def test_model_sizes_on_a_log_axis_with_this_model_highlighted():
    fig = _build("model_sizes")
    bars = fig["data"][0]
    assert fig["layout"]["xaxis"]["type"] == "log" and bars["marker"]["color"] == [ACCENT, SECOND, SECOND]
    assert bars["text"] == ["134.5 M", "1.5 B", "175.0 B"]


def test_induction_map_rings_every_head_at_or_above_the_threshold():
    from charts.gpt import induction_map

    scores = np.array([[0.1, 0.31, 0.3], [0.29, 0.9, 0.0]])
    fig = induction_map(scores, ["L0", "L1"], ["H0", "H1", "H2"], 0.3, mark_label="ringed")
    marks = [tr for tr in fig["data"] if tr["type"] == "scatter"]
    assert len(marks) == 1 and marks[0]["name"] == "ringed"
    assert sorted(zip(marks[0]["y"], marks[0]["x"])) == [(0, 1), (0, 2), (1, 1)]  # (layer, head), written out
    assert fig["data"][0]["type"] == "heatmap"
