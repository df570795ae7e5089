"""Lesson 8's claims at the defaults, each expectation computed here independently: token positions and plain loops
over the model's attention (attention_maps), the sentence sets read from data/pretrained.toml with tomllib, the
tokenizers library for the vocabulary, then compared with what the page says."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from scipy.stats import binomtest

from attention_core.pretrained import build_untrained_copy, model_dir, read_text, word_spans
from tests.test_pretrained_page import answer, attention_maps as maps, open_lesson, strings

ROOT = Path(__file__).resolve().parent.parent
DATA = tomllib.loads((ROOT / "data" / "pretrained.toml").read_text(encoding="utf-8"))
PRONOUNS = tomllib.loads((ROOT / "data" / "pretrained_pronouns.toml").read_text(encoding="utf-8"))
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
    tokens, weights = maps(FAMOUS)
    it, animal, street = positions(tokens, "it", "animal", "street")
    return tokens, np.asarray(weights, dtype=np.float64), it, animal, street


@pytest.fixture(scope="module")
def page():
    return answer(open_lesson())


def attention_maps_tokens(text):
    return read_text(text).token_texts


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
    assert [c.value for c in at.caption if "the · animal · did · not · cross" in c.value]  # the tokens read


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


def test_the_untrained_copy_links_it_to_animal_weakly(famous, untrained):
    _, _, it, animal, _ = famous
    _, copy = maps(FAMOUS, untrained)
    link = copy[:, :, it, animal]
    assert link.max() < 0.2  # as the page's option 3 describes untrained heads
    layer, head = np.unravel_index(int(np.argmax(link)), link.shape)
    at = open_lesson()
    at.radio(key="pretrained_predict").set_value(1).run()
    assert f"does at most {link.max():.0%} (L{layer}H{head})" in text_of(at)


def test_second_question_the_head_does_not_switch_to_street(famous):
    (layer, head), _ = featured_head(famous)
    tokens, wide = maps(WIDE)
    it, animal, street = positions(tokens, "it", "animal", "street")
    assert wide[layer, head, it, animal] > wide[layer, head, it, street]  # option 2 ("No") is right
    at = open_lesson()
    at.radio(key="pretrained_predict").set_value(1).run()
    at.radio(key="pretrained_switch_predict").set_value(2).run()
    assert strings("en")["switch"]["predict_why"] in at.success[-1].value
    _, w, *_ = famous
    tired_it, tired_animal, tired_street = positions(attention_maps_tokens(FAMOUS), "it", "animal", "street")
    said = text_of(at)
    assert (f"with “tired”, animal {w[layer, head, tired_it, tired_animal]:.0%} and street "
            f"{w[layer, head, tired_it, tired_street]:.0%}; with “wide”, animal "
            f"{wide[layer, head, it, animal]:.0%} and street {wide[layer, head, it, street]:.0%}") in said


def test_flips_between_tired_and_wide(famous, page):
    _, w, it, animal, street = famous
    _, wide = maps(WIDE)
    prefer = lambda a: a[:, :, it, street] > a[:, :, it, animal]  # noqa: E731 (same token positions in both)
    flips = prefer(w) != prefer(wide)
    largest = max(w[:, :, it, [animal, street]].max(axis=-1)[flips].max(),
                  wide[:, :, it, [animal, street]].max(axis=-1)[flips].max())
    said = text_of(page)
    assert f"**{int(flips.sum())} of 72**" in said and f"gives either noun more than {largest:.0%}" in said
    assert flips.sum() < 36  # most heads keep their noun


def right_wrong(pairs, model=None):
    """pairs from the toml (sentences, candidates, answers, pronoun or the differing word) -> (P, 2, L, H) margins."""
    out = []
    for pair in pairs:
        a, b = (s.split() for s in pair["sentences"])
        pronouns = [pair["pronoun"]] * 2 if "pronoun" in pair else next([x, y] for x, y in zip(a, b) if x != y)
        both = []
        for s, sentence in enumerate(pair["sentences"]):
            tokens, w = maps(sentence, model)
            pronoun, *cands = positions(tokens, pronouns[s], *pair["candidates"])
            good = pair["candidates"].index(pair["answers"][s])
            both.append(w[:, :, pronoun, cands[good]] - w[:, :, pronoun, cands[1 - good]])
        out.append(both)
    return np.array(out, dtype=np.float64)


def wilson(k, n):
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return f"{ci.low:.0%}–{ci.high:.0%}"


def chance_of_best(margins, seed=0, draws=5000):
    """The best head's sentence share under random per-pair answer flips, the heads' correlations kept."""
    signed = (np.sign(margins[:, 0]) + np.sign(margins[:, 1])) / 2  # (P, L, H)
    flips = np.random.default_rng(seed).choice(np.array([-1.0, 1.0]), size=(draws, margins.shape[0]))
    best = np.array([(1 + np.einsum("p,plh->lh", f, signed) / margins.shape[0]).max() / 2 for f in flips])
    return best


def held_out(margins):
    """Pick on pairs 0, 2, 4, ... by sentence accuracy, count right sentences on the others."""
    right = (margins > 0).sum(axis=1)  # (P, L, H)
    pick, score = right[::2].sum(axis=0), right[1::2].sum(axis=0)
    head = np.unravel_index(int(np.argmax(pick)), pick.shape)
    return head, int(pick[head]), int(score[head]), 2 * len(right[1::2])


@pytest.fixture(scope="module")
def untrained():
    return build_untrained_copy(0)


def test_winograd_numbers_chance_and_verdict(page, untrained):
    margins = right_wrong(DATA["winograd"])
    right = (margins > 0).sum(axis=(0, 1))
    n = 2 * len(margins)
    best = np.unravel_index(int(np.argmax(right)), right.shape)
    chance = chance_of_best(margins)
    p = float(np.mean(chance >= right.max() / n - 1e-12))
    head, pick_k, held_k, held_n = held_out(margins)
    said = text_of(page)
    assert f"L{best[0]}H{best[1]}, gets **{right[best]} of {n}** ({right[best] / n:.0%}, 95 % interval " \
           f"{wilson(int(right[best]), n)})" in said
    assert f"the best head gets {chance.mean():.0%} on average (95th percentile {np.quantile(chance, 0.95):.0%}); " \
           f"p {p:.2f}" in said
    assert f"(L{head[0]}H{head[1]}, {pick_k} of {held_n} there), a head gets **{held_k} of {held_n}**" in said
    assert f"({held_k / held_n:.0%}, 95 % interval {wilson(held_k, held_n)})" in said
    control = held_out(right_wrong(DATA["winograd"], untrained))
    assert f"the untrained copy's, {control[2]} of {control[3]}." in said
    assert p > 0.05 and binomtest(held_k, held_n).proportion_ci(method="wilson").low < 0.5  # at chance
    assert strings("en")["verdict_chance"].format(pairs=len(margins), heads=72) in said
    # why most cells are 50 %: a head preferring the same noun in both sentences of a pair gets one of two right
    same = int(((np.sign(margins[:, 0]) + np.sign(margins[:, 1])) == 0).all(axis=0).sum())
    half = int((right == len(margins)).sum())
    assert f"{same} of 72 heads do that in every pair, and {half} of 72 cells are exactly 50 %" in said
    assert half >= 30  # "most cells read 50 %": the map is dominated by them


def test_agreement_heads_follow_grammar_held_out(page, untrained):
    pairs = PRONOUNS["agreement"]
    margins = right_wrong(pairs)
    head, pick_k, held_k, held_n = held_out(margins)
    said = text_of(page)
    assert f"Picked on {len(pairs[::2])} pairs, L{head[0]}H{head[1]} gives the name that agrees with the pronoun " \
           f"more weight in **{held_k} of {held_n}** sentences" in said
    assert f"({held_k / held_n:.0%}, 95 % interval {wilson(held_k, held_n)})" in said
    assert binomtest(held_k, held_n).proportion_ci(method="wilson").low > 0.6  # "these heads follow grammar"
    right = (margins > 0).sum(axis=(0, 1))
    chance = chance_of_best(margins)
    assert right.max() / (2 * len(pairs)) > np.quantile(chance, 0.95)
    control = held_out(right_wrong(pairs, untrained))
    assert f"The untrained copy's head picked the same way: {control[2]} of {control[3]}." in said


def test_the_it_head_is_described_by_what_holds_out(famous, page):
    (layer, head), _ = featured_head(famous)
    counts = {"ref": 0, "first": 0, "subj": 0}
    items = PRONOUNS["it_referent"]
    for item in items:
        tokens, w = maps(item["text"])
        it, *cands = positions(tokens, "it", *item["candidates"])
        row = w[layer, head, it]
        prefers = 0 if row[cands[0]] > row[cands[1]] else 1
        counts["ref"] += prefers == item["candidates"].index(item["answer"])
        counts["first"] += prefers == 0
        counts["subj"] += prefers == item["candidates"].index(item["subject"])
    n = len(items)
    said = text_of(page)
    assert f"in **{counts['ref']} of {n}** ({counts['ref'] / n:.0%}, 95 % interval {wilson(counts['ref'], n)})" in said
    assert f"to the first noun in {counts['first']} of {n} ({wilson(counts['first'], n)})" in said
    assert f"to the subject in {counts['subj']} of {n} ({wilson(counts['subj'], n)})" in said
    assert counts["first"] / n < 0.75  # "it is not a first-noun head"
    persons = sum("person" in item for item in items)
    rest = [item for item in items if "person" not in item]
    assert f"in {persons} of {n} the other noun is a person" in said
    assert f"in {sum(i['subject'] == i['answer'] for i in rest)} of the other {len(rest)} the referent is also " \
           "the subject" in said
    assert persons + sum(i["subject"] == i["answer"] for i in rest) > n / 2  # "grammar alone settles most"


def test_the_cls_state_is_nearly_the_same_in_two_different_sentences(page):
    from attention_core.pretrained import encoder_forward, load_model

    model = load_model()
    first, last = DATA["presets"][0]["text"], DATA["presets"][-1]["text"]
    states = [encoder_forward(model.weights, [t.id for t in read_text(text).tokens]).hidden[:-1, 0].astype(float)
              for text in (first, last)]
    cosine = [float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)) for a, b in zip(*states)]
    assert f"its cosine is at least **{min(cosine):.4f}** at the input of each of the 6 layers" in text_of(page)
    assert min(cosine) > 0.999  # "nearly the same whatever the sentence"


def test_the_catalogue_rows_are_held_out_scores(page, untrained):
    table = page.table[-1].value  # the catalogue wraps to the column (st.table in every mode)
    rows = dict(zip(table["kind of head"], table.to_dict("records")))
    # subject -> verb: sentences 0, 2, 4, ... pick; a pair is right when the verb gets the most weight of the words
    for kind, label in (("subject_verb", "subject → verb"), ("determiner_noun", "determiner → noun")):
        for model, column in ((None, "trained"), (untrained, "untrained")):
            pick, score, rule, n = np.zeros((6, 12)), np.zeros((6, 12)), 0, 0
            for s, sentence in enumerate(DATA["kinds"][kind]["sentences"]):
                words = word_spans(sentence["text"])
                _, w = maps(sentence["text"], model)
                for source, target in sentence["pairs"]:
                    src = words[source]
                    to = np.stack([w[:, :, src.first:src.stop, word.first:word.stop].sum(-1).mean(-1)
                                   for k, word in enumerate(words) if k != source], axis=-1)
                    others = [k for k in range(len(words)) if k != source]
                    hit = to.argmax(axis=-1) == others.index(target)
                    if s % 2 == 0:
                        pick += hit
                    else:
                        score += hit
                        n += 1
                        rule += source + 1 == target
            head = np.unravel_index(int(np.argmax(pick)), pick.shape)
            k = int(score[head])
            row = rows[label]
            if column == "trained":
                assert row["head picked on one half"] == f"L{head[0]}H{head[1]}"
                assert row["held-out score"] == f"{k} / {n} ({k / n:.0%})" and row["95 % interval"] == wilson(k, n)
                assert row["positional rule (held out)"] == f"the next word: {rule} / {n} ({rule / n:.0%})"
            else:
                assert row["untrained copy (held out)"] == f"L{head[0]}H{head[1]}: {k} / {n} ({k / n:.0%})"
    assert rows["previous token"]["head picked on one half"] == "L0H2"
    head, _, k, n = held_out(right_wrong(PRONOUNS["agreement"]))
    row = rows["pronoun → the name that agrees (minimal pairs)"]
    assert row["head picked on one half"] == f"L{head[0]}H{head[1]}"
    assert row["held-out score"] == f"{k} / {n} ({k / n:.0%})"
    assert row["positional rule (held out)"] == f"the first noun: {n // 2} / {n} (50%)"  # balanced by construction
    # "it": within each group (answer first?, subject first?) in file order, every other sentence picks
    items = PRONOUNS["it_referent"]
    groups = [(i["answer"] == i["candidates"][0], i["subject"] == i["candidates"][0]) for i in items]
    pick_idx = [i for i in range(len(items)) if groups[:i].count(groups[i]) % 2 == 0]
    hits = []
    for item in items:
        tokens, w = maps(item["text"])
        it, *cands = positions(tokens, "it", *item["candidates"])
        good = item["candidates"].index(item["answer"])
        hits.append(w[:, :, it, cands[good]] > w[:, :, it, cands[1 - good]])
    hits = np.array(hits)
    picked = hits[pick_idx].sum(axis=0)
    head = np.unravel_index(int(np.argmax(picked)), picked.shape)
    score_idx = [i for i in range(len(items)) if i not in pick_idx]
    k, n = int(hits[score_idx][:, head[0], head[1]].sum()), len(score_idx)
    row = rows["“it” → its referent"]
    assert row["head picked on one half"] == f"L{head[0]}H{head[1]}"
    assert row["held-out score"] == f"{k} / {n} ({k / n:.0%})"
    first = sum(items[i]["answer"] == items[i]["candidates"][0] for i in score_idx)
    assert row["positional rule (held out)"] == f"the first noun: {first} / {n} ({first / n:.0%})"


def test_the_previous_token_head_puts_nearly_all_weight_on_the_previous_token():
    weights = []
    for sentence in DATA["kinds"]["previous_token"]["sentences"]:
        _, w = maps(sentence["text"])
        weights += [w[0, 2, s + 1, t + 1] for s, t in sentence["pairs"]]  # one token per word, after [CLS]
    assert min(weights) > 0.9 and np.mean(weights) > 0.99  # the model view's caption: "nearly all of its weight"


def test_the_vocabulary_has_no_japanese_words():
    from tokenizers import Tokenizer

    vocabulary = (model_dir() / "vocab.txt").read_text(encoding="utf-8").split("\n")
    japanese = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
    assert [w for w in vocabulary if len(japanese.findall(w)) >= 2] == []  # single characters only, no words
    reference = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    reference.no_padding()
    assert reference.encode("猫").tokens == ["[CLS]", "[UNK]", "[SEP]"]
    assert reference.encode("だった").tokens == ["[CLS]", "た", "##っ", "##た", "[SEP]"]  # accent stripping: だ -> た


def test_the_summary_carries_lesson_8s_result_with_its_live_figures():
    from tests.apptest_utils import open_page

    agreement, winograd = right_wrong(PRONOUNS["agreement"]), right_wrong(DATA["winograd"])
    _, _, agr_k, agr_n = held_out(agreement)
    _, _, wino_k, wino_n = held_out(winograd)
    at = open_page("summary", "en", timeout=300)
    said = "\n".join(m.value for m in at.markdown)
    assert f"gives the name that agrees more weight in **{agr_k} of {agr_n}** sentences" in said
    assert f"a head picked the same way gets **{wino_k} of {wino_n}**, no better than chance" in said
    assert binomtest(agr_k, agr_n).proportion_ci(method="wilson").low > 0.5  # "follow grammar"
    low, high = binomtest(wino_k, wino_n).proportion_ci(method="wilson")
    assert low < 0.5 < high  # "no better than chance"
