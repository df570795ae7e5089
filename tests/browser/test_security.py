"""Hostile text in a real browser: HTML and Markdown typed into a lesson render as text, run nothing, open no
dialog; and two browsers (two contexts: separate cookies, separate sessions) never see each other's sentence."""

from __future__ import annotations

import pytest

from tests.browser.conftest import new_page, open_page, rerun_after
from ui.shared.i18n import Translator

pytestmark = pytest.mark.browser

EN = Translator("en")
PAYLOADS = {
    "script": "<script>alert(1)</script> it",
    "img_onerror": "<img src=x onerror=alert(1)> it",
    "markdown_link": "[x](javascript:alert(1)) **bold** it",
    "latex": "$x$ $$y$$ \\( z \\) it",
}
# Random word vectors (GloVe off): every token of the typed text becomes a word on screen, in captions and figures.
CAUSAL_CUSTOM = "causal_preset=custom&causal_glove=false"

INJECTED_JS = """() => ({
  scripts: Array.from(document.scripts).filter(s => s.textContent.includes('alert(1)')).length,
  imgs: document.querySelectorAll('img[src="x"], img[onerror]').length,
  js_links: document.querySelectorAll('a[href^="javascript:" i]').length,
  bold: Array.from(document.querySelectorAll('[data-testid="stMain"] strong'))
             .filter(b => b.textContent.trim() === 'bold').length,
  katex: document.querySelectorAll('[data-testid="stMain"] .katex').length,
})"""


def close_spurious_page_not_found(page):
    """Streamlit can show a "Page not found" modal over the right page on a server's first deep link (streamlit#9992)."""
    dialog = page.locator("[role='dialog']")
    if dialog.count():
        page.keyboard.press("Escape")
        dialog.wait_for(state="detached", timeout=10_000)


def type_into(page, label: str, text: str) -> None:
    """Type ``text`` into the box and wait for the run it starts to end and the page to settle."""
    box = page.get_by_label(label, exact=True)
    box.fill(text)
    rerun_after(page, lambda: box.press("Enter"))


def main_text(page) -> str:
    return page.locator("[data-testid='stMain']").inner_text()


@pytest.mark.parametrize("name", list(PAYLOADS))
def test_hostile_text_renders_as_text_and_runs_nothing(page, app_url, name):
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_page(page, app_url, "causal", CAUSAL_CUSTOM)  # settled: title and the page's own formulas drawn
    close_spurious_page_not_found(page)
    before = page.evaluate(INJECTED_JS)
    assert before["katex"] >= 1, "the page's own formula is drawn before counting"
    payload = PAYLOADS[name]
    type_into(page, EN("causal.text_label"), payload)

    assert page.dialogs == [] and errors == []
    assert page.get_by_label(EN("causal.text_label"), exact=True).input_value() == payload  # kept literally
    after = page.evaluate(INJECTED_JS)
    assert after["scripts"] == 0 and after["imgs"] == 0 and after["js_links"] == 0, after
    assert after["bold"] == 0, "user text became bold Markdown"
    assert after["katex"] == before["katex"], "user text became LaTeX"
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    # The text's words are on screen as plain text: the page shows the tokens it attends over.
    shown = main_text(page)
    for word in {"script": ["script", "alert"], "img_onerror": ["onerror", "src"],
                 "markdown_link": ["javascript", "bold"], "latex": ["$", "z"]}[name]:
        assert word in shown, word


def glove_sentence(page, text: str) -> None:
    type_into(page, EN("glove.sentence_label"), text)


def words_on_screen(page) -> str:
    """The caption listing the sentence's words: "<n> words with GloVe vectors, in order: the · cat · ..."."""
    prefix = EN("glove.vectors_note", n=11, words="").split("11")[1].strip()  # "words with GloVe vectors, in order:"
    return page.get_by_text(prefix, exact=False).first.inner_text()


def test_two_browsers_never_see_each_others_sentence(browser, app_url):
    """Two contexts (two students) on the GloVe page, each with its own sentence, taking turns."""
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2)]
    try:
        a, b = (new_page(context) for context in contexts)
        for pg in (a, b):
            open_page(pg, app_url, "glove")
            close_spurious_page_not_found(pg)
        glove_sentence(a, "the cat sat on the mat because it was tired")
        glove_sentence(b, "the dog ran to the park because it was happy")
        rerun_after(a, a.get_by_role("button", name=EN("glove.reroll")).click)  # a runs again after b's change
        for pg, mine, theirs in ((a, "cat", "dog"), (b, "dog", "cat")):
            box = pg.get_by_label(EN("glove.sentence_label"), exact=True)
            assert mine in box.input_value() and theirs not in box.input_value()
            words = words_on_screen(pg).split(":", 1)[1].split("·")
            assert mine in [w.strip() for w in words] and theirs not in [w.strip() for w in words], words
        assert a.dialogs == [] and b.dialogs == []
    finally:
        for context in contexts:
            context.close()
