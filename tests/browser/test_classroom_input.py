"""What a class types, in Chromium: Japanese on the GloVe pages (lessons 5 and 7), a 10,000-character paste, the
hidden `lang` box on first load, and the text limits on a phone."""

from __future__ import annotations

import pytest

from tests.browser.conftest import RECORD_TOASTS, new_page, open_page, rerun_after
from ui.shared.common import MAX_CHARS, MAX_TOKENS
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.browser

TEXT_BOX = {"causal": "causal_text", "transformer": "transformer_text"}
OPENED = {"causal": "causal_preset=custom", "transformer": ""}
JAPANESE = "生徒は、先生に本を返した。彼女は"
ALERTS = "() => [...document.querySelectorAll('[data-testid=stMain] [data-testid=stAlertContainer]')].map(a => a.innerText)"
PLOTS = "[data-testid=stMain] .js-plotly-plot"


def wait_for_plots(pg, word: str, count: int = 2) -> None:
    """Plotly draws a figure after the run that sent it has finished: wait for `count` plots on the page, the first
    naming `word` (a word of the new text: the plots of the text before do not count)."""
    pg.wait_for_function("([sel, word, count]) => { const plots = document.querySelectorAll(sel); "
                         "return plots.length >= count && plots[0].innerText.includes(word); }",
                         arg=[PLOTS, word, count], timeout=120_000)


def box(pg, key: str):
    return pg.locator(f".st-key-{key} input")


def type_and_send(pg, key: str, text: str) -> None:
    """Replace the box's text as a paste does (one insertText of the whole text), then press Enter."""
    field = box(pg, key)
    field.evaluate("(el, text) => { el.focus(); el.select(); document.execCommand('insertText', false, text); }", text)
    rerun_after(pg, lambda: field.press("Enter"))


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("section", ["causal", "transformer"])
def test_japanese_on_a_glove_page_runs_on_random_vectors_said_once(page, app_url, section, lang):
    strings = load_strings(lang)
    open_page(page, app_url, section, "&".join(q for q in (OPENED[section], f"lang={lang}") if q))
    type_and_send(page, TEXT_BOX[section], JAPANESE)
    alerts = page.evaluate(ALERTS)
    note = strings["common.glove_fallback"].format(seed=0)
    assert sum(note in a for a in alerts) == 1, alerts
    for contradiction in ("英語で入力", "English-only", "英語専用", "GloVe off", "オフにして"):
        assert not [a for a in alerts if contradiction in a], (contradiction, alerts)
    wait_for_plots(page, "生徒")  # the sentence is drawn


@pytest.mark.parametrize("section", ["causal", "transformer"])
def test_a_long_paste_is_cut_to_what_the_page_reads_with_a_notice(page, app_url, section):
    """A 10,000-character paste is neither refused nor emptied: the box keeps the 500 characters the page reads (the
    link too), and a notice says how long it was (tests/browser/test_class_edges.py follows the link)."""
    strings = load_strings("en")
    page.add_init_script(RECORD_TOASTS)
    open_page(page, app_url, section, OPENED[section])
    text = ("the cat sat on the mat " * 450)[:10_000]
    type_and_send(page, TEXT_BOX[section], text)
    page.wait_for_function("([key, n]) => document.querySelector(`.st-key-${key} input`).value.length === n",
                           arg=[TEXT_BOX[section], MAX_CHARS], timeout=30_000)
    assert box(page, TEXT_BOX[section]).input_value() == text[:MAX_CHARS]
    kept = strings["common.text_cut_kept"].format(n=f"{len(text):,}", limit=MAX_CHARS)
    page.wait_for_function("n => window.__toasts.some(t => t.includes(n))", arg=f"{len(text):,}", timeout=60_000)
    assert [toast for toast in page.evaluate("window.__toasts") if kept in toast]
    wait_for_plots(page, "sat")  # the first tokens are drawn (no default sentence has "sat")
    assert not page.locator("[data-testid=stException]").count()


# Every animation frame from the first script on: was the hidden box ever laid out on screen?
WATCH_LANG_BOX = """
window.__langBoxSeen = [];
window.__langBoxFound = false;
const look = () => {
  const el = document.querySelector('.st-key-lang_param');
  if (el) {
    window.__langBoxFound = true;
    const r = el.getBoundingClientRect();
    if (getComputedStyle(el).display !== 'none' && r.width > 2 && r.height > 2) {  // (more than a dot)
      window.__langBoxSeen.push([performance.now(), r.width, r.height]);
    }
  }
  if (performance.now() < 30000) requestAnimationFrame(look);
};
requestAnimationFrame(look);
"""


@pytest.mark.parametrize("url_path", ["", "causal"])
def test_the_lang_box_is_never_on_screen_from_the_first_frame(browser, app_url, url_path):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(WATCH_LANG_BOX)
    pg = new_page(context)
    try:
        open_page(pg, app_url, url_path, "lang=ja")
        assert pg.evaluate("window.__langBoxFound"), "the box is on the page (hidden), so the watch could see it"
        assert pg.evaluate("window.__langBoxSeen") == []
        title = load_strings("ja")[f"{url_path or 'home'}.title"]
        assert pg.locator("[data-testid=stMain] h1").first.inner_text().strip() == title, "the box still sets ?lang="
    finally:
        context.close()


PHONE_UA = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 "
            "Mobile Safari/537.36")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_phone_reads_the_limits_under_the_box(browser, app_url, lang):
    """No tooltip to tap: the limits are a caption right under the text box, inside the screen."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True,
                                  device_scale_factor=2, user_agent=PHONE_UA)
    pg = new_page(context)
    try:
        open_page(pg, app_url, "causal", f"causal_preset=custom&lang={lang}")
        said = load_strings(lang)["common.text_limits"].format(chars=MAX_CHARS, tokens=MAX_TOKENS)
        caption = pg.locator("[data-testid=stCaptionContainer]", has_text=said)
        assert caption.count() == 1
        field, under = box(pg, "causal_text").bounding_box(), caption.bounding_box()
        assert 0 <= under["y"] - (field["y"] + field["height"]) < 60, (field, under)
        assert under["x"] >= 0 and under["x"] + under["width"] <= 390
    finally:
        context.close()
