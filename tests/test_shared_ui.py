"""The shared page furniture of ui/shared/common.py on every lesson: a wrong prediction names the right option, the
"What to try" box sits in one place (right under the controls, above every result) and is a short hint in presenter
mode where the lesson has one, and lists inside a sentence use the language's separator."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from tests.apptest_utils import assert_clean, open_page
from tests.pages import PAGES
from tests.test_predictions import OPENED_AT, QUESTIONS
from ui.shared.common import quoted_option
from ui.shared.i18n import Translator, load_strings

pytestmark = pytest.mark.pages

LESSONS = [p.section for p in PAGES if p.section != "home"]
EXPERIMENTS = [s for s in LESSONS if s != "summary"]  # (the summary has no controls: each claim links to its lesson)
CONTROLS = {"selectbox", "slider", "select_slider", "text_input", "text_area", "number_input", "toggle", "checkbox",
            "radio", "multiselect", "segmented_control", "button_group", "button"}
# pages whose every control stands in the section it steers (lesson 10's prompt picker beside the lens that reads it,
# issue 40 item 15): their try box opens the page, before any control or result
CONTROLS_IN_SECTIONS = {"heads"}
RESULTS = {"plotly_chart", "vega_lite_chart", "dataframe", "table", "metric", "subheader", "header",
           "download_button", "json"}


def in_page_order(node, out: list) -> list:
    """Every element of the page, depth-first in the order the learner sees them."""
    if isinstance(node, Block):
        for child in node.children.values():
            in_page_order(child, out)
    else:
        out.append(node)
    return out


# --- 1. a wrong answer names the right option ---------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("section", list(QUESTIONS))
def test_a_wrong_answer_names_the_right_option(section, lang):
    key, right, _ = QUESTIONS[section]
    at = open_page(section, lang, query=OPENED_AT.get(section))
    wrong = 1 if right != 1 else 2
    at.radio(key=key).set_value(wrong).run()
    assert_clean(at)
    t = Translator(lang)
    right_label = at.radio(key=key).options[right - 1]  # as shown: a page may fill its options with its own numbers
    assert right_label.startswith(t(f"{section}.predict_{right}").split("{")[0])
    why = t.strings[f"{section}.predict_why"].split("{")[0]  # (lesson 6 fills its question with the sentence's words)
    shown = [w.value for w in at.warning if why in w.value]
    assert len(shown) == 1, [w.value for w in at.warning]
    assert shown[0].startswith(t("common.predict_wrong", answer=quoted_option(t, right_label)))
    assert not [s for s in at.success if why in s.value]


def test_the_right_option_is_quoted_as_each_language_quotes():
    en, ja = Translator("en"), Translator("ja")
    assert quoted_option(en, "Yes: it now gives “street” more weight.") == "“Yes: it now gives ‘street’ more weight”"
    assert quoted_option(ja, "はい：今度は「street」に多く重みを置く。") == "「はい：今度は『street』に多く重みを置く」"
    assert en("common.predict_wrong", answer="“A”") == "Not quite: the answer is “A”."
    assert ja("common.predict_wrong", answer="「A」") == "正解は「A」です。"


# --- 2. "What to try": one place on every page, a short hint on the projector -------------------------------------

def try_box(at, section: str, lang: str, presenter: bool) -> tuple[list, int]:
    """(the page's elements in order, the index of its one "What to try" box)."""
    t = Translator(lang)
    key = f"{section}.try_short" if presenter and t.has(f"{section}.try_short") else f"{section}.try"
    elements = in_page_order(at.main, [])
    head = max(re.split(r"\{[^}]*\}", t(key)), key=len)[:40]  # (scaling and lesson 6 format values into theirs)
    boxes = [i for i, el in enumerate(elements) if el.type == "info" and head in el.value]
    assert len(boxes) == 1, f"{section}: {len(boxes)} try boxes reading {head!r}"
    return elements, boxes[0]


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
@pytest.mark.parametrize("section", EXPERIMENTS)
def test_the_try_box_comes_right_after_the_controls_and_before_any_result(section, presenter):
    at = open_page(section, "en", query={**OPENED_AT.get(section, {}), **({"presenter": "true"} if presenter else {})})
    assert_clean(at)
    elements, at_box = try_box(at, section, "en", presenter)
    before = elements[:at_box]
    assert [el.type for el in before if el.type in RESULTS] == [], f"{section}: a result above the try box"
    if section in CONTROLS_IN_SECTIONS:
        assert [el for el in before if el.type in CONTROLS] == [], f"{section}: a control above the try box"
        assert [el for el in elements[at_box:] if el.type in CONTROLS], f"{section}: no control below the try box"
        return
    assert [el for el in before if el.type in CONTROLS], f"{section}: no control above the try box"
    previous = [el.type for el in before if el.type not in ("caption", "info", "markdown", "warning")]
    assert previous[-1] in CONTROLS, f"{section}: the try box does not follow the controls ({previous[-3:]})"


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("section", EXPERIMENTS)
def test_presenter_mode_shows_the_short_hint(section, lang):
    strings = load_strings(lang)
    short, full = (max(re.split(r"\{[^}]*\}", strings[f"{section}.{k}"]), key=len) for k in ("try_short", "try"))
    assert len(strings[f"{section}.try_short"]) < len(strings[f"{section}.try"]) / 2
    query = OPENED_AT.get(section, {})
    for presenter, shown, hidden in ((True, short, full), (False, full, short)):
        at = open_page(section, lang, query={**query, **({"presenter": "true"} if presenter else {})})
        boxes = [i.value for i in at.info if shown[:40] in i.value]
        assert len(boxes) == 1 and hidden not in boxes[0], (presenter, [i.value for i in at.info])


def test_every_try_short_exists_in_both_languages():
    en, ja = load_strings("en"), load_strings("ja")
    shorts = {k for k in en if k.endswith(".try_short")}
    assert shorts == {f"{section}.try_short" for section in EXPERIMENTS}
    assert shorts == {k for k in ja if k.endswith(".try_short")}


# --- 3. lists inside a sentence -----------------------------------------------------------------------------------

def _unknown_words_page():
    import streamlit as st

    from ui.shared.common import show_unknown
    from ui.shared.i18n import Translator

    show_unknown(Translator(st.query_params.get("lang", "en")), ["xqzv", "blorf", "猫", "。"])


@pytest.mark.parametrize("lang,separator,quote", [("en", ", ", "“{}”"), ("ja", "、", "「{}」")])
def test_show_unknown_lists_words_with_the_languages_separator(lang, separator, quote):
    """Each token quoted, joined by the language's separator: the token 「。」 or 「、」 reads apart from the list's 、."""
    at = AppTest.from_function(_unknown_words_page)
    at.query_params["lang"] = lang
    at.run()
    assert not at.exception
    words = separator.join(quote.format(w) for w in ("xqzv", "blorf"))
    assert [c.value for c in at.caption] == [Translator(lang)("common.unknown_words", words=words)]
    assert quote.format("猫") + separator + quote.format("。") in at.info[0].value


def test_presenter_tables_are_html_tables_and_number_matrices_stay_grids():
    """ui.shared.common.data_table: on a projector a lesson's table is st.table (it wraps to the column and takes the large
    font); lesson 3's matrices (a column per token) stay sortable grids, which scroll."""
    normal = open_page("causal", "en")
    presenter = open_page("causal", "en", query={"presenter": "true"})
    assert len(normal.dataframe) >= 1 and len(normal.table) == 0
    assert len(presenter.table) == len(normal.dataframe) and len(presenter.dataframe) == 0
    assert presenter.table[0].value.shape == normal.dataframe[0].value.shape
    matrices = open_page("self_attention", "en", query={"presenter": "true"})
    assert len(matrices.dataframe) >= 1 and len(matrices.table) == 0
