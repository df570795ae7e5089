"""AppTest: the entry point runs, and every page renders in both languages with no exception."""

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest_utils import APP, assert_clean, decode_array, plotly_figures, run_page
from tests.pages import PAGES


def test_entry_point_runs():
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert_clean(at)
    assert at.title[0].value == "Attention, live"


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("page", PAGES, ids=[p.section for p in PAGES])
def test_every_page_renders(page, lang):
    at = run_page(page.file, lang)
    assert_clean(at)
    assert len(at.get("plotly_chart")) + len(at.get("arrow_vega_lite_chart")) >= 1
    assert at.title, "every page has a title"


def test_japanese_link_selects_japanese():
    at = run_page("lessons/home.py", "ja")
    assert at.title[0].value == "アテンションを動かして学ぶ"


def test_home_demo_rows_sum_to_one_and_change_with_seed():
    at = run_page("lessons/home.py")
    z0 = decode_array(plotly_figures(at)[0]["data"][0]["z"])
    np.testing.assert_allclose(z0.sum(axis=1), 1.0)
    at.number_input(key="home_seed").set_value(7).run()
    z7 = decode_array(plotly_figures(at)[0]["data"][0]["z"])
    np.testing.assert_allclose(z7.sum(axis=1), 1.0)
    assert not np.allclose(z0, z7)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_lesson_titles_are_numbered_like_the_navigation(lang):
    """Nav label and page title of lesson N both start "N · "; no Markdown-eaten underscore (√d_k) in either."""
    from ui.i18n import load_strings

    strings = load_strings(lang)
    lessons = [p for p in PAGES if p.section != "home"]
    for number, page in enumerate(lessons, start=1):
        nav = strings[f"nav.{page.section}"]
        title = strings[f"{page.section}.title"]
        assert nav.startswith(f"{number} · ") and title.startswith(f"{number} · "), (nav, title)
        assert "_" not in nav and "_" not in title, (nav, title)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_page_shows_its_numbered_title(lang):
    at = run_page("lessons/scaling.py", lang)
    from ui.i18n import load_strings

    assert at.title[0].value == load_strings(lang)["scaling.title"]
    assert at.title[0].value.startswith("4 · ") and "√dₖ" in at.title[0].value
