"""AppTest: lesson 9 (inside a GPT) asks before each reveal, and every number it shows matches an independent
computation: the core's forward pass (attention_core.smollm2) read with a naive float64 softmax and loops here, the GGUF
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

from attention_core import smollm2
from attention_core.smollm2 import model as gpt_model
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
    return tuple(smollm2.default_model()[1].encode(text))


@functools.lru_cache(maxsize=None)
def full_pass(ids: tuple[int, ...]):
    return smollm2.forward(smollm2.default_model()[0], list(ids))


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
    assert [r.key for r in at.radio if r.key.endswith("_predict")] == list(QUESTIONS)  # (gpt_model: the model choice)
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
    from attention_core.smollm2.weights import gguf_path

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
    tokenizer = smollm2.default_model()[1]
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
    tokenizer = smollm2.default_model()[1]
    read = tokenizer.decode(list(ids_of(text)[:40]))
    assert len(ids_of(text)) > 40
    (box,) = [c.value for c in at.code]
    assert box.startswith(read) and len(box) < len(text)  # the whole typed text would be longer than what was read


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
    assert lesson.ANSWERS is startup.register_startup("gpt-answers", lambda: None)
    order = startup.registered()
    assert order.index(lesson.WARM) < order.index(lesson.ANSWERS)  # the page's opening first, then the answers
