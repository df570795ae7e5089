"""AppTest: an answered prediction survives what a class does between questions: a sentence the page cannot read
(one word, empty), a changed sentence, a visit to another page and back (ui.shared.common.predict_then_reveal keeps the
answer for the session). Lesson 8's questions are about the famous sentence, so they stay asked and answered while
the learner's own sentence cannot be read. (The browser side: tests/browser/test_state.py.)"""

from __future__ import annotations

import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.pages import page

LESSON8_QUESTIONS = ("pretrained_predict", "pretrained_switch_predict")


def answers(at, keys) -> dict:
    found = {r.key: r.value for r in at.radio}
    return {k: found.get(k, "not drawn") for k in keys}


def lesson8_text(at, text: str):
    at.text_input(key="pretrained_text").input(text).run()
    assert_clean(at)
    return at


@pytest.mark.pages
def test_lesson8_answers_survive_a_one_word_sentence_and_a_visit_to_another_page():
    at = open_page("pretrained", "en", timeout=300)
    at.radio(key="pretrained_predict").set_value(2).run()
    at.radio(key="pretrained_switch_predict").set_value(1).run()
    at.selectbox(key="pretrained_preset").set_value("custom").run()
    lesson8_text(at, "The cat sat on the mat because it was tired")
    assert answers(at, LESSON8_QUESTIONS) == {"pretrained_predict": 2, "pretrained_switch_predict": 1}
    assert len(at.get("vega_lite_chart")) == 1
    lesson8_text(at, "cat")  # one word: the page says so; the questions stay asked and answered
    assert any("two words" in w.value for w in at.warning)
    assert answers(at, LESSON8_QUESTIONS) == {"pretrained_predict": 2, "pretrained_switch_predict": 1}
    assert at.get("vega_lite_chart") == []  # no sentence, no model view
    assert any(el.proto.id.endswith("-pretrained_wino_map") for el in at.get("plotly_chart")), \
        "the tired/wide minimal pair is about the built-in pairs: it stays"
    lesson8_text(at, "The cat sat on the mat because it was tired")
    assert answers(at, LESSON8_QUESTIONS) == {"pretrained_predict": 2, "pretrained_switch_predict": 1}
    assert len(at.get("vega_lite_chart")) == 1, "the model view is back without a new answer"
    at.switch_page(page("causal").file).run()
    assert "pretrained_predict" not in {r.key for r in at.radio}
    at.switch_page(page("pretrained").file).run()
    assert_clean(at)
    assert answers(at, LESSON8_QUESTIONS) == {"pretrained_predict": 2, "pretrained_switch_predict": 1}
    assert len(at.get("vega_lite_chart")) == 1


def test_an_answer_survives_a_page_that_stopped_before_its_question():
    """Lesson 5 stops above its question on an empty sentence (st.stop): the answer is still there afterwards."""
    at = open_page("causal", "en")
    at.radio(key="causal_predict").set_value(3).run()
    at.selectbox(key="causal_preset").set_value("custom").run()
    at.text_input(key="causal_text").input("").run()
    assert "causal_predict" not in {r.key for r in at.radio}  # the page stopped above the question
    at.text_input(key="causal_text").input("the dog chased the cat").run()
    assert_clean(at)
    assert answers(at, ["causal_predict"]) == {"causal_predict": 3}
    assert any(el.proto.id.endswith("-causal_causal_fig") for el in at.get("plotly_chart")), "the reveal is drawn"


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_an_answer_survives_a_visit_to_another_page(lang):
    at = open_page("causal", lang)
    at.radio(key="causal_predict").set_value(2).run()
    at.switch_page(page("qkv").file).run()
    at.switch_page(page("causal").file).run()
    assert_clean(at)
    assert answers(at, ["causal_predict"]) == {"causal_predict": 2}
