"""AppTest: lesson 9 (inside a GPT) asks before each reveal, and every number it shows matches an independent
computation: the core's forward pass (attention_core.gpt) read with a naive float64 softmax and loops here, the GGUF
file read directly for the parameter count. Bad prompts get a clear message. (Generation's streaming, Stop and a
second click in a live browser: tests/browser/test_gpt.py; a missing package: tests/test_faults.py.)"""

from __future__ import annotations

import functools
import json
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from attention_core import gpt
from attention_core.gpt import model as gpt_model
from tests.apptest_utils import assert_clean, open_page
from tests.test_predictions import shown_before

pytestmark = pytest.mark.pages

LOCALES = Path(__file__).resolve().parent.parent / "locales"
DATA = Path(__file__).resolve().parent.parent / "data" / "gpt.toml"
QUESTIONS = ("gpt_next_predict", "gpt_leak_predict", "gpt_it_predict", "gpt_sink_predict", "gpt_induction_predict",
             "gpt_cache_predict")
PROMPT = tomllib.loads(DATA.read_text(encoding="utf-8"))["presets"][0]["text"]  # the default prompt
DEFAULT_SEED = 1  # the seed box's default (its first draw at the default prompt: tests/test_gpt_content_page.py)


def percent_of(p: float) -> str:
    """A probability as the page's tables show it, written here from the rule: one decimal from 1 %, two significant
    digits below."""
    return f"{p * 100:.1f} %" if p >= 0.01 else f"{float(f'{p * 100:.2g}'):g} %"


def strings(lang: str) -> dict:
    with (LOCALES / lang / "gpt.toml").open("rb") as fh:
        return tomllib.load(fh)


def softmax(z) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max())
    return e / e.sum()


@functools.lru_cache(maxsize=None)
def ids_of(text: str) -> tuple[int, ...]:
    return tuple(gpt.default_model()[1].encode(text))


@functools.lru_cache(maxsize=None)
def full_pass(ids: tuple[int, ...]):
    return gpt.forward(gpt.default_model()[0], list(ids))


def shown(at) -> list[str]:
    return [m.value for m in at.markdown] + [c.value for c in at.caption] + [w.value for w in at.warning]


def figure(at, key: str) -> dict:
    found = [json.loads(el.proto.spec) for el in at.get("plotly_chart") if el.proto.id.endswith("-" + key)]
    assert len(found) == 1, (key, [el.proto.id for el in at.get("plotly_chart")])
    return found[0]


def reveals(at) -> list:
    """Every chart but the model's size beside published GPTs (drawn with the model card, it answers no question)."""
    return [el for el in at.get("plotly_chart") if not el.proto.id.endswith("-gpt_sizes")]


def answer_all(at):
    for key in QUESTIONS:
        at.radio(key=key).set_value(1).run()
    return at


@functools.lru_cache(maxsize=None)
def answered(lang: str):
    """The page at its defaults with every question answered (read-only use: tests that click open their own)."""
    at = answer_all(open_page("gpt", lang, timeout=600))
    assert_clean(at)
    return at


# --- predict first -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_question_comes_before_what_answers_it(lang):
    at = open_page("gpt", lang, timeout=600)
    assert_clean(at)
    assert [r.key for r in at.radio if r.key.startswith("gpt_")] == list(QUESTIONS)
    assert reveals(at) == [] and at.get("vega_lite_chart") == []  # no reveal drawn before its answer
    ids = ids_of(PROMPT)
    top = softmax(full_pass(ids).logits[-1]).max()
    facts = {"gpt_next_predict": [f"{top:.1%}", "Paris"], "gpt_leak_predict": [strings(lang)["exactly_zero"]],
             "gpt_it_predict": [strings(lang)["exactly_zero"]], "gpt_sink_predict": ["Xiao"],
             "gpt_induction_predict": ["Olsson", "L18H6"], "gpt_cache_predict": ["46.1 kB", "377 MB", "70%"]}
    for key, words in facts.items():
        above = shown_before(at, key)
        assert [w for w in words if w in above] == [], key


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_model_card_counts_the_parameters_from_the_file(lang):
    import gguf
    from attention_core.gpt.weights import gguf_path

    reader = gguf.GGUFReader(str(gguf_path()))
    params = sum(int(np.prod([int(s) for s in t.shape])) for t in reader.tensors)
    card = [i.value for i in answered(lang).info if "SmolLM2-135M-Instruct" in i.value]
    # read as each language reads a count: 134.5 million; 1億3,452万 (never 134.5 百万)
    said = f"{params / 1e6:.1f} million" if lang == "en" else f"{params // 10**8}億{round(params % 10**8 / 10**4):,}万"
    assert len(card) == 1 and f"**{said}" in card[0] and "Q4_1" in card[0]
    assert ("175 billion" if lang == "en" else "1,750億") in card[0]  # GPT-3's published count
    assert "百万" not in card[0] and "175.0 B" not in card[0]


