"""Lesson 3 in Chromium: clicking a token marker selects that token; the selectbox follows and the lines change."""

import pytest

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.conftest import open_page, rerun_after, wait_for_app, wait_still

pytestmark = pytest.mark.browser

CHART = ".st-key-sa_lines .js-plotly-plot"
SELECTED = ".st-key-sa_token input"

LINES_JS = """() => {
  const gd = document.querySelector(arguments_0);
  return gd.data.filter(t => (t.name || '').startsWith('line ')).map(t => [t.y[0], t.y[1], t.line.width]);
}""".replace("arguments_0", repr(CHART))

POINT_JS = """([x, y]) => {
  const gd = document.querySelector(%r);
  const fl = gd._fullLayout, box = gd.getBoundingClientRect();
  return [box.left + fl._size.l + fl.xaxis.l2p(x), box.top + fl._size.t + fl.yaxis.l2p(y)];
}""" % CHART


def open_lesson(page, app_url, query: str = "") -> None:
    """Open the page; close the "Page not found" dialog that the first deep link after a server start can show
    (the app still runs the right page behind it, but the dialog would swallow the click)."""
    open_page(page, app_url, "self-attention", query)
    page.wait_for_selector(CHART, timeout=60_000)
    dialog = page.locator("[data-testid='stDialog']")
    if dialog.count():
        page.keyboard.press("Escape")
        dialog.wait_for(state="detached", timeout=10_000)


def wait_selected(page, label: str, timeout: float = 30_000) -> None:
    page.wait_for_function(
        "([sel, want]) => { const el = document.querySelector(sel); return el && el.value === want; }",
        arg=[SELECTED, label], timeout=timeout,
    )
    wait_for_app(page)
    page.wait_for_selector(CHART, timeout=30_000)


def click_token(page, column: float, index: int, label: str) -> None:
    """Click the marker of token ``index`` in the query (column 0) or key (column 1) column of the token-lines chart,
    and wait until the token box shows ``label``. A click that lands before Plotly has bound its click handler
    selects nothing: the click is tried again (up to three times) rather than after a fixed pause."""
    page.wait_for_selector(CHART + " .nsewdrag", timeout=30_000)
    page.locator(CHART).scroll_into_view_if_needed()
    wait_still(page.locator(CHART))
    for attempt in range(3):
        x, y = page.evaluate(POINT_JS, [column, index])
        page.mouse.move(x, y)
        page.mouse.click(x, y)
        try:
            wait_selected(page, label, timeout=10_000)
            return
        except PlaywrightTimeout:
            if attempt == 2:
                raise


def choose_token(page, label: str) -> None:
    """The keyboard path: type the token into the token box and press Enter."""
    page.locator(SELECTED).click()
    page.keyboard.type(label.split(" ")[0])
    rerun_after(page, lambda: page.keyboard.press("Enter"))
    wait_selected(page, label)


def assert_no_error(page) -> None:
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    assert page.dialogs == []


def test_clicking_a_query_marker_selects_the_token_and_redraws_the_lines(page, app_url):
    open_lesson(page, app_url, "lang=ja")  # the Japanese UI opens on the cat sentence
    assert page.locator(SELECTED).input_value() == "それ (9)"
    before = page.evaluate(LINES_JS)
    assert before and all(y0 == 8 for y0, _, _ in before)

    click_token(page, 0.0, 0, "猫 (1)")  # the first token in the query column
    after = page.evaluate(LINES_JS)
    assert after != before
    assert all(y0 == 0 for y0, _, _ in after)  # every line now starts at the clicked token
    assert "猫" in page.locator(".st-key-sa_lines").inner_text()
    assert_no_error(page)


