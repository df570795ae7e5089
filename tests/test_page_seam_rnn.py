"""Lesson 1 at its defaults, as shown, against an Elman RNN's Jacobians written out here in float64: the step
counts (n sequential RNN steps, 1 for attention, n × n pairs), the influence figure's words, the table's words, path
lengths and RNN norms ‖∂h_T/∂x_t‖₂, and the predicted ratio's sentence, in both languages.

The inputs are the page's: GloVe vectors of the default sentence and the core's seeded W_x, W_h, b (the draw is
tested in tests/test_rnn_core.py); the recurrence, its Jacobians and their norms are computed here."""

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.seam import figure, find_sentence, number, strings, texts, title_text

SENTENCES = Path(__file__).resolve().parent.parent / "data" / "sentences.toml"
HIDDEN, RADIUS, SEED = 32, 0.9, 0  # the page's defaults (rnn_hidden, rnn_radius, rnn_seed)


def default_words() -> list[str]:
    with SENTENCES.open("rb") as fh:
        text = next(s for s in tomllib.load(fh)["sentences"] if s["id"] == "long_memory")["text"]
    return re.findall(r"\w+|[^\w\s]", text.lower())


def jacobian_norms(X) -> np.ndarray:
    """‖∂h_T/∂x_t‖₂ for t = 1..T of h_t = tanh(W_x x_t + W_h h_{t-1} + b), h_0 = 0, by the chain rule."""
    from attention_core.rnn import elman_weights  # (inputs only: the seeded draw at this spectral radius)

    rnn = elman_weights(X.shape[1], HIDDEN, RADIUS, SEED)
    W_x, W_h, b = (np.asarray(a, dtype=np.float64) for a in (rnn.W_x, rnn.W_h, rnn.b))
    h, states = np.zeros(HIDDEN), []
    for x in X:
        h = np.tanh(W_x @ x + W_h @ h + b)
        states.append(h)
    norms, back = [], np.eye(HIDDEN)  # back = ∂h_T/∂h_t
    for t in range(len(X) - 1, -1, -1):
        local = np.diag(1 - states[t] ** 2)
        norms.append(np.linalg.norm(back @ local @ W_x, 2))
        back = back @ local @ W_h
    return np.array(norms[::-1])


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_steps_table_and_ratio_follow_the_recurrence(lang, glove):
    words = default_words()
    n = len(words)
    X = np.array([glove[x] for x in words], dtype=np.float64)
    norms = jacobian_norms(X)
    w = strings(lang)
    at = open_page("rnn", lang)
    assert_clean(at)

    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics[w["rnn.metric_rnn"]]) == n
    assert int(metrics[w["rnn.metric_attention"]]) == 1
    assert metrics[w["rnn.metric_pairs"]] == f"{n} × {n} = {n * n:,}"

    at.radio(key="rnn_predict").set_value(4).run()
    assert_clean(at)
    said = find_sentence(texts(at), "rnn.predict_number", lang)
    assert int(said["n"]) == n
    assert number(said["ratio"]) == pytest.approx(norms[0] / norms[-1], rel=5e-3)

    fig = figure(at, "rnn_influence")
    assert title_text(fig["layout"]["xaxis"]) == w["rnn.fig1_x"]
    ticks = dict(zip(fig["layout"]["xaxis"]["tickvals"], fig["layout"]["xaxis"]["ticktext"]))
    assert ticks and all(words[int(round(v)) - 1] == text for v, text in ticks.items())  # x = position t, from 1
    table = next(df.value for df in at.dataframe if w["rnn.col_rnn_steps"] in df.value.columns)
    assert table[w["rnn.col_word"]].tolist() == words
    assert table[w["rnn.col_position"]].tolist() == list(range(1, n + 1))
    assert table[w["rnn.col_rnn_steps"]].tolist() == [n - t + 1 for t in range(1, n + 1)]
    assert table[w["rnn.col_attention_steps"]].tolist() == [1] * n
    np.testing.assert_allclose([number(v) for v in table[w["rnn.col_rnn"]]], norms, rtol=2e-3)
