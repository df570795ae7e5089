"""Back and Forward in a real browser: a lesson's settings, left by a sidebar link, come back with Back, in the URL and
in every widget; Forward returns to the other page as it was. (Streamlit 1.67 adds a history entry without the
page's bound parameters when a sidebar link leaves it; ui.shared.links.follow_history puts the link back.)"""

import re

import pytest

from tests.browser.conftest import choose, new_page, open_page, rerun_after
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.browser
EN = load_strings("en")


# Every widget a person reads a setting from in the main area (switches, choices, sliders), read once it has stayed the
# same for 5 animation frames with no widget left as a loading skeleton.
VIEW_JS = """() => new Promise(resolve => {
  const read = () => {
    const main = document.querySelector("[data-testid='stMain']");
    if (!main || main.querySelector("[data-testid='stSkeleton']")) return null;  // (a widget's code still loading)
    const all = (selector, get) => [...main.querySelectorAll(selector)].map(get);
    return JSON.stringify({
      title: main.querySelector('h1')?.innerText ?? '',
      switches: all("[data-testid='stCheckbox'] input", e => e.checked),
      choices: all("[data-testid='stSelectbox'] input", e => e.value),
      sliders: all("input[type='range']", e => e.getAttribute('aria-valuetext')),
    });
  };
  let last = null, same = 0;
  const look = () => {
    const now = read();
    same = now !== null && now === last ? same + 1 : 0;
    last = now;
    if (same >= 5) resolve(JSON.parse(now)); else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})"""


def view_of(page) -> dict:
    return page.evaluate(VIEW_JS)


def query_of(url: str) -> set[str]:
    return set(url.split("?", 1)[1].split("&")) if "?" in url else set()


def switch(page, label: str) -> None:
    rerun_after(page, page.get_by_test_id("stMain").get_by_text(label, exact=True).click)


def nudge(page, index: int, key: str) -> None:
    """Move the main area's slider ``index`` one step with the keyboard (and wait for the run it starts)."""
    thumb = page.get_by_test_id("stMain").get_by_role("slider").nth(index)
    thumb.focus()
    rerun_after(page, lambda: thumb.press(key))


def settle_lesson_8(page) -> set[str]:
    from attention_core.pretrained.sets import load_pretrained_sets

    choose(page, EN["pretrained.preset"], load_pretrained_sets().presets[1])
    switch(page, EN["pretrained.hide_special"])
    return {"pretrained_preset=1", "pretrained_hide_special=true"}


def settle_self_attention(page) -> set[str]:
    from attention_core.self_attention import load_self_attention

    data = load_self_attention()
    cat = data.by_id(data.default_for("en"))
    choose(page, EN["self_attention.token"], f"{cat.tokens[1]} (2)")
    nudge(page, 0, "ArrowLeft")  # the cut-off, 0.80 -> 0.75
    return {"sa_token=1", "sa_cutoff=0.75"}


def settle_scaling(page) -> set[str]:
    switch(page, EN["scaling.scale"])  # inside the page's fragment: the run is a fragment run
    nudge(page, 2, "ArrowRight")  # the number of keys, one more
    return {"scaling_scale=false"}


LESSONS = [  # (url_path, how to change its settings -> parameters the URL must hold, where the sidebar goes)
    ("trained-model", settle_lesson_8, EN["nav.scaling"]),
    ("self-attention", settle_self_attention, EN["nav.causal"]),
    ("scaling", settle_scaling, EN["nav.self_attention"]),
]


def go_to(page, name: str) -> None:
    rerun_after(page, page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True).click)


def back_or_forward(page, step) -> None:
    rerun_after(page, step)  # the run the browser's Back/Forward starts (a restored link runs once more)


@pytest.mark.parametrize("url_path, settle, elsewhere", LESSONS, ids=[lesson[0] for lesson in LESSONS])
def test_back_after_a_sidebar_link_restores_the_lessons_settings(browser, app_url, url_path, settle, elsewhere):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = new_page(context)
        open_page(page, app_url, url_path, timeout=300_000)  # (lesson 8 loads its model on a cold server)
        default_view = view_of(page)
        wanted = settle(page)
        page.wait_for_url(lambda url: wanted <= query_of(url), timeout=10_000)
        before_url, before = page.url, view_of(page)
        assert before != default_view

        go_to(page, elsewhere)
        page.wait_for_url(lambda url: f"/{url_path}" not in url, timeout=10_000)
        there_url, there = page.url, view_of(page)

        back_or_forward(page, page.go_back)
        page.wait_for_url(re.compile(f"/{url_path}"), timeout=10_000)
        page.wait_for_url(before_url, timeout=30_000)  # the link comes back (a second run when it was restored)
        assert view_of(page) == before, "after Back every widget shows the settings in the URL"

        back_or_forward(page, page.go_forward)
        page.wait_for_url(there_url, timeout=30_000)
        assert view_of(page) == there, "Forward shows the other page as it was"

        back_or_forward(page, page.go_back)
        page.wait_for_url(before_url, timeout=30_000)
        assert view_of(page) == before, "Back again: the same settings"
        assert page.get_by_test_id("stException").count() == 0
    finally:
        context.close()
