"""Lesson 9's first answers cost no model pass: what a student's first answer to each question reads on a preset
prompt (fixed texts), and choosing a preset, were computed by the start-up thread (ui/gpt/circuits.py warm_answers)
or kept on disk. Counted in the model's passes made by the page's own runs, on a preset other than the default."""

from __future__ import annotations

import threading

import pytest
from streamlit.runtime.scriptrunner import get_script_run_ctx

from tests.apptest_utils import assert_clean, open_page
from tests.test_gpt_page import strings, shown

gpt_weights = pytest.importorskip("attention_core.smollm2.weights")
try:
    gpt_weights.gguf_path()
except gpt_weights.GPTUnavailable as missing:
    pytest.skip(f"the model package is absent: {missing}", allow_module_level=True)

pytestmark = pytest.mark.pages

QUESTIONS = ("gpt_next_predict", "gpt_leak_predict", "gpt_it_predict", "gpt_sink_predict", "gpt_induction_predict")


@pytest.fixture
def page_passes(monkeypatch):
    """-> the list of model passes (full runs and the interventions' runs) made by a page's run (a script thread),
    not by a background thread."""
    from attention_core.smollm2 import interventions, model as gpt_model

    passes = []
    for module in (gpt_model, interventions):
        real = module.run

        def counted(*args, _real=real, _name=module.__name__, **kwargs):
            if get_script_run_ctx(suppress_warning=True) is not None:
                passes.append((_name, threading.current_thread().name))
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, "run", counted)
    return passes


@pytest.mark.parametrize("preset", ["1", "3"])
def test_the_first_answers_on_a_preset_read_what_the_start_up_computed(page_passes, preset):
    from ui.gpt import circuits, page

    at = open_page("gpt", timeout=600)
    circuits.ANSWERS.result()  # the start-up thread's work (a server's first minute)
    circuits.warm_lesson(), circuits.warm_answers()  # ... again: an earlier test here may have cleared every cache
    page_passes.clear()
    at.selectbox(key="gpt_preset").set_value(preset).run()
    assert_clean(at)
    text = page.texts().presets[int(preset)][1]
    assert at.session_state["gpt_preset"] == preset
    assert page.preset_ids(text) in page.preset_prompts()
    for key in QUESTIONS:
        at.radio(key=key).set_value(1).run()
        assert_clean(at)
    assert page_passes == []  # not one pass of the model in any of these runs
    assert [m for m in shown(at) if m.count(strings("en")["exactly_zero"]) >= 2 and "zebra" in m]  # all revealed
    assert at.get("plotly_chart") and at.get("vega_lite_chart")


def test_the_preset_prompts_are_the_ids_the_page_reads():
    """preset_prompts (what is kept on disk and warmed) holds each preset's ids exactly as prompt_picker reads them."""
    from attention_core import smollm2
    from ui.gpt import page

    tokenizer = smollm2.default_model()[1]
    expected = tuple(tuple(tokenizer.encode(text))[: page.MAX_PROMPT_TOKENS] for _, text in page.texts().presets)
    assert page.preset_prompts() == expected
    assert len(set(expected)) == len(expected)


def test_a_presets_pass_outlives_a_classs_own_prompts(monkeypatch):
    """The presets' passes are kept for the process's life: 40 learners' own prompts (more than the 32 kept) do not
    push the warmed passes out (the first answers would then compute them again)."""
    from ui.gpt import page

    computed = []
    monkeypatch.setattr(page, "_computed_pass", lambda ids, trained: computed.append((ids, trained)) or object())
    page._preset_pass.clear(), page._own_pass.clear()
    try:
        preset = page.preset_prompts()[1]
        first = page.prompt_pass(preset)
        for i in range(40):
            page.prompt_pass((1, 2, 3, 1000 + i))
        assert page.prompt_pass(preset) is first and computed.count((preset, True)) == 1
        assert page.prompt_pass((1, 2, 3, 1000)) is not None and computed.count(((1, 2, 3, 1000), True)) == 2
    finally:
        page._preset_pass.clear(), page._own_pass.clear()  # (the stub's values must not outlive the test)
