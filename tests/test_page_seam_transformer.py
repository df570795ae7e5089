"""Lesson 7 at its defaults, as shown, against what holds for any weights, computed here: the table's first rows are
GloVe's numbers (plus the sinusoidal encoding, written out from the paper's formula), the positional-encoding map
has positions as rows and dimensions as columns, every output row is layer-normalised, the shapes sentence follows
from n and d, and changing one token moves exactly one row through the feed-forward layer and every row through
attention, in both languages."""

import math

import numpy as np
import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.seam import figure, find_sentence, heatmap, number, strings, texts, title_text, y_title

WORDS = "the cat sat on the warm mat".split()  # the page's default text (transformer_text)


def encoding(n: int, d: int) -> np.ndarray:
    """PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(p / 10000^(2i/d)) (Vaswani et al. 2017)."""
    return np.array([[math.sin(p / 10000 ** (k / d)) if k % 2 == 0 else math.cos(p / 10000 ** ((k - 1) / d))
                      for k in range(d)] for p in range(n)])


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_block_table_output_and_locality_hold(lang, glove):
    w = strings(lang)
    n, X = len(WORDS), np.array([glove[x] for x in WORDS], dtype=np.float64)
    d = X.shape[1]
    at = open_page("transformer", lang)
    assert_clean(at)

    table = at.dataframe[0].value
    first = table[w["transformer.col_first"].format(token=WORDS[0])].tolist()
    steps = table[w["transformer.col_step"]].tolist()
    assert steps[:2] == [w["transformer.step_input"], w["transformer.step_with_pe"]]
    sep = "、" if lang == "ja" else ", "
    np.testing.assert_allclose([number(v) for v in first[0].split(sep)], X[0, :3], atol=5e-4)
    np.testing.assert_allclose([number(v) for v in first[1].split(sep)], X[0, :3] + encoding(1, 3)[0], atol=5e-4)
    assert table[w["transformer.col_shape"]].tolist()[0] == f"{n} × {d}"
    assert number(table[w["transformer.col_var"]].tolist()[0]) == pytest.approx(X[0].var(), abs=5e-5)

    shapes = find_sentence(texts(at), "transformer.shapes", lang)
    assert (int(shapes["n"]), int(shapes["d"]), int(shapes["h"])) == (n, d, 4 * d)

    out = figure(at, "transformer_out_fig")
    assert title_text(out["layout"]) == w["transformer.out_title"]
    assert title_text(out["layout"]["xaxis"]) == w["transformer.axis_dim"]
    assert y_title(out) == w["transformer.axis_token"]
    Y = heatmap(out)
    assert Y.shape == (n, d)
    np.testing.assert_allclose(Y.mean(axis=1), 0.0, atol=1e-6)
    np.testing.assert_allclose(Y.var(axis=1), 1.0, atol=1e-3)

    local = find_sentence(texts(at), "transformer.local_result", lang)
    j = (n + 1) // 2 - 1  # the default position to change
    assert int(local["j"]) == j and local["token"] == WORDS[j]
    assert (int(local["ffn"]), int(local["n"]), int(local["attn"])) == (1, n, n)
    assert number(local["others"]) == 0.0

    at.radio(key="transformer_predict").set_value(1).run()  # the encoding's map comes after the prediction
    assert_clean(at)
    pe = figure(at, "transformer_pe_fig")
    assert title_text(pe["layout"]["xaxis"]) == w["transformer.axis_dim"]
    assert y_title(pe) == w["transformer.axis_position"]
    np.testing.assert_allclose(heatmap(pe), encoding(n, d), atol=1e-6)
