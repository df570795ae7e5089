"""What a class does between questions, in Chromium: lesson 8's answered predictions stay answered (and shown as
answered) through a long -> short -> one word -> back sequence of sentences, and through a visit to another page by
the sidebar and back; the model view comes back without a new answer."""

from __future__ import annotations

import pytest

from tests.browser.conftest import new_page, open_page, rerun_after, wait_for_app

pytestmark = pytest.mark.browser

QUESTIONS = ("pretrained_predict", "pretrained_switch_predict")
MODEL_VIEW = "[data-testid='stVegaLiteChart']"
LONG = "The animal did not cross the street because it was too tired"


def checked(pg) -> dict:
    """Each question's checked option (its label's text), or None if unanswered, or 'not drawn'."""
    return pg.evaluate("""(keys) => Object.fromEntries(keys.map(k => {
        const box = document.querySelector('.st-key-' + k);
        if (!box) return [k, 'not drawn'];
        const input = box.querySelector('input:checked');
        return [k, input ? input.closest('label').innerText.trim() : null]; }))""", list(QUESTIONS))


def type_sentence(pg, text: str) -> None:
    box = pg.locator(".st-key-pretrained_text input")
    box.fill(text)
    rerun_after(pg, lambda: box.press("Enter"))


@pytest.fixture
def lesson8(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = new_page(context)
    open_page(pg, app_url, "trained-model", f"lang=en&pretrained_preset=custom&pretrained_text={LONG}")
    pg.wait_for_selector(".st-key-pretrained_predict", timeout=120_000)
    for key in QUESTIONS:
        rerun_after(pg, pg.locator(f".st-key-{key} [role='radiogroup'] label").first.click)
    pg.wait_for_selector(MODEL_VIEW, timeout=120_000)
    pg.answers = checked(pg)
    assert None not in pg.answers.values() and "not drawn" not in pg.answers.values()
    yield pg
    context.close()


def test_answers_survive_long_short_one_word_and_back(lesson8):
    pg = lesson8
    for text in ("The cat sat on the mat", "cat", LONG):
        type_sentence(pg, text)
        assert pg.locator("[data-testid='stException']").count() == 0
        assert checked(pg) == pg.answers, f"after {text!r}"
        if text == "cat":
            assert pg.locator("[data-testid='stAlert']", has_text="two words").count() == 1
            assert pg.locator(MODEL_VIEW).count() == 0
    pg.wait_for_selector(MODEL_VIEW, timeout=60_000)  # back without answering again


def test_answers_survive_a_visit_to_another_page_by_the_sidebar(lesson8):
    pg = lesson8
    rerun_after(pg, pg.locator("[data-testid='stSidebarNavLink'][href$='/causal']").click)
    pg.wait_for_selector(".st-key-causal_predict", timeout=60_000)
    assert pg.locator(".st-key-pretrained_predict").count() == 0
    rerun_after(pg, pg.locator("[data-testid='stSidebarNavLink'][href$='/trained-model']").click)
    pg.wait_for_selector(".st-key-pretrained_predict", timeout=120_000)
    wait_for_app(pg)
    assert checked(pg) == pg.answers
    pg.wait_for_selector(MODEL_VIEW, timeout=60_000)
