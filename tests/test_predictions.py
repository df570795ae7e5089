"""Nothing above a prediction answers it (issue: predict-then-reveal): every page with a question, in both languages
and in presenter mode, drawn unanswered; everything drawn before the question (text, tables, charts) is read in page
order and must not hold the answer's key facts. Then the question is answered and the reveal gives the explanation.
Earlier pages (the home page's map) are read in full."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1.element_tree import Block

from tests.apptest_utils import assert_clean, open_page, plotly_figures
from tests.pages import PAGES
from ui.shared.i18n import load_strings

# page, the question's radio key, the right option, and the answer's key facts that must not show before it.
OPENED_AT = {"qkv": {"qkv_step": "3"}}  # the library asks its question in step 3
# Lesson 8 (pretrained) asks its two questions on the model's page and is held by its own suite.
ASKING_LESSONS = [p.section for p in PAGES if p.section not in ("home", "summary", "pretrained")]
QUESTIONS = {
    "self_attention": ("sa_predict", 3, {"en": ["side by side", "concatenat", "W_O"], "ja": ["横に並べ", "連結", "W_O"]}),
    "rnn": ("rnn_predict", 4, {"en": ["powers of ten", "vanish", "fade", "shrink"], "ja": ["何桁", "消え", "薄れ", "小さくな"]}),
    "qkv": ("qkv_predict", 3, {"en": ["blend", "every book's contents", "in proportion to its share", "in proportion to their shares", "not a pick",
                                      "just one book"],
                               "ja": ["混ぜ", "すべての本の中身", "取り分に応じて", "一冊だけ選ばなくて"]}),
    "scaling": ("scaling_predict", 4, {"en": ["nearly one-hot", "collapse", "practically 1", "0.9", "e¹⁰", "22,000"],
                                       "ja": ["ほぼ one-hot", "集中", "ほぼ 1", "0.9", "e¹⁰", "22,000"]}),
    "causal": ("causal_predict", 1, {"en": ["100 % to itself", "attends 100", "only to itself", "only itself"],
                                     "ja": ["自分自身に 100", "100 % アテンション", "自分自身とそれより前"]}),
    "transformer": ("transformer_predict", 1, {"en": ["only shuffles", "just at the word's new position", "as a *set*"],
                                               "ja": ["並べ替わるだけ", "*集合*として"]}),
    "glove": ("glove_predict", 3, {"en": ["10 of 12", "ranks 10", "10th", "near the bottom", "largest weights of this row",
                                          "Document A's row"],
                                   "ja": ["12 語中 10 位", "10 位", "下位", "重みが大きいのは", "Document A の行"]}),
    "gpt": ("gpt_next_predict", 1, {"en": ["Paris", "77."], "ja": ["Paris", "77."]}),  # its other questions: test_gpt_page
    "heads": ("heads_off_predict", 3, {"en": ["12.0", "rose from", "random sets of 8 heads: median"],  # test_heads_page
                                       "ja": ["12.0", "ナットに上がりました", "ランダムな 8 個の組"]}),
    "modern": ("modern_gqa_predict", 3, {"en": ["mean total-variation distance", "0 = the same map"],  # test_modern_page
                                         "ja": ["全変動距離", "0 は同じマップ"]}),
    "tiny_gpt": ("tiny_curves_predict", 1, {"en": ["phase change", "sudden", "drop", "plateau"],  # seed 0: no rest
                                            "ja": ["相転移", "急に", "落ち", "停滞"]}),
}


def test_every_lesson_asks_and_every_question_has_its_facts():
    """A lesson without a question (lesson 3 had none) or a new question without its list of facts fails here."""
    assert sorted(QUESTIONS) == sorted(ASKING_LESSONS)


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
def test_lesson_4_plays_its_animation_only_after_the_answer(lang):
    """The "Watch d grow" player runs the unscaled weights up to d = 1024: the answer. It comes below the question,
    once answered, with the unscaled numbers in its caption."""
    strings = load_strings(lang)
    at = open_page("scaling", lang)
    assert strings["scaling.anim_header"] not in [h.value for h in at.subheader]
    assert [c for c in at.caption if _pattern(strings["scaling.anim_caption"]).fullmatch(c.value)] == []
    at.radio(key="scaling_predict").set_value(4).run()
    assert_clean(at)
    assert strings["scaling.anim_header"] in [h.value for h in at.subheader]
    assert len([c for c in at.caption if _pattern(strings["scaling.anim_caption"]).fullmatch(c.value)]) == 1
    before: list = []
    assert players(at.main, "scaling_predict", before) and before == []
    assert len([f for f in plotly_figures(at) if f.get("frames")]) == 2, "the d player below the question, and the τ one"


# ---- the general rule: what the answer says, read off the locales, never drawn above its question ----------------

STOPWORDS = set("""a an the and or but of to in on at by for with from as is are be it its it's this that these those
what which how does do not no than then into over one two all every each any same just before after its
there here about them they""".split())
# Lesson 6's options differ only in order ("below the middle" / "not below the middle"): its hand list guards it.
WORDS_OF_ITS_OWN_NOT_EXPECTED = {"glove"}
NUMBER = re.compile(r"\d+(?:[.,]\d+)+|\d{2,}")  # (a single digit is a count of the setup: "4 books")
KANJI_OR_KATAKANA = re.compile("[\u30a0-\u30ff\u3400-\u9fff]")  # (hiragana-only words are particles and endings)


def _words(text: str, lang: str) -> set[str]:
    """The content words of a locale text (placeholders and Markdown dropped): English lower-cased words, plural and
    possessive endings dropped; Japanese MeCab words with a kanji or katakana."""
    from attention_core.text import tokenize

    text = re.sub(r"\{[^{}]*\}|[*_`]", " ", text)
    if lang == "ja":
        return {w for w in tokenize(text) if KANJI_OR_KATAKANA.search(w)}
    words = (re.sub(r"['’]s$", "", w) for w in re.findall(r"[a-zà-ÿ][a-zà-ÿ'’-]*", text.lower()))
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words if len(w) > 1} - STOPWORDS


def answer_marks(section: str, lang: str, key_right: int, n_options: int) -> tuple[set[str], set[str]]:
    """(numbers, words) that only the right option says: not in the question, not in any wrong option."""
    strings = load_strings(lang)
    right = strings[f"{section}.predict_{key_right}"]
    others = [strings[f"{section}.predict_q"]] + [strings[f"{section}.predict_{i}"] for i in range(1, n_options + 1)
                                                  if i != key_right]
    numbers = set(NUMBER.findall(re.sub(r"\{[^{}]*\}", "", right))) - {n for o in others for n in NUMBER.findall(o)}
    words = _words(right, lang) - set().union(*(_words(o, lang) for o in others))
    return numbers, words


def giveaways(text: str, numbers: set[str], words: set[str], lang: str) -> list[str]:
    """Sentences of ``text`` that hold a number only the right option says, or half of its words (two at least)."""
    found = []
    for sentence in re.split(r"(?<=[.!?])\s+|(?<=[。！？])|\n", text):
        said = {n for n in NUMBER.findall(sentence) if n in numbers}
        content = _words(sentence, lang) & words
        if said or len(content) >= max(2, (len(words) + 1) // 2):
            found.append(f"{sentence[:120]!r}: {sorted(said | content)}")
    return found


def players(node, stop_key: str, out: list) -> bool:
    """Animated figures (a play button runs through the experiment) drawn before the radio ``stop_key``."""
    if isinstance(node, Block):
        return any(players(child, stop_key, out) for child in node.children.values())
    if node.type == "radio" and getattr(node, "key", None) == stop_key:
        return True
    if node.type == "plotly_chart" and json.loads(node.proto.spec).get("frames"):
        out.append(node.proto.id)
    return False


def _n_options(section: str) -> int:
    strings = load_strings("en")
    return max(i for i in range(1, 10) if f"{section}.predict_{i}" in strings)


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("section", ASKING_LESSONS)
def test_no_sentence_or_player_above_a_question_gives_its_answer(section, lang):
    """Read off the locales, not listed by hand: a number that only the right option says, or two of its own words in
    one sentence, drawn above the question; or an animation above it that plays the experiment through."""
    key, right, _ = QUESTIONS[section]
    at = open_page(section, lang, query=OPENED_AT.get(section))
    assert_clean(at)
    numbers, words = answer_marks(section, lang, right, _n_options(section))
    assert bool(numbers or words) != (section in WORDS_OF_ITS_OWN_NOT_EXPECTED), "the right option says nothing of its own"
    assert giveaways(shown_before(at, key), numbers, words, lang) == []
    found: list = []
    assert players(at.main, key, found)
    assert found == []


def test_the_rule_catches_the_giveaways_it_was_made_for():
    """The three cases of issue 25, as they were: lesson 5's intro sentence, lesson 4's animation above its question
    (a figure with frames) and lesson 4's sentence with the right option's number."""
    old_intro = "The weights then form a **lower-triangular** matrix: each token blends only itself and the tokens before it."
    assert giveaways(old_intro, *answer_marks("causal", "en", 1, 4), "en")
    old_ja = "こうして重みは**下三角行列**になり、各トークンは自分自身とそれより前のトークンだけを混ぜ合わせます。"
    assert giveaways(old_ja, *answer_marks("causal", "ja", 1, 4), "ja")
    assert giveaways("Unscaled, the largest weight at d = 1024 is above 0.9.", *answer_marks("scaling", "en", 4, 4), "en")
    assert giveaways("At d = 1024 the weights are nearly one-hot.", set(), {"nearly", "one-hot"}, "en")
    assert not giveaways(load_strings("en")["causal.explain"], *answer_marks("causal", "en", 1, 4), "en")
