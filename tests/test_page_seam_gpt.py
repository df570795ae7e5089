"""Lesson 9 at its defaults, as shown, against computations made here: the next-token bars against a separately
written float64 SmolLM2 (tests/reference_gpt.py) on the `tokenizers` library's ids, at temperature 1 and 0.5; the
tokens a generation at temperature 0.5 lists, each with the probability it had; the sink profile (trained and
untrained copy) by loops; the induction study's loss bars, picked head and its score, from the model's passes with
the losses and scores computed here. Each series is checked under its name, and each name for its meaning in both
languages ("trained" is the trained model's), so a swapped series, a swapped label or a temperature applied in the
wrong place fails the fast loop."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from tests import reference_gpt
from tests.apptest_utils import assert_clean, decode_array, open_page
from tests.seam import figure, find_sentence, number, strings, texts

gpt_weights = pytest.importorskip("attention_core.smollm2.weights")
try:
    GGUF = gpt_weights.gguf_path()
except gpt_weights.GPTUnavailable as missing:
    pytest.skip(f"the model package is absent: {missing}", allow_module_level=True)
tokenizers = pytest.importorskip("tokenizers", reason="the reference tokenizer (requirements-fast.txt) is absent")

from attention_core import smollm2  # noqa: E402 - after the skips: the model's passes the study is made of
from attention_core.gpt_studies import heads  # noqa: E402 - only the study's input sequences are taken from here

PROMPT = "The capital of France is"  # the page's first preset
QUESTIONS = ("gpt_next_predict", "gpt_leak_predict", "gpt_it_predict", "gpt_sink_predict", "gpt_induction_predict",
             "gpt_cache_predict")
SEQUENCES, PERIOD = 8, 20  # the study's two sets of repeated random sequences (ui/gpt/study.py)
# What each language calls the trained model and its untrained copy: fixed here, not read from the page's own labels
MEANING = {"en": ("trained", "untrained"), "ja": ("学習済み", "未学習")}


@functools.cache
def reference_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocabulary = gpt_weights.read_vocabulary(GGUF)
    made = Tokenizer(models.BPE({tok: i for i, tok in enumerate(vocabulary.tokens)},
                                [tuple(m.split(" ")) for m in vocabulary.merges]))
    made.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                  pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    made.decoder = decoders.ByteLevel()
    return made


@functools.cache
def reference_pass() -> tuple[list[int], np.ndarray, np.ndarray]:
    """-> (the prompt's ids, its last row of logits (V,), its maps (L, H, n, n)), float64."""
    ids = reference_tokenizer().encode(PROMPT).ids
    logits, maps = reference_gpt.forward(reference_gpt.GGUFTensors(GGUF), ids)
    return ids, logits[-1], maps


def shown(token_id: int) -> str:
    return reference_tokenizer().id_to_token(token_id).replace("Ġ", "·").replace("Ċ", "⏎")


def softmax(z, temperature: float = 1.0) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64) / temperature
    e = np.exp(z - z.max())
    return e / e.sum()


@functools.cache
def answered(lang: str):
    """The page at its defaults with every question answered (read only: a test that clicks opens its own)."""
    at = open_page("gpt", lang, timeout=600)
    for key in QUESTIONS:
        at.radio(key=key).set_value(1).run()
    assert_clean(at)
    return at


