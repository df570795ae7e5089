"""Lesson 2 at its defaults, as shown at each step, against data/qkv.toml computed here with plain loops: the query
and key map's rows and columns, each book's dot product and score, the shares and the best book, and the blended
output with its two limits, in both languages."""

import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.seam import bar_labels, bar_values, figure, find_sentence, find_sentences, heatmap, number, strings, texts, title_text

DATA = Path(__file__).resolve().parent.parent / "data" / "qkv.toml"


def library():
    with DATA.open("rb") as fh:
        return tomllib.load(fh)


def reference():
    """(query, dots, scores, weights, output) of the default question at the default temperature."""
    lib = library()
    q, tau = lib["queries"][0]["vector"], lib["default_temperature"]
    dots = [sum(a * b for a, b in zip(q, book["key"])) for book in lib["books"]]
    scores = [d / tau for d in dots]
    e = [math.exp(s) for s in scores]
    weights = [v / sum(e) for v in e]
    output = [sum(w * book["value"][c] for w, book in zip(weights, lib["books"])) for c in range(3)]
    return q, dots, scores, weights, output


def vector(text: str) -> list[float]:
    return [number(v) for v in text.strip("() ").split(",")]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_each_step_shows_the_books_numbers(lang):
    lib, w = library(), strings(lang)
    titles = [b["title"][lang] for b in lib["books"]]
    q, dots, scores, weights, output = reference()
    best = int(np.argmax(weights))
    at = open_page("qkv", lang)
    assert_clean(at)

    keys = figure(at, "qkv_keys")  # step 0: rows = the query then each book's key, columns = the features
    assert title_text(keys["layout"]) == w["qkv.keys_title"]
    assert keys["layout"]["yaxis"]["ticktext"] == [w["qkv.query_row"], *titles]
    assert keys["layout"]["xaxis"]["ticktext"] == [f["name"][lang] for f in lib["features"]]
    assert title_text(keys["layout"]["xaxis"]) == w["qkv.feature"]
    np.testing.assert_allclose(heatmap(keys), [q, *[b["key"] for b in lib["books"]]])

    at.button_group(key="qkv_step").set_value(1).run()
    assert_clean(at)
    lines = find_sentences(texts(at), "qkv.dot_line", lang)
    assert [line["title"] for line in lines] == titles
    np.testing.assert_allclose([number(line["dot"]) for line in lines], dots, atol=0.005)
    np.testing.assert_allclose([number(line["score"].strip("*")) for line in lines], scores, atol=0.005)
    fig = figure(at, "qkv_scores")
    assert title_text(fig["layout"]) == w["qkv.scores_title"] and bar_labels(fig) == titles
    np.testing.assert_allclose(bar_values(fig), scores)

    at.button_group(key="qkv_step").set_value(2).run()
    assert_clean(at)
    fig = figure(at, "qkv_weights")
    assert title_text(fig["layout"]) == w["qkv.weights_title"] and bar_labels(fig) == titles
    np.testing.assert_allclose(bar_values(fig), [100 * x for x in weights], atol=1e-7)  # drawn in %
    caption = find_sentence(texts(at), "qkv.weights_caption", lang)
    sep = "、" if lang == "ja" else ", "
    shares = [part.rsplit(" ", 2) for part in caption["shares"].split(sep)]
    assert [s[0] for s in shares] == titles
    np.testing.assert_allclose([number(s[1]) for s in shares], [100 * x for x in weights], atol=0.05)
    assert number(caption["total"]) == 100.0
    top = find_sentence(texts(at), "qkv.top_line", lang)
    assert int(top["number"]) == best + 1 and top["title"] == titles[best]
    assert abs(number(top["share"]) - 100 * weights[best]) <= 0.05

    at.button_group(key="qkv_step").set_value(3).run()
    at.radio(key="qkv_predict").set_value(3).run()
    assert_clean(at)
    plane = find_sentence(texts(at), "qkv.plane_caption", lang)
    np.testing.assert_allclose(vector(plane["rgb"]), output, atol=0.05)
    np.testing.assert_allclose(vector(plane["cold"]), lib["books"][best]["value"], atol=0.05)
    mean = [sum(b["value"][c] for b in lib["books"]) / len(lib["books"]) for c in range(3)]
    np.testing.assert_allclose(vector(plane["hot"]), mean, atol=0.05)

