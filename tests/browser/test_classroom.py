"""Classroom features in a real browser: presenter mode, language from the link, no dialogs from hostile text."""

import pytest

from tests.browser.conftest import open_page, wait_for_app

pytestmark = pytest.mark.browser


def h1_font_px(page) -> float:
    return page.evaluate("parseFloat(getComputedStyle(document.querySelector('h1')).fontSize)")


def test_presenter_mode_enlarges_text_and_hides_explanations(page, app_url):
    open_page(page, app_url, "")
    normal = h1_font_px(page)
    explanation = page.get_by_text("Every number in this lesson is computed live", exact=False)
    assert explanation.count() == 1
    page.get_by_text("Presenter mode").click()
    wait_for_app(page)
    page.wait_for_timeout(500)
    assert h1_font_px(page) > normal * 1.1
    assert explanation.count() == 0
    assert "presenter=true" in page.url  # the switch is in the link, so a prepared link opens in presenter mode


def test_presenter_link_opens_in_presenter_mode(page, app_url):
    open_page(page, app_url, "", "presenter=true&lang=ja")
    assert page.get_by_role("heading", name="アテンションを動かして学ぶ").count() >= 1
    assert page.get_by_text("このレッスンの数字はすべて", exact=False).count() == 0