# --- the next token ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_top_ten_are_the_models_own_probabilities(lang):
    at = answered(lang)
    probs = softmax(full_pass(ids_of(PROMPT)).logits[-1])
    order = np.argsort(-probs)[:10]
    bars = figure(at, "gpt_next_bars")["data"]
    from tests.apptest_utils import decode_array

    np.testing.assert_allclose(decode_array(bars[0]["x"]) / 100, probs[order], atol=1e-5)
    np.testing.assert_allclose(decode_array(bars[1]["x"]) / 100, probs[order], atol=1e-5)  # knobs at rest
    assert bars[0]["y"][0] == "1. ·Paris"
    entropy = float(-(probs[probs > 0] * np.log(probs[probs > 0])).sum())
    assert any(f"**{entropy:.2f}**" in m for m in shown(at))


def test_the_knobs_at_their_ends():
    at = answer_all(open_page("gpt", timeout=600))
    logits = full_pass(ids_of(PROMPT)).logits[-1]
    at.slider(key="gpt_temperature").set_value(3.0).run()
    hot = softmax(logits / 3.0)
    entropy = float(-(hot * np.log(hot)).sum())
    line = [m for m in shown(at) if "Entropy" in m]
    assert_clean(at)
    assert len(line) == 1 and f"**{entropy:.2f}** nats after the knobs" in line[0]
    at.slider(key="gpt_top_k").set_value(1).run()
    at.slider(key="gpt_top_p").set_value(0.05).run()
    at.slider(key="gpt_temperature").set_value(0.05).run()
    assert_clean(at)
    line = [m for m in shown(at) if "Entropy" in m][0]
    assert "**100.0%** after the knobs" in line and "1 of 49,152 tokens can still be drawn" in line


def generated_csv(at, files) -> "pd.DataFrame":
    import io

    import pandas as pd

    data = {b.key: files[b.proto.url] for b in at.get("download_button")}["gpt_gen_csv"]
    assert data.startswith(b"\xef\xbb\xbf")  # the BOM: Excel reads the tokens as UTF-8
    return pd.read_csv(io.StringIO(data.decode("utf-8-sig")), keep_default_na=False)


def test_generation_shows_each_token_with_the_probability_it_had(monkeypatch):
    from tests.apptest_utils import recorded_downloads

    files = recorded_downloads(monkeypatch)
    at = answer_all(open_page("gpt", timeout=600))
    at.slider(key="gpt_new_tokens").set_value(5).run()
    at.button(key="gpt_generate").click().run()
    assert_clean(at)
    table = generated_csv(at, files)  # the exact probabilities (the page's table shows them as percentages)
    assert list(table["step"]) == [1, 2, 3, 4, 5]
    shown_table = [df.value for df in at.dataframe if "step" in df.value.columns][0]
    assert list(shown_table["token"]) == list(table["token"])
    assert list(shown_table["probability"]) == [percent_of(p) for p in table["probability"]]
    ids = list(ids_of(PROMPT))
    tokenizer = gpt.default_model()[1]
    made = []
    for shown_token, prob in zip(table["token"], table["probability"]):
        probs = softmax(full_pass(tuple(ids + made)).logits[-1])
        # the token drawn: its string as shown (a space as ·), and its probability the model's at T = 1
        candidates = [i for i in np.argsort(-probs)[:500] if abs(probs[i] - prob) < 1e-4
                      and tokenizer.token_strings([int(i)])[0].replace("Ġ", "·").replace("Ċ", "⏎") == shown_token]
        assert len(candidates) == 1, (shown_token, prob)
        made.append(int(candidates[0]))
    assert [c.value for c in at.code] == [tokenizer.decode(ids + made)]  # what the model read, then what it wrote
    assert strings("en")["gen_done"].format(n=5, seed=DEFAULT_SEED) in shown(at)
    assert list(table["token id"]) == made
    first = list(table["token"])
    at.button(key="gpt_generate").click().run()  # the same seed writes the same text
    assert list([df.value for df in at.dataframe if "step" in df.value.columns][0]["token"]) == first


