"""Lesson 9's mask, the famous sentence, sinks and induction heads as the page shows them (AppTest, both languages)."""

from __future__ import annotations
import functools
import json
import re
import tomllib
from pathlib import Path
import numpy as np
import pytest
from attention_core import smollm2
from attention_core.smollm2 import model as gpt_model
from tests.apptest_utils import assert_clean, open_page
from ui.shared.i18n import load_strings
from tests.test_predictions import shown_before
from tests.test_gpt_page import DATA, PROMPT, answer_all, answered, custom, figure, full_pass, ids_of, shown, softmax, strings  # noqa: F401 - helpers and fixtures of that file
pytestmark = pytest.mark.pages


# --- the mask ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_mask_numbers_and_the_leak_test(lang):
    at = answered(lang)
    ids = ids_of(PROMPT)
    n = len(ids)
    attention = full_pass(ids).attention
    upper = sum(1 for i in range(n) for j in range(n) if j > i)
    zeros = sum(int(attention[layer, head, i, j] == 0.0) for layer in range(30) for head in range(9)
                for i in range(n) for j in range(i + 1, n))
    assert strings(lang)["zeros"].format(cells=f"{upper * 270:,}", zeros=f"{zeros:,}", maps=270) in shown(at)
    assert zeros == upper * 270  # held: every weight above the diagonal is exactly 0
    changed = ids[:-1] + (ids_of(" zebra")[0],)
    other = full_pass(changed)
    same_rows = np.array_equal(attention[..., : n - 1, :], other.attention[..., : n - 1, :])
    same_logits = np.array_equal(full_pass(ids).logits[: n - 1], other.logits[: n - 1])
    assert same_rows and same_logits  # the claim the page makes (and its question's answer)
    assert [m for m in shown(at) if m.count(strings(lang)["exactly_zero"]) == 2 and "zebra" in m]
    assert len(at.get("vega_lite_chart")) == 1


def test_the_leak_tests_second_pass_runs_only_for_a_learner_who_answered(monkeypatch):
    """The changed text's full pass (the experiment that settles the leak question) is not paid on every new prompt:
    it runs when the learner answers, once."""
    calls = []
    real = smollm2.forward

    def counting(weights, ids, all_logits=True):
        calls.append(tuple(int(i) for i in ids))
        return real(weights, ids, all_logits)

    monkeypatch.setattr(smollm2, "forward", counting)  # the package's name, as the page calls it
    monkeypatch.setattr(gpt_model, "forward", counting)  # and the module's, as the model's own functions call it
    text = "The leak test runs only when a learner asks for it, here"  # a prompt no other test or start-up reads
    at = custom(text)
    assert_clean(at)
    changed = ids_of(text)[:-1] + (ids_of(" zebra")[0],)
    assert tuple(ids_of(text)) in calls and changed not in calls
    at.radio(key="gpt_leak_predict").set_value(1).run()
    assert_clean(at)
    assert calls.count(changed) == 1
    assert [m for m in shown(at) if m.count(strings("en")["exactly_zero"]) == 2 and "zebra" in m]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_it_cannot_see_tired_or_wide_and_the_last_word_can(lang):
    at = answered(lang)
    first = "The animal didn't cross the street because it was too tired"
    a, b = full_pass(ids_of(first)), full_pass(ids_of(first[:-5] + "wide"))
    tokens = smollm2.default_model()[1].token_strings(list(ids_of(first)))
    it, animal, street = tokens.index("Ġit"), tokens.index("Ġanimal"), tokens.index("Ġstreet")
    assert np.array_equal(a.attention[..., it, :], b.attention[..., it, :])
    flips = sum(int((a.attention[layer, head, -1, animal] > a.attention[layer, head, -1, street])
                    != (b.attention[layer, head, -1, animal] > b.attention[layer, head, -1, street]))
                for layer in range(30) for head in range(9))
    growth = b.attention[:, :, -1, street] - a.attention[:, :, -1, street]
    layer, head = np.unravel_index(int(np.argmax(growth)), growth.shape)
    assert flips > 0
    line = [m for m in shown(at) if re.search(rf"\*\*(?:{flips} of 270|270 個中 {flips} 個)\*\*", m)]
    assert len(line) == 1
    assert len([m for m in shown(at) if f"L{layer}H{head}" in m and f"{b.attention[layer, head, -1, street]:.2f}" in m]) == 1


