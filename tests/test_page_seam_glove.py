"""Lesson 6 at its defaults, as shown, against GloVe attention written out here: (a) the row of "it" with Q = K = the
raw 50-d vectors (bars in sentence order, the rank and weight of "animal", the top word), and (b) the rank the
sentence states for the seeded projection is the rank of "animal" among the drawn bars, in both languages."""

import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.seam import bar_labels, bar_values, figure, find_sentence, number, strings, texts, title_text

SENTENCES = Path(__file__).resolve().parent.parent / "data" / "sentences.toml"
QUERY, TARGET = "it", "animal"  # the page's defaults for the default sentence (glove_query, glove_target)


def raw_row(glove) -> tuple[list[str], list[float]]:
    """The default sentence's words and the row of "it": softmax over j of x_it · x_j / √50, by loops."""
    with SENTENCES.open("rb") as fh:
        text = tomllib.load(fh)["sentences"][0]["text"]
    words = re.findall(r"\w+", text.lower())
    X = [[float(v) for v in glove[w]] for w in words]
    q = X[words.index(QUERY)]
    scores = [sum(a * b for a, b in zip(q, x)) / math.sqrt(len(q)) for x in X]
    e = [math.exp(s - max(scores)) for s in scores]
    return words, [v / sum(e) for v in e]


def rank_of(values, index: int) -> int:
    """1 = the largest."""
    return 1 + sum(v > values[index] for v in values)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_raw_row_and_projected_rank_are_what_is_drawn(lang, glove):
    words, row = raw_row(glove)
    target = words.index(TARGET)
    w = strings(lang)
    at = open_page("glove", lang)
    assert_clean(at)

    b = find_sentence(texts(at), "glove.b_rank", lang)  # (b), above the fold: seeded projections
    projected = figure(at, "glove_projected_bars")
    assert title_text(projected["layout"]) == w["glove.bars_projected"].format(query=QUERY, seed=b["seed"],
                                                                                d_k=b["d_k"])
    assert (int(b["seed"]), int(b["d_k"])) == (0, 16)
    assert bar_labels(projected) == words
    drawn = bar_values(projected)
    np.testing.assert_allclose(sum(drawn), 1.0)
    assert b["target"] == TARGET and int(b["n"]) == len(words) and int(b["rank"]) == rank_of(drawn, target)

    at.radio(key="glove_predict").set_value(1).run()  # (a) comes after the prediction
    assert_clean(at)
    raw = figure(at, "glove_raw_bars")
    assert title_text(raw["layout"]) == w["glove.bars_raw"].format(query=QUERY)
    assert bar_labels(raw) == words
    np.testing.assert_allclose(bar_values(raw), row, rtol=1e-5)
    a = find_sentence(texts(at), "glove.a_rank", lang)
    top = int(np.argmax(row))
    assert (a["target"], a["query"], a["top"]) == (TARGET, QUERY, words[top])
    assert int(a["rank"]) == rank_of(row, target) and int(a["n"]) == len(words)
    assert number(a["weight"]) == pytest.approx(row[target], rel=5e-3)
    assert number(a["top_weight"]) == pytest.approx(row[top], rel=5e-3)