def test_a_generation_cut_short_says_where_it_stopped():
    at = answer_all(open_page("gpt", timeout=600))
    at.slider(key="gpt_new_tokens").set_value(5).run()
    at.button(key="gpt_generate").click().run()
    run = at.session_state["gpt_generation"]
    run["tokens"], run["finished"] = run["tokens"][:2], False  # as a Stop or a page change leaves it mid-way
    at.button(key="gpt_stop").click().run()
    assert_clean(at)
    assert [w.value for w in at.warning if "Stopped" in w.value] == [strings("en")["gen_stopped"].format(n=2, total=5)]


def test_a_failed_generation_says_what_failed_on_every_rerun_never_that_the_model_ended_its_answer():
    at = answer_all(open_page("gpt", timeout=600))
    at.slider(key="gpt_new_tokens").set_value(5).run()
    at.button(key="gpt_generate").click().run()
    run = at.session_state["gpt_generation"]
    run["tokens"], run["error"] = run["tokens"][:2], "WorkerKilled: the step failed"  # as a failed step leaves it
    for _ in range(2):  # the rerun that follows says it again
        at.run()
        assert_clean(at)
        said = [line.replace("\\", "") for line in shown(at)]  # (the detail is shown markdown-escaped)
        assert strings("en")["gen_error"].format(detail="WorkerKilled: the step failed") in said
        assert strings("en")["gen_eos"].format(n=2) not in said
        assert strings("en")["gen_done"].format(n=2, seed=DEFAULT_SEED) not in said


def test_the_output_shows_what_the_model_read_of_a_long_prompt_not_the_whole_typed_text():
    text = "A long walk " + "and a longer story about a hat " * 12  # past the prompt's 40 tokens
    at = answer_all(custom(text))
    at.slider(key="gpt_new_tokens").set_value(2).run()
    at.button(key="gpt_generate").click().run()
    assert_clean(at)
    tokenizer = gpt.default_model()[1]
    read = tokenizer.decode(list(ids_of(text)[:40]))
    assert len(ids_of(text)) > 40
    (box,) = [c.value for c in at.code]
    assert box.startswith(read) and len(box) < len(text)  # the whole typed text would be longer than what was read


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
    real = gpt.forward

    def counting(weights, ids, all_logits=True):
        calls.append(tuple(int(i) for i in ids))
        return real(weights, ids, all_logits)

    monkeypatch.setattr(gpt, "forward", counting)  # the package's name, as the page calls it
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
    tokens = gpt.default_model()[1].token_strings(list(ids_of(first)))
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
    from attention_core.gpt.heads import induction_sets

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
    claim = [m.value for m in at.markdown if "SmolLM2-135M" in m.value]
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
    from attention_core.gpt.weights import gguf_path

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


# --- the learner's own prompt (bad prompts and Japanese: tests/test_gpt_input_page.py) --------------------------------


def custom(text: str, lang: str = "en"):
    at = open_page("gpt", lang, query={"gpt_preset": "custom"}, timeout=600)
    at.text_input(key="gpt_text").input(text).run()
    return at


def test_lesson_9_registers_its_start_up_work():
    """The study, the famous sentence, Japanese and the default prompt are computed by the start-up thread, not by
    the first student who opens the page (or the summary)."""
    import ui.gpt.circuits as lesson
    from ui.shared import startup

    assert "ui.gpt.circuits" in startup.STARTUP_MODULES
    assert lesson.WARM is startup.register_startup("gpt-lesson", lambda: None)  # registered once