# --- sinks and induction heads -------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_sink_numbers(lang):
    at = answered(lang)
    attention = full_pass(ids_of(PROMPT)).attention
    n = attention.shape[-1]
    per_head = np.array([[np.mean([attention[layer, head, i, 0] for i in range(1, n)]) for head in range(9)]
                         for layer in range(30)])
    even = np.mean([1 / (i + 1) for i in range(1, n)])
    line = [m for m in shown(at) if f"**{per_head.mean():.0%}**" in m and f"{int((per_head > 0.5).sum())}" in m]
    assert len(line) == 1 and f"{even:.0%}" in line[0]
    assert per_head.mean() > 2 * even  # held: the sink the page explains is there at the defaults


@functools.lru_cache(maxsize=None)
def repeated_study():
    """The page's repeated random sequences, measured here with loops: the head picked on the picking set, its score
    on the scoring set, and the mean loss per token on each copy of the scoring set."""
    from attention_core.gpt_studies.heads import induction_sets

    sets = induction_sets(count=8, length=20)

    def scores(seqs):
        out = []
        for seq in seqs:
            att = full_pass(tuple(int(i) for i in seq)).attention
            out.append(np.mean([att[:, :, 20 + j, j + 1] for j in range(20)], axis=0))
        return np.array(out)

    picking, scoring = scores(sets.picking), scores(sets.scoring)
    layer, head = np.unravel_index(int(np.argmax(picking.mean(axis=0))), (30, 9))

    def losses(seq):
        logits = full_pass(tuple(int(i) for i in seq)).logits
        nll = [-np.log(softmax(logits[i])[seq[i + 1]]) for i in range(len(seq) - 1)]
        return np.mean(nll[0:19]), np.mean(nll[20:39])

    first, second = np.mean([losses(s) for s in sets.scoring], axis=0)
    return f"L{layer}H{head}", scoring[:, layer, head].mean(), first, second


def test_induction_heads_picked_on_one_set_and_scored_on_the_other():
    at = answered("en")
    head, score, first, second = repeated_study()
    assert len([m for m in shown(at) if f"**{head}**" in m and f"**{score:.2f}**" in m]) == 1
    assert second < first / 2  # held: the second copy is predicted far better
    assert [m for m in shown(at) if f"**{first:.1f}**" in m and f"**{second:.1f}**" in m]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_summary_states_the_induction_claim_with_the_same_numbers(lang):
    at = open_page("summary", lang, timeout=600)
    assert_clean(at)
    head, score, first, second = repeated_study()
    heading = load_strings(lang)["summary.claim_gpt"].split("**")[1]  # (lesson 10's claim names the model too)
    claim = [m.value for m in at.markdown if heading in m.value]
    assert len(claim) == 1 and all(v in claim[0] for v in (head, f"{score:.2f}", f"{first:.1f}", f"{second:.1f}"))
    assert any(el.proto.id.endswith("-summary_gpt") for el in at.get("plotly_chart"))


def test_the_learners_own_name_is_copied():
    at = answered("en")
    template = tomllib.loads(DATA.read_text(encoding="utf-8"))["copy"]
    ids = ids_of(template["template"].replace("{name}", template["default_name"]))
    piece = ids_of(" " + template["default_name"])
    second = [i for i in range(len(ids)) if ids[i:i + len(piece)] == piece][1]
    logits = full_pass(ids).logits
    probs = [softmax(logits[second + k - 1])[piece[k]] for k in range(1, len(piece))]
    table = [df.value for df in at.dataframe if "probability, second time" in df.value.columns][0]
    np.testing.assert_allclose(table["probability, second time"], probs, atol=1e-4)


def test_the_cache_size_follows_the_models_shapes_and_the_timing_is_measured():
    at = answer_all(open_page("gpt", timeout=600))
    n = len(ids_of(PROMPT))
    per_token = 2 * 30 * 3 * 64 * 4  # keys and values, layers, key/value heads, head size, float32
    assert [m for m in shown(at) if f"**{per_token * n / 1e3:.1f} kB**" in m]
    import gguf
    from attention_core.smollm2.weights import gguf_path

    params = sum(int(np.prod([int(d) for d in x.shape])) for x in gguf.GGUFReader(str(gguf_path())).tensors)
    full, weights = per_token * 8192, 4 * params  # the cache at the model's full context; the float32 weights
    line = [m for m in shown(at) if f"**{full / 1e6:,.0f} MB**" in m]
    assert len(line) == 1 and f"**{full / weights:.0%}**" in line[0] and f"{weights / per_token:,.0f} tokens" in line[0]
    assert f"{40 * full / 1e9:,.1f} GB" in line[0]
    assert 0.5 < full / weights < 1  # held: at the full context the cache is most of the weights' size (option 3)
    at.button(key="gpt_cache_measure").click().run()
    assert_clean(at)
    assert figure(at, "gpt_cache_bars")
    assert strings("en")["cache_same"] in shown(at)

