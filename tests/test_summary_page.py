"""Lesson 9, the summary (AppTest): the page in both languages, every claim's numbers formatted in from the
computation and holding at the lessons' defaults, each claim with its one figure and the link to its lesson."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.causal import RANDOM_DIM, causal_vs_bidirectional, random_word_vectors
from attention_core.glove import embed, load_glove, split_known
from attention_core.glove.pretrained import candidates, two_way_rows
from attention_core.glove.pronouns import load_pronoun_dataset, pronoun_batch
from attention_core.glove.training import TrainSetting, head_rows, train_head
from attention_core.qkv import load_library, lookup
from attention_core.rnn import influence_profile
from attention_core.scaling import TABLE_KEYS, sweep_table
from attention_core.self_attention import load_self_attention, preset_heads
from attention_core.sentences import load_sentences
from attention_core.text import tokenize
from tests.apptest_utils import assert_clean, decode_array, open_page, plotly_figures
from tests.pages import page
from ui.shared.i18n import load_strings, sci
from ui.scaling import TABLE_SEED as SCALING_TABLE_SEED

pytestmark = pytest.mark.pages

PAGE = "summary"
CLAIMS = ("rnn", "qkv", "self_attention", "scaling", "causal", "glove", "gpt", "heads", "tiny_gpt")  # in lesson order
FURTHER = ("self_attention", "transformer", "pretrained")  # multi-head (3), positional encoding + FFN (7), lesson 8


@pytest.fixture(scope="module", autouse=True)
def heads_band():
    """Lesson 10's random-head band, waited for (start-up work, on disk after a machine's first server): until it is
    done its claim is said in words without a figure (tests/test_page_seam_summary_heads.py)."""
    from ui.heads import study

    return study.BAND.result()


@pytest.fixture(scope="module")
def kv():
    return load_glove()


@pytest.fixture(scope="module")
def facts(kv):
    """Every claim's numbers, computed here from attention_core at the lessons' defaults."""
    rnn_words = split_known(tokenize(next(s.text for s in load_sentences() if s.id == "long_memory")), kv)[0]
    profile = influence_profile(embed(rnn_words, kv)[0], 32, 0.9, 0)
    lib = load_library()
    found = lookup(lib.queries[0].vector, lib.keys, lib.values, lib.default_temperature)
    data = load_self_attention()
    table = sweep_table(SCALING_TABLE_SEED)
    words = tokenize(load_sentences()[0].text)
    causal = causal_vs_bidirectional(random_word_vectors(words, RANDOM_DIM, 0), 0)["causal"].weights
    dataset = load_pronoun_dataset()
    train, held = pronoun_batch(dataset.train, kv), pronoun_batch(dataset.held_out, kv)
    result = train_head(train, TrainSetting())
    choices = candidates(dataset.held_out)
    before = two_way_rows(head_rows(result.W_q_init, result.W_k_init, held, True), choices).mean()
    after = two_way_rows(head_rows(result.W_q, result.W_k, held, True), choices).mean()
    return dict(rnn_n=len(rnn_words), rnn_ratio=profile.rnn_norm[0] / profile.rnn_norm[-1], found=found, lib=lib,
                data=data, table=table, causal=causal, before=before, after=after, held=len(dataset.held_out))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_summary_draws_every_claim_with_its_figure(lang):
    at = open_page(PAGE, lang, timeout=300)
    assert_clean(at)
    figs = plotly_figures(at)
    assert len(figs) == len(CLAIMS)
    strings = load_strings(lang)
    shown = "\n".join(m.value for m in at.markdown)
    for section in CLAIMS:
        bold = strings[f"summary.claim_{section}"].split("**")[1]  # each claim's heading, e.g. "The causal mask."
        assert bold in shown, section
    for section in FURTHER:
        assert strings[f"summary.further_{section}"] in shown


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_each_claim_and_each_step_further_links_to_its_lesson(lang):
    at = open_page(PAGE, lang, timeout=300)
    links = [link.proto.page for link in at.get("page_link")]
    assert links == [page(section).url_path for section in CLAIMS + FURTHER]
    strings = load_strings(lang)
    labels = [link.proto.label for link in at.get("page_link")]
    assert all(strings[f"nav.{section}"] in label for section, label in zip(CLAIMS + FURTHER, labels))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_claims_numbers_come_from_the_computation_and_hold(lang, facts):
    at = open_page(PAGE, lang, timeout=300)
    text = "\n".join(m.value for m in at.markdown)
    f = facts
    # 1. one state -> retrieval: the first word's influence is a vanishing fraction of the last word's
    assert f["rnn_ratio"] < 1e-3 and sci(f["rnn_ratio"]) in text and f"{f['rnn_n']} " in text
    # 2. the default query's best book gets 78.9 %, and the answer draws on every book
    found = f["found"]
    assert f"{found.weights.max():.1%}" == "78.9%" and "78.9 %" in text  # (written with the locales' space)
    assert (found.weights > 0.01).all()
    # 3. n x n: the language's sentence, its pronoun -> its noun in the coreference head
    data = f["data"]
    preset = data.by_id(data.default_for(lang))
    coref = preset_heads(preset, data.rule_score)[0]
    n = len(preset.tokens)
    assert f"{n * n}" in text and f"{coref[preset.pronoun, preset.antecedent]:.1%}".replace("%", " %") in text
    assert int(coref[preset.pronoun].argmax()) == preset.antecedent
    # 4. sqrt(d): unscaled nearly one-hot at d = 1024, scaled near uniform, the unscaled gradient far smaller
    table = f["table"]
    unscaled, scaled = table["max_unscaled"][-1], table["max_scaled"][-1]
    assert unscaled > 0.9 and scaled < 0.3 and scaled < 4 / TABLE_KEYS
    assert table["jacobian_unscaled"][-1] < 0.2 * table["jacobian_scaled"][-1]  # "the gradient nearly vanishes"
    assert f"{unscaled:.3f}" in text and f"{scaled:.3f}" in text
    # 5. the causal mask: exactly 0 above the diagonal, the first token 100 % on itself
    W = f["causal"]
    assert (np.triu(W, k=1) == 0).all() and W[0, 0] == 1.0
    assert f"{n_above(W)} " in text and "100 %" in text
    # 6. learned: untrained at chance, trained far above it, on held-out sentences
    assert abs(f["before"] - 0.5) <= 0.1 and f["after"] >= 0.8
    assert f"{f['before']:.1%}".replace("%", " %") in text and f"{f['after']:.1%}".replace("%", " %") in text and f"{f['held']} " in text


def n_above(W) -> int:
    return int(np.triu(np.ones_like(W, dtype=bool), k=1).sum())


def test_the_figures_show_the_claims_numbers(facts):
    figs = plotly_figures(open_page(PAGE, "en", timeout=300))
    data = facts["data"]
    preset = data.by_id(data.default_for("en"))
    np.testing.assert_allclose(decode_array(figs[2]["data"][0]["z"]), preset_heads(preset, data.rule_score)[0],
                               atol=1e-12)
    bars = figs[5]["data"][0]
    np.testing.assert_allclose(decode_array(bars["y"]), [100 * facts["before"], 100 * facts["after"]], atol=1e-9)
