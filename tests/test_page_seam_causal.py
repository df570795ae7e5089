"""Lesson 5 at its defaults, as shown, against masked attention written out here in float64 loops: the scores map,
the bidirectional and causal weight maps (axes, labels, z[query][key], grey = masked), their titles, the caption's
count of masked cells, the newest generated row and the first row's weight, in both languages.

The inputs are the page's: GloVe vectors of the default sentence and the core's seeded W_Q, W_K (the draw itself is
tested in tests/test_causal_core.py); everything after them is computed here."""

import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.seam import assert_attention_map, figure, find_sentence, heatmap, number, strings, texts, title_text

SENTENCES = Path(__file__).resolve().parent.parent / "data" / "sentences.toml"
SEED = 0  # the page's default seed (causal_seed)


def default_words() -> list[str]:
    with SENTENCES.open("rb") as fh:
        text = tomllib.load(fh)["sentences"][0]["text"]
    return re.findall(r"\w+", text.lower())


def reference(glove):
    """(words, masked scores with -inf above the diagonal, causal weights, bidirectional weights), by loops."""
    from attention_core.causal import qkv_projections  # (inputs only: the seeded Glorot draw)

    words = default_words()
    X = np.array([glove[w] for w in words], dtype=np.float64)
    W_q, W_k, _ = qkv_projections(X.shape[1], SEED)
    Q, K = X @ W_q, X @ W_k
    n, d = len(words), Q.shape[1]
    raw = np.array([[sum(Q[i, c] * K[j, c] for c in range(d)) / math.sqrt(d) for j in range(n)] for i in range(n)])
    masked = np.array([[raw[i, j] if j <= i else -np.inf for j in range(n)] for i in range(n)])

    def softmax(row):
        top = max(v for v in row if v != -np.inf)
        e = [math.exp(v - top) if v != -np.inf else 0.0 for v in row]
        return [v / sum(e) for v in e]

    return words, masked, np.array([softmax(r) for r in masked]), np.array([softmax(r) for r in raw])


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_maps_titles_and_sentences_match_masked_attention(lang, glove):
    words, masked, causal, bidirectional = reference(glove)
    n = len(words)
    at = open_page("causal", lang)
    assert_clean(at)
    w = strings(lang)

    scores = figure(at, "causal_scores_fig")
    assert title_text(scores["layout"]) == w["causal.scores_title"]
    z = heatmap(scores)
    above = np.triu(np.ones((n, n), dtype=bool), k=1)
    assert np.isnan(z[above]).all() and not np.isnan(z[~above]).any(), "grey (masked) exactly above the diagonal"
    assert_attention_map(scores, np.where(above, np.nan, masked), words, words, lang, atol=1e-6)
    masked_count = find_sentence(texts(at), "causal.scores_caption", lang)
    assert int(masked_count["masked"]) == n * (n - 1) // 2 and number(masked_count["total"]) == n * n

    newest = find_sentence(texts(at), "causal.generation_caption", lang)  # default: every token generated
    assert int(newest["k"]) == n and newest["token"] == words[-1]
    sep = "、" if lang == "ja" else ", "
    pairs = [p.rsplit(" ", 1) for p in newest["weights"].split(sep)]
    assert [p[0] for p in pairs] == words
    np.testing.assert_allclose([number(p[1]) for p in pairs], causal[-1], atol=5e-5)
    first = find_sentence(texts(at), "causal.first_row", lang)
    assert number(first["value"]) == causal[0, 0] == 1.0

    at.radio(key="causal_predict").set_value(1).run()  # the two weight maps come after the prediction
    assert_clean(at)
    bi_fig, causal_fig = figure(at, "causal_bi_fig"), figure(at, "causal_causal_fig")
    assert title_text(bi_fig["layout"]) == w["causal.bi_title"]
    assert title_text(causal_fig["layout"]) == w["causal.causal_title"]
    assert_attention_map(bi_fig, bidirectional, words, words, lang)
    assert np.isnan(heatmap(causal_fig)[above]).all()
    assert_attention_map(causal_fig, np.where(above, np.nan, causal), words, words, lang)
