"""charts.causal: the masked scores read −∞ where masked, the generation animation's frames and controls, the causal
and bidirectional weight maps (validity for Plotly: tests/test_all_charts.py)."""

from __future__ import annotations

import numpy as np
import pytest
import streamlit  # noqa: F401 - sets Streamlit's default template, as in the app

from attention_core.causal import RANDOM_DIM, causal_vs_bidirectional, generation_frames, random_word_vectors
from charts.causal import MINUS_INF, generation_animation, masked_scores_heatmap, weights_heatmap
from charts.style import ACCENT
from tests.apptest_utils import decode_array

WORDS = "the animal did n't cross the street because it was too tired".split()


def causal_result(words, seed=0):
    return causal_vs_bidirectional(random_word_vectors(words, RANDOM_DIM, seed), seed)


def causal_figures() -> dict[str, tuple]:
    """Representative calls of every charts.causal builder: {name: (builder, args, kwargs)} (tests/test_all_charts.py)."""
    res = causal_result(WORDS)
    frames = generation_frames(res["causal"].weights)
    titles = dict(title="因果", value_label="重み", axis_titles=("キー", "クエリ"))
    long = [f"w{i}" for i in range(15)]
    return {
        "scores": (masked_scores_heatmap, (res["causal"].scores, WORDS), dict(masked_note="m", **titles)),
        "scores_long": (masked_scores_heatmap, (causal_result(long)["causal"].scores, long), {}),
        "animation": (generation_animation, (frames, WORDS, 4), dict(play_label="p", pause_label="s", **titles)),
        "animation_one": (generation_animation, (generation_frames(np.ones((1, 1))), ["hi"], 1), {}),
        "causal": (weights_heatmap, (res["causal"].weights, WORDS), dict(hidden=~res["causal"].mask, highlight_row=0)),
        "bidirectional": (weights_heatmap, (res["bidirectional"].weights, WORDS), titles),
    }


@pytest.mark.parametrize("n, mode", [(3, "text"), (15, "markers")])  # over 144 cells: invisible hover markers
def test_masked_scores_read_minus_infinity_where_masked(n, mode):
    words = WORDS[:n] if n <= len(WORDS) else [f"w{i}" for i in range(n)]
    scores = causal_result(words)["causal"].scores
    spec = masked_scores_heatmap(scores, words, title="スコア", masked_note="隠す")
    heat, marks = spec["data"]
    z = decode_array(heat["z"]).reshape(n, n)
    masked = np.isneginf(scores)
    assert masked.sum() == n * (n - 1) // 2 and np.array_equal(np.isnan(z), masked)
    assert np.allclose(z[~masked], scores[~masked]) and "zmax" not in heat  # scores, not weights: autoscaled
    rows, cols = np.nonzero(masked)
    assert (marks["y"], marks["x"]) == (rows.tolist(), cols.tolist())
    assert marks["customdata"][0] == [words[rows[0]], words[cols[0]]] and "隠す" in marks["hovertemplate"]
    assert marks["mode"] == mode
    assert marks.get("text") == ([MINUS_INF] * len(rows) if mode == "text" else None)
    assert spec["layout"]["title"]["text"] == "スコア"


def test_generation_animation_has_one_frame_per_token_and_starts_where_asked():
    weights = causal_result(WORDS)["causal"].weights
    frames = generation_frames(weights)
    n = len(WORDS)
    spec = generation_animation(frames, WORDS, 4, title="生成", play_label="▶ 再生", pause_label="❚❚ 停止",
                                step_label="生成済み: ")
    heat, box = spec["data"]
    z = decode_array(heat["z"]).reshape(n, n)
    assert np.allclose(z, frames[3], equal_nan=True) and not np.isnan(z[3, :4]).any()
    assert np.isnan(z[4:]).all()  # rows not generated yet are grey
    assert box["y"] == [2.5, 2.5, 3.5, 3.5, 2.5] and box["line"]["color"] == ACCENT  # the newest row, outlined
    assert [f["name"] for f in spec["frames"]] == [str(k) for k in range(1, n + 1)]
    frame_5 = spec["frames"][4]["data"]
    assert frame_5[0]["y"] == list(range(5))
    assert np.allclose(decode_array(frame_5[0]["z"]).reshape(5, n), frames[4][:5], equal_nan=True)
    layout = spec["layout"]
    assert layout["sliders"][0]["active"] == 3 and layout["sliders"][0]["currentvalue"]["prefix"] == "生成済み: "
    assert [b["label"] for b in layout["updatemenus"][0]["buttons"]] == ["▶ 再生", "❚❚ 停止"]
    assert layout["yaxis"]["range"] == [n - 0.5, -0.5] and layout["title"]["text"] == "生成"


def test_weight_maps_hide_the_future_and_outline_the_first_row():
    res = causal_result(WORDS)
    spec = weights_heatmap(res["causal"].weights, WORDS, hidden=~res["causal"].mask, highlight_row=0)
    z = decode_array(spec["data"][0]["z"]).reshape(len(WORDS), len(WORDS))
    assert np.array_equal(np.isnan(z), ~res["causal"].mask)
    assert np.allclose(np.nansum(z, axis=1), 1.0)
    assert spec["layout"]["shapes"][0]["y0"] == -0.5
    bi = weights_heatmap(res["bidirectional"].weights, WORDS)
    assert not np.isnan(decode_array(bi["data"][0]["z"])).any() and "shapes" not in bi["layout"]


def test_a_figure_does_not_change_the_next_one():
    frames = generation_frames(np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None])
    first = generation_animation(frames, ["a", "b", "c"], 2, title="g")
    fig = generation_animation(frames, ["a", "b", "c"], 3, title="g")
    fig["layout"]["xaxis"]["range"] = None
    fig["data"][0]["z"] = None
    assert generation_animation(frames, ["a", "b", "c"], 2, title="g") == first
