"""Lesson 11's seed box in Chromium (issue 40 item 22): -1 and a 20-digit number typed in are refused with a message
(Streamlit 1.67's own under the box, "Number is outside the allowed range ..."; the page's caption says the bounds all
along), and the page goes on with the last valid seed: the link keeps it, nothing is sent to the server."""

from __future__ import annotations

import pytest

from attention_core.attention import MAX_SEED
from tests.browser.conftest import new_page, open_page, wait_for_app
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.browser

S = load_strings("en")
BOX = ".st-key-tiny_seed input"


@pytest.mark.parametrize("typed", ["-1", "12345678901234567890"])
def test_a_seed_outside_the_bounds_is_refused_with_a_message(browser, app_url, typed):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        pg = new_page(context)
        open_page(pg, app_url, "head-forms", "tiny_seed=1", timeout=180_000)
        bounds = S["tiny_gpt.seed_bounds"].format(max_seed=f"{MAX_SEED:,}")
        assert bounds in pg.get_by_test_id("stMain").inner_text()
        box = pg.locator(BOX)
        box.fill(typed)
        box.press("Enter")
        # Streamlit refuses it in the browser: the box is marked invalid, with a message under it, nothing is sent
        pg.wait_for_function("""(sel) => {
            const box = document.querySelector(sel);
            const alert = box && document.getElementById(box.getAttribute('aria-describedby') || '');
            return box.getAttribute('aria-invalid') === 'true' && !!alert && alert.getAttribute('role') === 'alert'
                   && alert.innerText.includes('outside the allowed range');
        }""", arg=BOX, timeout=30_000)
        wait_for_app(pg)
        assert pg.url.endswith("?tiny_seed=1"), pg.url  # the page goes on with the last valid seed
        assert pg.locator("[data-testid='stException'], [data-testid='stAlertContentError']").count() == 0
        assert bounds in pg.get_by_test_id("stMain").inner_text()
    finally:
        context.close()
