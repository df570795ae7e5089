"""Classroom features in a real browser: the presenter switch turns presenter mode on and puts it in the link.

(Presenter mode itself: tests/test_sharing.py checks every page's texts, controls and figure fonts in AppTest;
tests/browser/test_projector.py every page's rendered sizes; tests/browser/test_sharing.py the dark theme.)"""

import re

import pytest

from tests.browser.conftest import open_page, rerun_after

pytestmark = pytest.mark.browser


def h1_font_px(page) -> float:
    return page.evaluate("parseFloat(getComputedStyle(document.querySelector('h1')).fontSize)")


def test_the_presenter_switch_enlarges_text_and_goes_into_the_link(page, app_url):
    open_page(page, app_url, "")
    normal = h1_font_px(page)
    rerun_after(page, page.get_by_text("Presenter mode").click)
    assert h1_font_px(page) > normal * 1.1
    page.wait_for_url(re.compile(r"presenter=true"), timeout=10_000)  # the switch is in the link, so a prepared link opens in presenter mode
