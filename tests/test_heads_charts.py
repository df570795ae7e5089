"""The charts of "What heads do" (charts/heads.py): each draws what it is given, where a reader looks for it."""

from __future__ import annotations

import numpy as np

from charts.heads import ablation_band, head_scatter, interval_bars, rank_by_layer, repeat_arrows
from tests.apptest_utils import decode_array


def heads_figures() -> dict:
    """{name: (builder, args, kwargs)}: representative calls of every builder in charts/heads.py."""
    draws = np.array([[3.3, 3.4, 5.9], [3.4, 3.5, 8.9]])
    return {
        "ablation_band": (ablation_band, ((1, 8), draws, {"induction": [5.2, 12.0], "sinks": [3.3, 3.6]},
                                          {"clean": 3.29, "first": 14.8}), dict(title="loss", k_label="k")),
        "ablation_band_plain": (ablation_band, ((1,), np.zeros((1, 1)), {}, {}), {}),
        "interval_bars": (interval_bars, (["a", "b"], [0.88, 0.01], [0.86, -0.01], [0.91, 0.02]),
                          dict(highlight=1, value_label="スコア")),
        "rank_by_layer": (rank_by_layer, ({"yours": np.array([4315, 396, 0]), "held": np.array([10.0, 5.0, 0.0])},),
                          dict(title="lens")),
        "head_scatter": (head_scatter, (np.array([0.9, 0.1, 0.5]), np.array([0.0, 5.5, 0.2]), ["L0H0", "L16H0", "L3H3"]),
                         dict(highlight=[0], highlight_label="quiet", other_label="other")),
        "head_scatter_none": (head_scatter, (np.zeros(2), np.zeros(2), ["a", "b"]), {}),
        "repeat_arrows": (repeat_arrows, (["·Mar", "isol", "·met", "·Mar", "isol"], [3, 4], [1, 2], [0.97, 0.05]),
                          dict(marked=[3, 4], line_px=60, title="arrows")),
    }


def build(name: str) -> dict:
    builder, args, kwargs = heads_figures()[name]
    return builder(*args, **kwargs)


def test_the_band_puts_every_draw_at_its_k_and_each_series_over_k():
    fig = build("ablation_band")
    dots = fig["data"][0]
    assert dots["x"] == ["1", "1", "1", "8", "8", "8"]
    np.testing.assert_allclose(decode_array(dots["y"]), [3.3, 3.4, 5.9, 3.4, 3.5, 8.9])
    assert [tr["name"] for tr in fig["data"][1:]] == ["induction", "sinks", "clean", "first"]
    np.testing.assert_allclose(decode_array(fig["data"][1]["y"]), [5.2, 12.0])
    assert fig["data"][3]["y"] == [3.29, 3.29] and fig["data"][3]["line"]["dash"] == "dot"


def test_interval_bars_carry_their_intervals():
    fig = build("interval_bars")
    bar = fig["data"][0]
    np.testing.assert_allclose(decode_array(bar["y"]), [0.88, 0.01])
    np.testing.assert_allclose(decode_array(bar["error_y"]["array"]), [0.03, 0.01], atol=1e-12)
    np.testing.assert_allclose(decode_array(bar["error_y"]["arrayminus"]), [0.02, 0.02], atol=1e-12)
    assert bar["marker"]["color"][1] != bar["marker"]["color"][0]  # the highlighted bar


def test_ranks_are_drawn_from_1_on_a_reversed_log_axis():
    fig = build("rank_by_layer")
    np.testing.assert_allclose(decode_array(fig["data"][0]["y"]), [4316, 397, 1])
    assert fig["layout"]["yaxis"]["type"] == "log" and fig["layout"]["yaxis"]["autorange"] == "reversed"
    assert fig["data"][-1]["y"] == [10, 10]


def test_the_scatter_splits_the_highlighted_heads():
    fig = build("head_scatter")
    other, marked = fig["data"]
    assert marked["text"] == ["L0H0"] and other["text"] == ["L16H0", "L3H3"]
    np.testing.assert_allclose(decode_array(other["y"]), [5.5, 0.2])
