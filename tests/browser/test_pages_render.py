"""Every page, served by a real `streamlit run`, renders in Chromium with a chart and no exception."""

import pytest

from tests.browser.conftest import open_page
from tests.pages import PAGES

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("url_path", [p.url_path for p in PAGES])
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_page_renders(page, app_url, url_path, lang):
    open_page(page, app_url, url_path, f"lang={lang}")
    page.wait_for_selector(".js-plotly-plot, [data-testid='stVegaLiteChart']", timeout=60_000)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    assert page.dialogs == []
