"""Nothing above a prediction answers it (issue: predict-then-reveal): every page with a question, in both languages
and in presenter mode, drawn unanswered; everything drawn before the question (text, tables, charts) is read in page
order and must not hold the answer's key facts. Then the question is answered and the reveal gives the explanation.
Earlier pages (the home page's map) are read in full."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1.element_tree import Block

from tests.apptest_utils import assert_clean, open_page
from ui.i18n import load_strings

# page, the question's radio key, the right option, and the answer's key facts that must not show before it.
OPENED_AT = {"qkv": {"qkv_step": "3"}}  # the library asks its question in step 3
QUESTIONS = {
    "rnn": ("rnn_predict", 4, {"en": ["powers of ten", "vanish", "fade", "shrink"], "ja": ["何桁", "消え", "薄れ", "小さくな"]}),
    "qkv": ("qkv_predict", 3, {"en": ["blend", "every book's contents", "in proportion to its share", "in proportion to their shares", "not a pick",
                                      "just one book"],
                               "ja": ["混ぜ", "すべての本の中身", "取り分に応じて", "一冊だけ選ばなくて"]}),
    "scaling": ("scaling_predict", 4, {"en": ["nearly one-hot", "collapse", "practically 1", "0.9"],
                                       "ja": ["ほぼ one-hot", "集中", "ほぼ 1", "0.9"]}),
    "causal": ("causal_predict", 1, {"en": ["100 % to itself", "attends 100", "only to itself"],
                                     "ja": ["自分自身に 100", "100 % アテンション"]}),
    "transformer": ("transformer_predict", 1, {"en": ["only shuffles", "just at the word's new position", "as a *set*"],
                                               "ja": ["並べ替わるだけ", "*集合*として"]}),
    "glove": ("glove_predict", 3, {"en": ["10 of 12", "ranks 10", "10th", "near the bottom", "largest weights of this row",
                                          "Document A's row"],
                                   "ja": ["12 語中 10 位", "10 位", "下位", "重みが大きいのは", "Document A の行"]}),
    "gpt": ("gpt_next_predict", 1, {"en": ["Paris", "77."], "ja": ["Paris", "77."]}),  # its other questions: test_gpt_page
}


def _walk(node, out: list, stop_key: str) -> bool:
    """Depth-first, in page order: append each element's text to ``out``; True once the radio ``stop_key`` is met."""
    if isinstance(node, Block):
        return any(_walk(child, out, stop_key) for child in node.children.values())
    if node.type == "radio" and getattr(node, "key", None) == stop_key:
        return True
    if node.type == "plotly_chart":
        out.extend(_chart_words(json.loads(node.proto.spec)))
    elif isinstance(getattr(node, "value", None), str):
        out.append(node.value)
    elif node.type in ("dataframe", "table"):
        out.append(str(node.value))
    return False


def _chart_words(spec) -> list[str]:
    """The words a chart shows: every "text", "name" and title string in it (its data arrays are left out: an
    animation's frames are the experiment itself, not a sentence that answers the question)."""
    if isinstance(spec, dict):
        found = [v for k, v in spec.items() if k in ("text", "name", "title") and isinstance(v, str)]
        return found + [w for k, v in spec.items() if k not in ("x", "y", "z", "customdata") for w in _chart_words(v)]
    if isinstance(spec, list):
        return [w for item in spec for w in _chart_words(item)]
    return []


def shown_before(at, radio_key: str) -> str:
    out: list[str] = []
    assert _walk(at.main, out, radio_key), f"the question {radio_key} is not on the page"
    return "\n".join(out)


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("section", list(QUESTIONS))
def test_nothing_above_a_question_answers_it(section, lang, presenter):
    key, right, facts = QUESTIONS[section]
    at = open_page(section, lang, query={**OPENED_AT.get(section, {}), **({"presenter": "true"} if presenter else {})})
    assert_clean(at)
    above = shown_before(at, key)
    assert above, "nothing drawn before the question: the walk found no element"
    assert [r for r in at.radio if r.key == key and _pattern(load_strings(lang)[f"{section}.predict_q"]).fullmatch(r.label)]
    assert [fact for fact in facts[lang] if fact in above] == []


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("section", list(QUESTIONS))
def test_the_reveal_explains_and_names_the_answer(section, lang):
    key, right, facts = QUESTIONS[section]
    at = open_page(section, lang, query=OPENED_AT.get(section))
    at.radio(key=key).set_value(right).run()
    assert_clean(at)
    strings = load_strings(lang)
    assert [box.value for box in at.success if _pattern(strings[f"{section}.predict_why"]).search(box.value)]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_home_page_map_asks_what_each_lesson_answers(lang):
    """An earlier page gives nothing away either: the home page's lesson map (a caption under each link) holds none of
    the answers. (Its opening paragraph defines attention, as the formula beside it does.)"""
    at = open_page("home", lang)
    claims = [load_strings(lang)[f"home.claim_{section}"] for section in QUESTIONS]
    shown = "\n".join(c.value for c in at.caption if c.value in claims)
    assert len(shown.split("\n")) == len(claims)
    for section, (_, _, facts) in QUESTIONS.items():
        assert [fact for fact in facts[lang] if fact in shown] == [], section


def _pattern(text: str):
    """A locale text with its {placeholders} as wildcards: which of two texts a shown caption was made from."""
    return re.compile(".+?".join(re.escape(part) for part in re.split(r"\{[^{}]*\}", text)), re.S)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_animation_caption_keeps_the_unscaled_numbers_for_after_the_answer(lang):
    strings = load_strings(lang)
    before, after = _pattern(strings["scaling.anim_caption_before"]), _pattern(strings["scaling.anim_caption"])
    at = open_page("scaling", lang)
    assert [bool(after.fullmatch(c.value)) for c in at.caption if before.fullmatch(c.value) or after.fullmatch(c.value)] == [False]
    at.radio(key="scaling_predict").set_value(4).run()
    assert [bool(after.fullmatch(c.value)) for c in at.caption if before.fullmatch(c.value) or after.fullmatch(c.value)] == [True]
