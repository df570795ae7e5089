"""Lesson 8's claims at the defaults, each expectation computed here independently: token positions and plain loops
over the model's attention (attention_maps), the sentence sets read from data/pretrained.toml with tomllib, the
tokenizers library for the vocabulary, then compared with what the page says."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from attention_core.pretrained import attention_maps, model_dir, untrained_twin
from tests.test_pretrained_page import answer, open_lesson, strings

ROOT = Path(__file__).resolve().parent.parent
DATA = tomllib.loads((ROOT / "data" / "pretrained.toml").read_text(encoding="utf-8"))
FAMOUS = DATA["presets"][0]["text"]
WIDE = DATA["winograd"][0]["sentences"][1]


def positions(tokens, *words):
    """The token index of each word (each a single token of the sentence, checked)."""
    out = []
    for word in words:
        assert tokens.count(word.lower()) == 1, (word, tokens)
        out.append(tokens.index(word.lower()))
    return out


@pytest.fixture(scope="module")
def famous():
    tokens, weights = attention_maps(FAMOUS)
    it, animal, street = positions(tokens, "it", "animal", "street")
    return tokens, np.asarray(weights, dtype=np.float64), it, animal, street


@pytest.fixture(scope="module")
def page():
    return answer(open_lesson())


def featured_head(famous):
    _, w, it, animal, _ = famous
    link = w[:, :, it, animal]
    return np.unravel_index(int(np.argmax(link)), link.shape), float(link.max())


def text_of(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [s.value for s in at.success]
                     + [w.value for w in at.warning])


def test_the_famous_sentence_comes_first():
    assert FAMOUS == "The animal did not cross the street because it was too tired"
    at = open_lesson()
    assert at.selectbox(key="pretrained_preset").value == "0"
    assert "the · animal · did · not · cross" in at.caption[1].value


def test_sink_share_and_count_are_the_measured_ones(famous):
    tokens, w, *_ = famous
    share = w[:, :, 1:len(tokens) - 1, 0].mean(axis=-1)  # every word's row (one token per word here) on [CLS]
    at = open_lesson()
    said = [m.value for m in at.markdown if "[CLS]" in m.value and "**" in m.value][0]
    assert f"**{share.mean():.0%}**" in said
    assert f"**{int((share > 0.5).sum())} of {share.size}**" in said
    assert share.mean() > 0.3  # "where the weight goes": a large share, worth a switch


def test_hiding_keeps_the_order_of_the_other_weights(famous):
    _, w, *_ = famous
    rest = w[..., 1:-1]
    renormalised = rest / rest.sum(axis=-1, keepdims=True)
    np.testing.assert_array_equal(np.argsort(rest, axis=-1, kind="stable"),
                                  np.argsort(renormalised, axis=-1, kind="stable"))
    np.testing.assert_allclose(renormalised.sum(axis=-1), 1.0)


def test_first_question_some_head_links_it_to_animal_strongly(famous):
    (layer, head), weight = featured_head(famous)
    assert weight > 0.5  # option 1 of the question is right
    at = open_lesson()
    at.radio(key="pretrained_predict").set_value(1).run()
    assert strings("en")["link"]["predict_why"] in at.success[0].value
    assert f"in L{layer}H{head}, “it” gives “animal” **{weight:.0%}**" in text_of(at)


def test_the_untrained_twin_links_it_to_animal_weakly(famous):
    _, _, it, animal, _ = famous
    _, twin = attention_maps(FAMOUS, untrained_twin(0))
    assert twin[:, :, it, animal].max() < 0.2  # as the page's option 3 describes untrained heads


def test_second_question_the_head_does_not_switch_to_street(famous):
    (layer, head), _ = featured_head(famous)
    tokens, wide = attention_maps(WIDE)
    it, animal, street = positions(tokens, "it", "animal", "street")
    assert wide[layer, head, it, animal] > wide[layer, head, it, street]  # option 2 ("No") is right
    at = open_lesson()
    at.radio(key="pretrained_predict").set_value(1).run()
    at.radio(key="pretrained_switch_predict").set_value(2).run()
    assert strings("en")["switch"]["predict_why"] in at.success[-1].value


def _winograd_right():
    """(P, 2, L, H) True where a head gives the right candidate more weight than the wrong one."""
    right = []
    for pair in DATA["winograd"]:
        both = []
        for s, sentence in enumerate(pair["sentences"]):
            tokens, w = attention_maps(sentence)
            pronoun, *cands = positions(tokens, pair["pronoun"], *pair["candidates"])
            good = pair["candidates"].index(pair["answers"][s])
            both.append(w[:, :, pronoun, cands[good]] > w[:, :, pronoun, cands[1 - good]])
        right.append(both)
    return np.array(right)


def test_winograd_numbers_and_verdict(page):
    right = _winograd_right()
    accuracy = right.mean(axis=(0, 1))
    even = np.arange(len(right)) % 2 == 0
    picked = np.unravel_index(int(np.argmax(right[even].mean(axis=(0, 1)))), accuracy.shape)
    held = right[~even].mean(axis=(0, 1))[picked]
    best = np.unravel_index(int(np.argmax(accuracy)), accuracy.shape)
    said = text_of(page)
    assert f"best head L{best[0]}H{best[1]} with **{accuracy.max():.0%}**" in said
    assert f"mean over heads **{accuracy.mean():.0%}**" in said
    assert f"({f'L{picked[0]}H{picked[1]}'}) scores **{held:.0%}**" in said
    assert held < 0.75 and abs(accuracy.mean() - 0.5) < 0.05  # the page's verdict: not beyond chance
    assert strings("en")["does_not_resolve"] in said


def test_flips_between_tired_and_wide(famous, page):
    _, w, it, animal, street = famous
    _, wide = attention_maps(WIDE)
    prefer = lambda a: a[:, :, it, street] > a[:, :, it, animal]  # noqa: E731 (same token positions in both)
    flips = prefer(w) != prefer(wide)
    assert f"**{int(flips.sum())} of 72**" in text_of(page)
    assert flips.sum() < 36  # most heads keep their noun


def test_the_featured_head_is_the_it_to_first_noun_head(famous):
    """The verdict says the famous head points at the first noun: it is the best head of that kind."""
    (layer, head), _ = featured_head(famous)
    link = []
    for sentence in DATA["kinds"]["it_first_noun"]["sentences"]:
        tokens, w = attention_maps(sentence["text"])
        (source, target), = sentence["pairs"]
        link.append(w[:, :, source + 1, target + 1])  # word k is token k + 1 (after [CLS]); one token per word
    mean = np.mean(link, axis=0)
    assert np.unravel_index(int(np.argmax(mean)), mean.shape) == (layer, head)


def _kind_best(kind: str, model=None) -> float:
    scores = []
    for sentence in DATA["kinds"][kind]["sentences"]:
        tokens, w = attention_maps(sentence["text"], model)
        if kind == "sink":
            scores.extend(w[:, :, 1:len(tokens) - 1, 0].transpose(2, 0, 1))
        else:
            scores.extend(w[:, :, s + 1, t + 1] for s, t in sentence["pairs"])
    return float(np.mean(scores, axis=0).max())


def test_every_kind_beats_the_untrained_twin_by_the_ratio_said(page):
    twin = untrained_twin(0)
    ratios = [_kind_best(kind) / _kind_best(kind, twin) for kind in DATA["kinds"]]
    assert min(ratios) > 1
    assert f"at least {min(ratios):.1f} times" in text_of(page)


def test_the_vocabulary_has_no_japanese_words():
    from tokenizers import Tokenizer

    vocabulary = (model_dir() / "vocab.txt").read_text(encoding="utf-8").split("\n")
    japanese = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
    assert [w for w in vocabulary if len(japanese.findall(w)) >= 2] == []  # single characters only, no words
    reference = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    reference.no_padding()
    assert reference.encode("猫").tokens == ["[CLS]", "[UNK]", "[SEP]"]
    assert reference.encode("だった").tokens == ["[CLS]", "た", "##っ", "##た", "[SEP]"]  # accent stripping: だ -> た