def traces_by_name(fig: dict) -> dict[str, dict]:
    return {tr["name"]: tr for tr in fig["data"] if tr.get("name")}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_labels_of_the_trained_model_and_its_untrained_copy_mean_what_they_say(lang):
    w = strings(lang)
    trained, untrained = MEANING[lang]
    assert w["gpt.trained"].lower().startswith(trained) and w["gpt.untrained"].lower().startswith(untrained)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_next_token_bars_are_the_reference_models_top_ten(lang):
    ids, logits, _ = reference_pass()
    probs = softmax(logits)
    top = [int(i) for i in np.argsort(-probs, kind="stable")[:10]]
    w = strings(lang)
    bars = traces_by_name(figure(answered(lang), "gpt_next_bars"))
    model, knobbed = bars[w["gpt.model_probs"]], bars[w["gpt.knob_probs"]]
    assert list(model["y"]) == [f"{k + 1}. {shown(i)}" for k, i in enumerate(top)]
    np.testing.assert_allclose(decode_array(model["x"]), 100 * probs[top], atol=0.05)  # percent; float32 vs 64
    np.testing.assert_allclose(decode_array(knobbed["x"]), 100 * probs[top], atol=0.05)  # the knobs at their defaults
    said = find_sentence(texts(answered(lang)), "gpt.next_numbers", lang)
    assert said["token"].replace("\\", "") == shown(top[0]) and number(said["p"]) == pytest.approx(100 * probs[top[0]],
                                                                                                    abs=0.1)


def test_temperature_sharpens_the_knobbed_bars_and_the_generated_tokens_probabilities():
    ids, logits, _ = reference_pass()
    at = open_page("gpt", timeout=600)
    for key in QUESTIONS:
        at.radio(key=key).set_value(1).run()
    at.slider(key="gpt_temperature").set_value(0.5).run()
    w = strings("en")
    bars = traces_by_name(figure(at, "gpt_next_bars"))
    top = [int(i) for i in np.argsort(-softmax(logits), kind="stable")[:10]]
    np.testing.assert_allclose(decode_array(bars[w["gpt.model_probs"]]["x"]), 100 * softmax(logits)[top], atol=0.05)
    np.testing.assert_allclose(decode_array(bars[w["gpt.knob_probs"]]["x"]), 100 * softmax(logits, 0.5)[top],
                               atol=0.05)
    at.slider(key="gpt_new_tokens").set_value(3).run()
    at.button(key="gpt_generate").click().run()
    assert_clean(at)
    table = [df.value for df in at.dataframe if w["gpt.col_step"] in df.value.columns][0]
    weights, made = smollm2.default_model()[0], []
    for token, shown_prob in zip(table[w["gpt.col_token"]], table[w["gpt.probability"]]):
        prob = shown_prob if not isinstance(shown_prob, str) else number(shown_prob) / (100 if "%" in shown_prob else 1)
        probs = softmax(smollm2.forward(weights, list(ids) + made, all_logits=False).logits[-1], 0.5)
        drawn = [i for i in np.argsort(-probs)[:200] if shown(int(i)) == token]
        assert drawn and abs(probs[drawn[0]] - prob) < 1e-3, (token, prob, probs[drawn[0]] if drawn else None)
        made.append(int(drawn[0]))


@functools.cache
def sink_profiles() -> tuple[np.ndarray, np.ndarray]:
    """-> (trained, untrained) (L,): per layer, the mean over heads of the mean over rows 1..n-1 of the weight on
    the first token, by loops (the trained maps from the reference, the untrained copy's from its pass)."""
    ids, _, maps = reference_pass()
    untrained = smollm2.forward(gpt_weights.untrained_weights(maps_config(), 0), ids, all_logits=False).attention

    def profile(a):
        L, H, n, _ = a.shape
        return np.array([np.mean([np.mean([a[l, h, i, 0] for i in range(1, n)]) for h in range(H)]) for l in range(L)])

    return profile(maps), profile(untrained)


def maps_config():
    return smollm2.default_model()[0].config


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_sink_profile_shows_the_trained_model_and_its_untrained_copy_under_their_names(lang):
    trained, untrained = sink_profiles()
    w = strings(lang)
    lines = traces_by_name(figure(answered(lang), "gpt_sink_chart"))
    np.testing.assert_allclose(decode_array(lines[w["gpt.trained"]]["y"]), 100 * trained, atol=0.01)
    np.testing.assert_allclose(decode_array(lines[w["gpt.untrained"]]["y"]), 100 * untrained, atol=0.01)
    said = find_sentence(texts(answered(lang)), "gpt.sink_numbers", lang)
    assert number(said["share"]) == pytest.approx(100 * trained.mean(), abs=0.5)
    assert number(said["untrained"]) == pytest.approx(100 * untrained.mean(), abs=0.5)


