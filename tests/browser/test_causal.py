"""The causal-mask page in Chromium: the generation animation's play button plays row by row, without an error."""

import pytest

from tests.browser.conftest import open_page, rerun_after
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.browser

N_TOKENS = 12  # the default preset sentence

# The Plotly graph div that carries animation frames (the generation figure), and what it shows right now.
STATE_JS = """() => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
    .find(g => g._transitionData && g._transitionData._frames && g._transitionData._frames.length > 0);
  if (!gd) return null;
  const z = gd.calcdata[0][0].z;  // the decoded matrix Plotly drew
  let shown = 0;
  for (const row of z) for (const v of row) if (v !== null && Number.isFinite(v)) shown += 1;
  return {frames: gd._transitionData._frames.length, active: gd._fullLayout.sliders[0].active, shown: shown};
}"""


# Samples the generation figure on every animation frame from now on, until it is back at the last token after
# having shown an earlier one: window.__genSeen = [[active, shown], ...], window.__genDone once it has.
RECORD_PLAY_JS = """(last) => {
  const state = %s;
  window.__genSeen = []; window.__genDone = false;
  const sample = () => {
    const s = state();
    if (s) window.__genSeen.push([s.active, s.shown]);
    const seen = window.__genSeen;
    if (s && seen.length > 3 && s.active === last && seen.some(([a]) => a < last)) { window.__genDone = true; return; }
    requestAnimationFrame(sample);
  };
  requestAnimationFrame(sample);
}""" % STATE_JS


def generation_state(page):
    return page.evaluate(STATE_JS)


def close_spurious_page_not_found(page):
    """Streamlit shows a "Page not found" modal over the right page on a server's first deep link (streamlit#9992)."""
    dialog = page.locator("[role='dialog']")
    if dialog.count():
        page.keyboard.press("Escape")
        dialog.wait_for(state="detached", timeout=10_000)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_generation_animation_plays(page, app_url, lang):
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    open_page(page, app_url, "causal", f"lang={lang}")
    page.wait_for_selector(".js-plotly-plot", timeout=60_000)
    close_spurious_page_not_found(page)
    start = generation_state(page)
    assert start == {"frames": N_TOKENS, "active": N_TOKENS - 1, "shown": N_TOKENS * (N_TOKENS + 1) // 2}

    chart = page.locator(".js-plotly-plot").filter(has=page.locator(".updatemenu-button"))
    chart.scroll_into_view_if_needed()
    page.evaluate(RECORD_PLAY_JS, N_TOKENS - 1)
    chart.locator(".updatemenu-button").first.click()  # ▶ Play
    page.wait_for_function("() => window.__genDone", timeout=40_000)
    seen = page.evaluate("window.__genSeen")
    actives = [a for a, _ in seen]
    assert min(actives) <= 1, f"the animation restarts from the first token: {actives}"
    assert actives[-1] == N_TOKENS - 1, f"and plays to the last: {actives}"
    # every frame shows exactly the lower triangle of the rows generated so far
    shown_frames = [now for before, now in zip(seen, seen[1:]) if before == now]  # on screen for 2+ paints, not
    assert len({a for a, _ in shown_frames}) >= N_TOKENS // 2, seen                # caught mid-step
    assert all(shown == (a + 1) * (a + 2) // 2 for a, shown in shown_frames), shown_frames
    assert errors == []
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0



@pytest.mark.parametrize("lang, cat", [("en", "The cat sat on the mat ..."), ("ja", "猫がマットに座った…（英語）")])
def test_a_shorter_preset_after_a_long_one_does_not_crash(page, app_url, lang, cat):
    """As a class met it: "bank" (14 tokens) with both sliders at the end, then the shorter cat
    sentence (11 tokens): the sliders follow, the page draws, no StreamlitValueAboveMaxError."""
    open_page(page, app_url, "causal", f"lang={lang}&causal_preset=bank&causal_generated=14&causal_leak_pos=14")
    close_spurious_page_not_found(page)
    page.wait_for_selector(".js-plotly-plot", timeout=60_000)
    assert generation_state(page)["frames"] == 14
    label = load_strings(lang)["common.preset"]
    page.locator("[data-testid='stSelectbox']").filter(has_text=label).first.click()  # the preset box
    rerun_after(page, page.locator("[role='option']").filter(has_text=cat).first.click)
    page.wait_for_function("(n) => { const s = (%s)(); return s && s.frames === n; }" % STATE_JS, arg=11,
                           timeout=30_000)  # the figure redrawn for the shorter sentence
    state = generation_state(page)
    assert state["frames"] == 11 and state["active"] == 10, state
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    assert "ValueAboveMax" not in page.content()
