"""Lesson 8's model view and opened head on a projector (1280x720 and 1920x1080, presenter mode) and on a phone:
measured as drawn. Every head's map has square cells (found in the canvas's pixels), fits the page's column, and its
labels take presenter mode's font; the opened head's matrix labels every key token ("it" included) without overlaps;
a phone is told to tap, never to hover, and the grid fits its screen."""

from __future__ import annotations

import pytest

from tests.browser.conftest import new_page, open_page, rerun_after, wait_still
from tests.browser.model_view_js import FIRST_MAP_PX, model_view_messages
from tests.browser.test_phone import PHONE_UA
from tests.browser.test_projector import CHART_TEXT_PROBLEMS
from ui.shared.display import PRESENTER_FONT_SIZE
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.browser

CANVAS = "[data-testid='stVegaLiteChart'] canvas"
HEAT = ".st-key-pretrained_heat .js-plotly-plot"
TOKENS = ["[CLS]", "the", "animal", "did", "not", "cross", "the", "street", "because", "it", "was", "too", "tired",
          "[SEP]"]  # the famous sentence as the model's tokenizer splits it


def opened(pg, app_url: str, query: str) -> list:
    """Lesson 8 opened with ``query``, both questions answered, the model view and the opened head drawn;
    -> the model views the websocket delivered (spec bytes, data bytes, spec)."""
    seen = model_view_messages(pg)
    open_page(pg, app_url, "trained-model", query, timeout=180_000)
    pg.wait_for_selector(".st-key-pretrained_predict", timeout=180_000)
    for key in ("pretrained_predict", "pretrained_switch_predict"):
        rerun_after(pg, pg.locator(f".st-key-{key} [role='radiogroup'] label").first.click)
    pg.locator(CANVAS).scroll_into_view_if_needed()
    pg.wait_for_function(f"() => ({FIRST_MAP_PX})() !== null", timeout=120_000)
    pg.locator(HEAT).scroll_into_view_if_needed()
    pg.wait_for_selector(f"{HEAT} g.xtick text", timeout=60_000)
    wait_still(pg.locator(HEAT))
    assert seen, "no model view arrived"
    return seen


def heat_key_labels(pg) -> list[str]:
    return pg.evaluate(f"() => [...document.querySelectorAll('{HEAT} g.xtick text')].map(t => t.textContent)")


@pytest.fixture
def screen(browser, request):
    width, height = request.param
    context = browser.new_context(viewport={"width": width, "height": height})
    yield new_page(context)
    context.close()


@pytest.mark.parametrize("screen", [(1280, 720), (1920, 1080)], indirect=True, ids=["1280x720", "1920x1080"])
def test_on_a_projector_maps_are_square_labels_large_and_every_key_labelled(screen, app_url):
    seen = opened(screen, app_url, "lang=en&presenter=true")
    spec = seen[-1][2]
    assert spec["config"]["axis"]["labelFontSize"] == PRESENTER_FONT_SIZE - 2  # as Plotly's ticks in presenter mode
    assert spec["config"]["legend"]["labelFontSize"] == PRESENTER_FONT_SIZE - 2
    first = screen.evaluate(FIRST_MAP_PX)
    assert abs(first["w"] / first["h"] - 1) < 0.05, f"a head's map is drawn {first['w']:.0f}x{first['h']:.0f} px"
    assert first["w"] >= 40, first
    canvas = screen.locator(CANVAS).bounding_box()
    column = screen.locator("[data-testid='stMainBlockContainer']").bounding_box()
    assert canvas["x"] + canvas["width"] <= column["x"] + column["width"] + 1, "the grid runs past the page's column"
    assert heat_key_labels(screen) == TOKENS  # every key token, "it" included
    problems = [p for p in screen.evaluate(CHART_TEXT_PROBLEMS, 2) if p.startswith("L3H1")]
    assert problems == [], problems


def test_normal_mode_keeps_its_smaller_labels(page, app_url):
    spec = opened(page, app_url, "lang=en")[-1][2]
    assert spec["config"]["axis"]["labelFontSize"] < PRESENTER_FONT_SIZE - 2
    first = page.evaluate(FIRST_MAP_PX)
    assert abs(first["w"] / first["h"] - 1) < 0.05, first


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True,
                                  device_scale_factor=2, user_agent=PHONE_UA)
    yield new_page(context)
    context.close()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_on_a_phone_the_model_view_fits_and_says_tap(phone, app_url, lang):
    opened(phone, app_url, f"lang={lang}")
    strings = load_strings(lang)
    captions = phone.locator("[data-testid='stCaptionContainer']").all_inner_texts()
    assert strings["pretrained.view.caption_touch"] in [c.strip() for c in captions]
    assert not [c for c in captions if "hover" in c.lower() or "カーソルを合わせ" in c]
    canvas = phone.locator(CANVAS).bounding_box()
    assert canvas["x"] >= 0 and canvas["x"] + canvas["width"] <= 390, canvas
    first = phone.evaluate(FIRST_MAP_PX)
    assert abs(first["w"] / first["h"] - 1) < 0.1, first
    assert heat_key_labels(phone) == TOKENS