@functools.cache
def study() -> dict:
    """The induction study from the models' passes: heads picked on one set, scored on the other; losses computed here."""
    sets = heads.induction_sets(count=SEQUENCES, length=PERIOD)
    trained, untrained = smollm2.default_model()[0], gpt_weights.untrained_weights(maps_config(), 0)

    def measure(weights, sequences):
        scores, previous, first, second = [], [], [], []
        for ids in sequences:
            out = smollm2.forward(weights, [int(i) for i in ids])
            a, logits = np.asarray(out.attention, dtype=np.float64), np.asarray(out.logits, dtype=np.float64)
            # the second copy's row R + j on the token after its earlier occurrence, j + 1
            scores.append(np.mean([a[:, :, PERIOD + j, j + 1] for j in range(PERIOD)], axis=0))
            previous.append(np.mean([a[:, :, i, i - 1] for i in range(1, len(ids))], axis=0))  # each row on the last
            log_z = np.log(np.exp(logits - logits.max(axis=1, keepdims=True)).sum(axis=1)) + logits.max(axis=1)
            loss = [log_z[p - 1] - logits[p - 1, ids[p]] for p in range(1, len(ids))]  # predicting position p
            first.append(np.mean(loss[0:PERIOD - 1]))  # positions 1 .. R-1
            second.append(np.mean(loss[PERIOD:2 * PERIOD - 1]))  # positions R+1 .. 2R-1
        return np.array(scores), np.array(previous), float(np.mean(first)), float(np.mean(second))

    picking, picking_previous, _, _ = measure(trained, sets.picking)
    scoring, scoring_previous, first, second = measure(trained, sets.scoring)
    _, _, u_first, u_second = measure(untrained, sets.scoring)
    head = np.unravel_index(int(np.argmax(picking.mean(axis=0))), picking.shape[1:])
    previous = np.unravel_index(int(np.argmax(picking_previous.mean(axis=0))), picking.shape[1:])
    return {"losses": (first, second), "untrained": (u_first, u_second), "head": (int(head[0]), int(head[1])),
            "score": float(scoring[:, head[0], head[1]].mean()), "map": scoring.mean(axis=0),
            "previous_head": (int(previous[0]), int(previous[1])),
            "previous_score": float(scoring_previous[:, previous[0], previous[1]].mean()), "heads": scoring.shape[1] *
            scoring.shape[2]}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_induction_study_shows_its_losses_head_and_score_under_their_names(lang):
    s = study()
    w = strings(lang)
    at = answered(lang)
    bars = traces_by_name(figure(at, "gpt_loss_bars"))
    np.testing.assert_allclose(decode_array(bars[w["gpt.trained"]]["y"]), s["losses"], atol=0.02)
    np.testing.assert_allclose(decode_array(bars[w["gpt.untrained"]]["y"]), s["untrained"], atol=0.02)
    assert list(bars[w["gpt.trained"]]["x"]) == [w["gpt.first_copy"], w["gpt.second_copy"]]
    heat = figure(at, "gpt_induction_map")
    z = decode_array(next(tr for tr in heat["data"] if tr.get("type") == "heatmap")["z"])
    np.testing.assert_allclose(z, s["map"], atol=2e-3)  # z[layer][head]
    said = find_sentence(texts(at), "gpt.induction_numbers", lang)
    assert said["head"] == "L{}H{}".format(*s["head"])
    assert number(said["score"]) == pytest.approx(s["score"], abs=0.006)
    first = find_sentence(texts(at), "gpt.loss_numbers", lang)
    assert (number(first["first"]), number(first["second"])) == pytest.approx(s["losses"], abs=0.06)
    assert (number(first["u_first"]), number(first["u_second"])) == pytest.approx(s["untrained"], abs=0.06)
