"""The tables of the RNN, QKV and scaling lessons fit a 1280x720 projector: no column is cut at the table's right edge
(the table would scroll sideways), in either language, once the question is answered and the table is open."""

from __future__ import annotations

import pytest

from tests.browser.conftest import new_page, open_page, rerun_after, wait_still
from tests.browser.test_projector import TABLE_PROBLEMS
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.browser

# page, link parameters, the expander that holds the table (a locale key; None: the table is on the page)
TABLES = [("rnn", "", "rnn.table_title"), ("qkv", "qkv_step=3", None), ("scaling", "", None)]


@pytest.fixture
def projector(browser, request):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    yield new_page(context)
    context.close()


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("url_path,query,expander", TABLES, ids=[t[0] for t in TABLES])
def test_the_table_fits_at_1280x720(projector, app_url, url_path, query, expander, lang, presenter):
    page = projector
    open_page(page, app_url, "", f"lang={lang}")
    open_page(page, app_url, url_path, "&".join(q for q in (f"lang={lang}", query, "presenter=true" * presenter) if q))
    question = page.locator("[data-testid='stMain'] [data-testid='stRadio'] [role='radiogroup'] label").first
    rerun_after(page, question.click)
    if expander is not None:
        page.locator("[data-testid='stExpander'] summary").filter(has_text=load_strings(lang)[expander]).click()
    # a sortable grid, or in presenter mode an HTML table (ui.shared.common.data_table): either must fit its frame
    table = page.locator("[data-testid='stDataFrame'] .dvn-scroller, [data-testid='stTable'] table")
    table.first.wait_for(timeout=30_000)
    table.first.scroll_into_view_if_needed()
    wait_still(page.locator("[data-testid='stDataFrame'], [data-testid='stTable']").first)
    assert page.locator("[data-testid='stTable']" if presenter else "[data-testid='stDataFrame']").count() >= 1
    found = page.evaluate(TABLE_PROBLEMS)
    assert found["measured"] >= 1 and found["problems"] == [], found
