"""Sharing in a real browser: a CSV download carries the numbers on screen, and a copied URL reopens the same view.

The presenter switch has its own browser test in test_classroom.py.
"""

import csv
import io
import re

import numpy as np
import pytest

from attention_core.self_attention import load_self_attention, preset_heads
from tests.browser.conftest import charts_drawn, choose, new_page, open_page, rerun_after, wait_for_app

pytestmark = pytest.mark.browser


def view_of(page) -> dict:
    """What a person sees that defines the view: the chosen options, the slider values, the captions."""
    boxes = page.get_by_test_id("stSelectbox")
    return {
        "selected": [boxes.nth(i).get_by_role("combobox").input_value() for i in range(boxes.count())],
        "sliders": [s.input_value() for s in page.locator("[data-testid='stMain'] input[type='range']").all()],
        "title": page.locator("h1").first.inner_text(),
        "captions": page.get_by_test_id("stCaptionContainer").all_inner_texts(),
    }


def test_csv_download_has_the_matrix_on_screen(page, app_url):
    open_page(page, app_url, "self-attention", "sa_preset=cat")
    with page.expect_download() as info:
        page.get_by_role("button", name="Download the coreference matrix (CSV)").click()
    download = info.value
    assert download.suggested_filename == "self_attention_cat.csv"
    rows = list(csv.reader(io.StringIO(open(download.path(), encoding="utf-8").read())))
    data = load_self_attention()
    preset = data.by_id("cat")
    expected = preset_heads(preset, data.rule_score)[0]
    assert rows[0][1:] == [f"{i + 1}:{tok}" for i, tok in enumerate(preset.tokens)]
    weights = np.array([[float(x) for x in row[1:]] for row in rows[1:]])
    assert weights.shape == (len(preset.tokens), len(preset.tokens))
    np.testing.assert_allclose(weights, expected, atol=1e-6)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)


def test_copied_url_reopens_the_same_view(page, app_url, browser):
    open_page(page, app_url, "self-attention", "lang=ja")
    data = load_self_attention()
    hanako = data.by_id("hanako")
    choose(page, "文", hanako.label)  # the preset sentence (its label is the sentence itself)
    choose(page, "選択中のトークン", f"{hanako.tokens[0]} (1)")
    thumb = page.locator("[data-testid='stMain'] input[type='range']").first
    thumb.focus()
    thumb.press("ArrowLeft")  # from the default 0.80, two steps of 0.05
    rerun_after(page, lambda: thumb.press("ArrowLeft"))  # (the run of the last key press is the one that counts)
    page.wait_for_url(re.compile(r"sa_cutoff=0\.7(&|$)"), timeout=10_000)
    wait_for_app(page)
    url = page.url
    assert {"sa_preset=hanako", "sa_token=0", "sa_cutoff=0.7", "lang=ja"} <= set(url.split("?")[1].split("&"))
    before = view_of(page)
    assert hanako.label in before["selected"] and before["sliders"] == ["0.7"] and len(before["captions"]) > 3

    other = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        fresh = new_page(other)
        fresh.goto(url)
        fresh.wait_for_selector("[data-testid='stApp']", timeout=60_000)
        fresh.locator("[data-testid='stMain'] input[type='range']").first.wait_for(timeout=60_000)
        wait_for_app(fresh)
        assert fresh.get_by_test_id("stException").count() == 0
        assert view_of(fresh) == before
    finally:
        other.close()


def tick_font_px(page) -> float:
    page.wait_for_selector(".js-plotly-plot .xtick text", timeout=60_000)
    return page.locator(".js-plotly-plot .xtick text").first.evaluate("e => parseFloat(e.style.fontSize)")


def test_presenter_mode_enlarges_figure_text_in_dark_theme(page, app_url):
    open_page(page, app_url, "", "embed_options=dark_theme")
    normal = tick_font_px(page)
    open_page(page, app_url, "", "embed_options=dark_theme&presenter=true")
    assert tick_font_px(page) >= max(16.0, normal * 1.2)
    background = page.evaluate("getComputedStyle(document.querySelector('.stApp')).backgroundColor")
    channels = [int(c) for c in re.findall(r"\d+", background)[:3]]
    assert max(channels) < 80, background  # still the dark theme: presenter mode changes sizes, not colours


# --- Back/Forward: one history entry per page change, and Back restores the view -----------------
def open_patiently(page, app_url: str, url_path: str, query: str = "") -> None:
    """Open_page with room for a cold server (GloVe loading) on a busy machine."""
    open_page(page, app_url, url_path, query, timeout=180_000)


def history_length(page) -> int:
    return page.evaluate("history.length")


def go_to_page(page, name: str) -> None:
    rerun_after(page, page.get_by_test_id("stSidebarNav").get_by_role("link", name=name).click)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_page_change_is_one_history_entry_and_back_restores_the_view(page, app_url, lang):
    from ui.shared.i18n import load_strings

    nav = load_strings(lang)
    open_patiently(page, app_url, "self-attention", "" if lang == "en" else "lang=ja")
    data = load_self_attention()
    cat = data.by_id(data.default_for(lang))  # each language opens on its own sentence
    choose(page, nav["self_attention.token"], f"{cat.tokens[1]} (2)")
    page.wait_for_url(re.compile(r"sa_token=1(&|$)"), timeout=10_000)
    before_url, before = page.url, view_of(page)
    length = history_length(page)

    go_to_page(page, nav["nav.causal"])
    page.wait_for_url(re.compile(r"/causal"), timeout=10_000)
    assert history_length(page) == length + 1, "one entry per page change"
    assert ("lang=ja" in page.url) == (lang == "ja")

    rerun_after(page, page.go_back)  # (the old page stays on screen, settled, until the new run has drawn)
    page.wait_for_url(re.compile(r"/self-attention"), timeout=10_000)
    assert page.url == before_url
    assert view_of(page) == before, "Back restores the previous view with its settings"

    rerun_after(page, page.go_forward)
    page.wait_for_url(re.compile(r"/causal"), timeout=10_000)
    assert page.get_by_test_id("stException").count() == 0


# --- offline: nothing leaves the machine ----------------------------------------------------------
def test_no_request_leaves_the_machine(page, app_url):
    from urllib.parse import urlparse

    from tests.pages import PAGES

    outside = []
    page.on("request", lambda r: outside.append(r.url)
            if urlparse(r.url).scheme in ("http", "https", "ws", "wss")
            and urlparse(r.url).hostname not in ("127.0.0.1", "localhost") else None)
    for lang in ("en", "ja"):
        for info in PAGES:
            open_patiently(page, app_url, info.url_path, "lang=ja" if lang == "ja" else "")
            charts_drawn(page)  # the charts' own requests (fonts, images) are made while they draw
            page.wait_for_load_state("networkidle")
    icon = page.evaluate("document.querySelector(\"link[rel~='icon']\")?.href || ''")
    assert urlparse(icon).hostname in ("127.0.0.1", "localhost"), icon
    assert outside == []