def test_clicking_a_key_marker_selects_it_and_the_selectbox_still_works(page, app_url):
    open_lesson(page, app_url, "lang=ja&sa_preset=animal")  # the preset's id (ui.shared.links.url_selectbox)
    assert page.locator(SELECTED).input_value() == "it (9)"

    click_token(page, 1.0, 11, "tired (12)")  # in the key column
    lines = page.evaluate(LINES_JS)
    assert lines and all(y0 == 11 for y0, _, _ in lines)

    # the keyboard path: choose a token in the selectbox, then click the same marker again
    choose_token(page, "animal (2)")
    lines = page.evaluate(LINES_JS)
    assert lines and all(y0 == 1 for y0, _, _ in lines)
    click_token(page, 1.0, 11, "tired (12)")
    assert_no_error(page)


HEAD_PLOT_JS = """(sel) => Array.from(document.querySelectorAll(sel)).map(gd => {
  const s = gd._fullLayout._size, box = gd.getBoundingClientRect();
  return {w: s.w, h: s.h, left: box.left, top: box.top, right: box.right};
})"""


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_head_maps_stay_legible_at_1280x720(page, app_url, lang):
    """The three head maps were ~50 px wide at 1280x720; now each has a minimum width and a row
    that is too narrow wraps."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_lesson(page, app_url, f"lang={lang}")
    sel = "[class*='st-key-sa_head_box_'] .js-plotly-plot"
    page.wait_for_function("(s) => document.querySelectorAll(s).length === 3", arg=sel, timeout=30_000)
    page.locator(sel).first.scroll_into_view_if_needed()
    for i in range(3):
        wait_still(page.locator(sel).nth(i))
    boxes = page.evaluate(HEAD_PLOT_JS, sel)
    assert len(boxes) == 3
    n = 12 if lang == "en" else 13  # the tokens of the language's default sentence
    for box in boxes:
        assert box["w"] >= 14 * n, boxes  # at least 14 px per column
        assert box["h"] >= 14 * n, boxes
        assert box["right"] <= 1280 + 1, boxes  # nothing runs off the screen
    assert len({round(b["top"]) for b in boxes}) >= 2  # at 1280 px they do not all fit in one row: they wrap
    assert_no_error(page)


def test_going_back_to_the_default_token_shows_no_bad_link_toast(page, app_url):
    """Token 猫, then それ (the default) again: no "The link's setting ... is not valid" toast."""
    open_lesson(page, app_url, "lang=ja")
    for label in ("猫 (1)", "それ (9)"):
        choose_token(page, label)  # (a toast would be drawn by the run that rerun_after waited for)
    toasts = page.locator("[data-testid='stToast']")
    assert toasts.count() == 0, toasts.all_inner_texts()
    assert "sa_token" not in page.url
    assert_no_error(page)


X_TICKS_JS = """(sel) => [...document.querySelector(sel).querySelectorAll('g.xtick text')].map(t => {
  const r = t.getBoundingClientRect();
  return {text: t.textContent, transform: t.getAttribute('transform') || '', left: r.left, right: r.right,
          width: r.width, height: r.height};
})"""


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_heat_map_column_label_is_shown_and_none_overlap(page, app_url, lang):
    """At 1280x720 the coreference matrix labels all its columns (the particles が, の, に too); Japanese labels are
    written vertically, upright (not turned on their side), and no two labels overlap."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_lesson(page, app_url, f"lang={lang}")
    sel = ".st-key-sa_heat .js-plotly-plot"
    page.wait_for_selector(sel + " g.xtick text", timeout=30_000)
    wait_still(page.locator(sel))
    ticks = page.evaluate(X_TICKS_JS, sel)
    from attention_core.self_attention import load_self_attention

    data = load_self_attention()
    tokens = data.by_id(data.default_for(lang)).tokens
    assert [t["text"] for t in ticks] == list(tokens)
    assert all(t["width"] > 0 for t in ticks)
    ordered = sorted(ticks, key=lambda t: t["left"])
    assert all(a["right"] <= b["left"] + 0.5 for a, b in zip(ordered, ordered[1:])), ordered
    if lang == "ja":
        assert not any("rotate" in t["transform"] for t in ticks), ticks
        long = next(t for t in ticks if t["text"] == "マット")
        assert long["height"] > 2 * long["width"]  # three characters one under another
    assert_no_error(page)
