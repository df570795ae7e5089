"""The model view in Chromium, now that its table carries only a fixed-point weight per cell and Vega-Lite derives
the rest: lesson 8's grid draws its maps, a hover on one cell names that cell's layer, head, query and key and shows
the model's own weight (so the decoding in the browser matches the model, not only the Python-side tests), and
lesson 9's 270 maps draw once its leak question is answered, delivered in at most 200 kB."""

from __future__ import annotations

import json

import pytest

from charts.model_view import GAP, LABEL_PX, MAP_PX, PADDING, axis_px, unit_px
from tests.browser.conftest import open_page, rerun_after, wait_for_app
from tests.browser.model_view_js import FIRST_MAP_PX, model_view_messages

pytestmark = pytest.mark.browser

CANVAS = "[data-testid='stVegaLiteChart'] canvas"
TOOLTIP = "#vg-tooltip-element.visible"
FAMOUS = "The animal did not cross the street because it was too tired"


def cell_centre(box: dict, tokens: int, layer: int, head: int, q: int, k: int) -> tuple[float, float]:
    """The centre of one cell (query q, key k) of one head's map on the canvas (charts.model_view's fixed layout)."""
    step, unit, (left, top) = tokens + GAP, unit_px(tokens), axis_px(LABEL_PX)
    return (box["x"] + PADDING + left + (head * step + k + 0.5) * unit,
            box["y"] + PADDING + top + (layer * step + q + 0.5) * unit)


def tooltip_rows(pg) -> dict[str, str]:
    return pg.evaluate(f"""() => Object.fromEntries([...document.querySelectorAll('{TOOLTIP} tr')]
        .map(r => [r.querySelector('.key').textContent.replace(/:$/, ''), r.querySelector('.value').textContent]))""")


def test_lesson_8_draws_its_maps_and_a_hover_shows_the_models_weight(page, app_url):
    from attention_core.pretrained import read_text

    seen = model_view_messages(page)
    open_page(page, app_url, "trained-model", "lang=en", timeout=180_000)
    page.wait_for_selector(".st-key-pretrained_predict", timeout=180_000)
    for key in ("pretrained_predict", "pretrained_switch_predict"):
        rerun_after(page, page.locator(f".st-key-{key} [role='radiogroup'] label").first.click)
    page.locator(CANVAS).scroll_into_view_if_needed()
    page.wait_for_function(f"() => ({FIRST_MAP_PX})() !== null", timeout=120_000)
    first = page.evaluate(FIRST_MAP_PX)
    assert abs(first["w"] - MAP_PX) <= 2 and abs(first["h"] - MAP_PX) <= 2, first  # a whole map, square
    reading = read_text(FAMOUS)
    tokens, weights = reading.token_texts, reading.attentions
    assert len(seen[-1][2]["layer"][0]["transform"]) > 0 and seen[-1][1] <= 2 * weights.size + 1_000  # 2 B a cell
    q, k = tokens.index("it"), tokens.index("not")  # these and their neighbours occur once in the sentence
    for layer, head in ((3, 1), (5, 11)):
        x, y = cell_centre(page.locator(CANVAS).bounding_box(), len(tokens), layer, head, q, k)
        page.mouse.move(x, y)
        page.wait_for_function(f"() => !!document.querySelector('{TOOLTIP} tr')", timeout=30_000)
        name, query, key, weight = tooltip_rows(page).values()
        # the cell under the pointer (within a cell of the aim: the axes' room is Vega's), read off the tooltip
        assert name == f"L{layer}H{head}" and query in tokens[q - 1:q + 2] and key in tokens[k - 1:k + 2]
        assert weight == f"{weights[layer, head, tokens.index(query), tokens.index(key)]:.4f}"
        page.mouse.move(0, 0)
        page.wait_for_function(f"() => !document.querySelector('{TOOLTIP}')", timeout=30_000)
    assert page.locator("[data-testid='stException']").count() == 0


# The opened head's outline as drawn (lesson 9 opens L0H0): the first row of saturated pixels is its top edge, the run
# its width; -> {x, y, w, h} in CSS px relative to the canvas (the outline spans the map and half a cell around it).
OUTLINE_PX = FIRST_MAP_PX.replace("return {w: (x1 - x0) / scale, h: (y1 - y) / scale};",
                                  "return {x: x0 / scale, y: y / scale, w: (x1 - x0) / scale, h: (y1 - y) / scale};")


def test_lesson_9_draws_its_270_maps_after_the_leak_answer_in_at_most_200_kb(page, app_url):
    seen = model_view_messages(page)
    open_page(page, app_url, "gpt", "lang=en", timeout=300_000)
    leak = page.locator(".st-key-gpt_leak_predict [role='radiogroup'] label").first
    leak.scroll_into_view_if_needed()
    assert page.locator(CANVAS).count() == 0  # no maps before the answer
    rerun_after(page, leak.click, timeout=300_000)
    page.locator(CANVAS).scroll_into_view_if_needed()
    page.wait_for_function(f"() => ({OUTLINE_PX})() !== null", timeout=120_000)
    wait_for_app(page)
    spec_bytes, data_bytes, spec = seen[-1]
    assert "270" in spec["title"], spec["title"]
    assert spec_bytes + data_bytes <= 200_000, (spec_bytes, data_bytes)
    query = spec["layer"][0]["transform"][-5]["calculate"]  # ["tok0", "tok1", ...][datum.q]
    tokens = json.loads(query[:query.rindex("[")])
    n = len(tokens)
    assert data_bytes <= 2 * 270 * n * n + 1_000  # 2 bytes a cell
    outline, box = page.evaluate(OUTLINE_PX), page.locator(CANVAS).bounding_box()
    cell_w, cell_h = outline["w"] / (n + 1), outline["h"] / (n + 1)  # the outline runs from -0.5 to n + 0.5 cells
    # L0H0's first row: a causal model's first token can only look at itself -> weight 1 on key 0, exactly 0 after
    for k, weight in ((0, "1.0000"), (n - 1, "0.0000")):
        page.mouse.move(box["x"] + outline["x"] + (k + 1) * cell_w, box["y"] + outline["y"] + cell_h)
        page.wait_for_function(f"() => !!document.querySelector('{TOOLTIP} tr')", timeout=30_000)
        assert list(tooltip_rows(page).values()) == ["L0H0", tokens[0], tokens[k], weight]
        page.mouse.move(0, 0)
        page.wait_for_function(f"() => !document.querySelector('{TOOLTIP}')", timeout=30_000)
    assert page.locator("[data-testid='stException']").count() == 0
