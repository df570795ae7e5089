"""AppTest: the entry point runs, and every page renders in both languages with no exception."""

import numpy as np
from pathlib import Path

import pytest

from tests.apptest_utils import assert_clean, decode_array, open_page, plotly_figures
from tests.pages import PAGES


def test_entry_point_runs():
    at = open_page("home")  # (open_page asserts the title from locales; this one is the literal app name)
    assert_clean(at)
    assert at.title[0].value == "Attention, live"


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("page", PAGES, ids=[p.section for p in PAGES])
def test_every_page_renders(page, lang):
    at = open_page(page.section, lang)
    assert_clean(at)
    assert len(at.get("plotly_chart")) + len(at.get("arrow_vega_lite_chart")) >= 1  # (open_page checked the title)


def test_japanese_link_selects_japanese():
    at = open_page("home", "ja")
    assert at.title[0].value == "アテンションを動かして学ぶ"


def test_home_demo_rows_sum_to_one_and_change_with_seed():
    at = open_page("home")
    z0 = decode_array(plotly_figures(at)[0]["data"][0]["z"])
    np.testing.assert_allclose(z0.sum(axis=1), 1.0)
    at.number_input(key="home_seed").set_value(7).run()
    z7 = decode_array(plotly_figures(at)[0]["data"][0]["z"])
    np.testing.assert_allclose(z7.sum(axis=1), 1.0)
    assert not np.allclose(z0, z7)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_lesson_titles_are_numbered_like_the_navigation(lang):
    """Nav label and page title of each lesson start with the same number, counting 1, 2, ... in the navigation's
    order, where a lesson set after lesson N without renumbering the rest is "Nb"; no Markdown-eaten underscore
    (√d_k) in either."""
    from ui.shared.i18n import load_strings

    strings = load_strings(lang)
    lessons = [p for p in PAGES if p.section != "home"]
    number, expected = 0, []
    for page in lessons:
        nav = strings[f"nav.{page.section}"]
        prefix = nav.split(" · ")[0]
        if prefix == f"{number}b":
            expected.append(prefix)
        else:
            number += 1
            expected.append(str(number))
        title = strings[f"{page.section}.title"]
        assert nav.startswith(f"{expected[-1]} · ") and title.startswith(f"{expected[-1]} · "), (nav, title)
        assert "_" not in nav and "_" not in title, (nav, title)
    assert expected.count(str(number)) == 1 and number == len([e for e in expected if e.isdigit()])


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_page_shows_its_numbered_title(lang):
    at = open_page("scaling", lang)
    from ui.shared.i18n import load_strings

    assert at.title[0].value == load_strings(lang)["scaling.title"]
    assert at.title[0].value.startswith("4 · ") and "√dₖ" in at.title[0].value


def test_open_page_catches_a_test_that_draws_another_page():
    """The guard itself, on the mistake it exists for: switch_page before the first run draws the home page, and
    assert_page_drawn says so (the one place a test drives AppTest by hand)."""
    from streamlit.testing.v1 import AppTest

    from tests.apptest_utils import APP, assert_page_drawn
    from tests.pages import page

    at = AppTest.from_file(APP, default_timeout=60)
    lesson = page("pretrained")  # a page whose url_path ("trained-model") is not its file's name
    assert lesson.url_path != Path(lesson.file).stem
    at.switch_page(lesson.file).run()
    with pytest.raises(AssertionError, match="asked for 'pretrained'"):
        assert_page_drawn(at, "pretrained")
    assert_page_drawn(at, "home")


def test_sci_writes_powers_of_ten_like_a_textbook():
    from ui.shared.i18n import sci
    assert sci(1.7e-07) == "1.7 × 10⁻⁷"
    assert sci(4.123e-6, 3) == "4.12 × 10⁻⁶"
    assert sci(2.5e12) == "2.5 × 10¹²"
    assert sci(3.0) == "3.0"
    assert float(sci(-6.02e23, 3).replace(" × 10", "e").translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789"))) == -6.02e23


def test_lists_inside_a_sentence_use_the_languages_separator():
    from ui.shared.i18n import Translator
    assert Translator("en").join(["a", "b", "c"]) == "a, b, c"
    assert Translator("ja").join(["猫", "マット"]) == "猫、マット"
