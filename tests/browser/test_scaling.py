"""The scaling page's d animation in a real browser: the play button exists and playing advances the frames."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import open_page

pytestmark = pytest.mark.browser

PLAY = {"en": "▶ Play", "ja": "▶ 再生"}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_play_button_sweeps_d_from_4_to_1024(page, app_url, lang):
    # Open the app's root once first: on a fresh server whose very first visit is a sub-page, Streamlit 1.67 runs
    # a pages/ folder as a v1 multipage app until st.navigation has run once (why the lessons live in lessons/).
    open_page(page, app_url, "", f"lang={lang}")
    open_page(page, app_url, "scaling", f"lang={lang}")
    anim = page.locator(".js-plotly-plot").filter(has=page.locator("g.slider-group")).first
    anim.scroll_into_view_if_needed()
    label = anim.locator("g.slider-group > text.slider-label")
    expect(label).to_have_text("d = 4", timeout=30_000)
    bars_before = anim.evaluate("el => Array.from(el._fullData[0].y)")
    assert len(bars_before) == 8  # the default number of keys

    play = anim.locator(".updatemenu-button").filter(has_text=PLAY[lang])
    expect(play).to_have_count(1)
    play.click()
    expect(label).not_to_have_text("d = 4", timeout=15_000)
    expect(label).to_have_text("d = 1024", timeout=30_000)

    assert anim.evaluate("el => el._fullLayout.sliders[0].active") == 8
    assert anim.evaluate("el => Array.from(el._fullData[0].y)") != bars_before
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    assert page.dialogs == []
