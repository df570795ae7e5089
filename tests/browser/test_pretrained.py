"""Lesson 8 in Chromium: after both predictions, a click on a head's map in the model view opens that head."""

import pytest

from charts.model_view import GAP, LABEL_PX, PADDING, axis_px, unit_px
from tests.browser.conftest import open_page, wait_for_app

pytestmark = pytest.mark.browser

MODEL_VIEW = "[data-testid='stVegaLiteChart'] canvas"
HEAT = ".st-key-pretrained_heat .js-plotly-plot"
TOKENS = 14  # the famous sentence with [CLS] and [SEP]


def answer_both(page) -> None:
    for key in ("pretrained_predict", "pretrained_switch_predict"):
        page.locator(f".st-key-{key} [role='radiogroup'] label").first.click()
        wait_for_app(page)


def map_centre(box: dict, layer: int, head: int) -> tuple[float, float]:
    """The centre of one head's map on the canvas: the grid has fixed padding, axis room and cell size
    (charts.model_view)."""
    step, unit, (left, top) = TOKENS + GAP, unit_px(TOKENS), axis_px(LABEL_PX)
    x = box["x"] + PADDING + left + (head * step + TOKENS / 2) * unit
    y = box["y"] + PADDING + top + (layer * step + TOKENS / 2) * unit
    return x, y


TITLE_JS = "(sel) => { const gd = document.querySelector(sel); return gd && gd.layout ? gd.layout.title.text : ''; }"


def heat_title(page) -> str:
    """The opened head's heat-map title, without the <b> tags Streamlit's theme wraps it in."""
    return page.evaluate(TITLE_JS, HEAT).replace("<b>", "").replace("</b>", "")


def test_clicking_a_head_in_the_model_view_opens_it(page, app_url):
    open_page(page, app_url, "trained-model")
    page.wait_for_selector(".st-key-pretrained_predict", timeout=120_000)
    answer_both(page)
    canvas = page.wait_for_selector(MODEL_VIEW, timeout=120_000)
    page.wait_for_selector(HEAT, timeout=60_000)
    assert heat_title(page) == "L3H1"  # the featured head opens first
    canvas.scroll_into_view_if_needed()
    x, y = map_centre(canvas.bounding_box(), layer=0, head=2)
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    page.wait_for_function(f"(sel) => ({TITLE_JS})(sel).includes('L0H2')", arg=HEAT, timeout=60_000)
    wait_for_app(page)
    assert page.locator(".st-key-pretrained_layer input").input_value() == "0"
    assert page.locator(".st-key-pretrained_head input").input_value() == "2"
    assert page.locator("[data-testid='stException']").count() == 0
