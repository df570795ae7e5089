"""The scaling page's d animation in a real browser: the play button exists and playing advances the frames."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import new_page, open_page, rerun_after, wait_still
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.browser

PLAY = {"en": "▶ Play", "ja": "▶ 再生"}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_play_button_sweeps_d_from_4_to_1024(page, app_url, lang):
    # Open the app's root once first: on a fresh server whose very first visit is a sub-page, Streamlit 1.67 runs
    # a pages/ folder as a v1 multipage app until st.navigation has run once (why the lessons live in lessons/).
    open_page(page, app_url, "", f"lang={lang}")
    open_page(page, app_url, "scaling", f"lang={lang}")
    header = {"en": "Watch d grow", "ja": "d を大きくしていく"}[lang]
    expect(page.get_by_role("heading", name=header)).to_have_count(0)  # the d player waits below the question
    rerun_after(page, page.locator("[data-testid='stMain'] [data-testid='stRadio'] [role='radiogroup'] label").first.click)
    anim = page.locator(".js-plotly-plot").filter(has=page.locator("g.slider-group")).first
    anim.scroll_into_view_if_needed()
    label = anim.locator("g.slider-group > text.slider-label")
    expect(label).to_have_text("d = 4", timeout=30_000)
    bars_before = anim.evaluate("el => Array.from(el._fullData[0].y)")
    assert len(bars_before) == 16  # the default number of keys: the 16 the question and the table use

    play = anim.locator(".updatemenu-button").filter(has_text=PLAY[lang])
    expect(play).to_have_count(1)
    play.click()
    expect(label).not_to_have_text("d = 4", timeout=15_000)
    expect(label).to_have_text("d = 1024", timeout=30_000)

    assert anim.evaluate("el => el._fullLayout.sliders[0].active") == 8
    assert anim.evaluate("el => Array.from(el._fullData[0].y)") != bars_before
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    assert page.dialogs == []


# Text of one chart's furniture (panel titles, figure title, slider labels, play/pause) that overlaps other such
# text, or reaches past the chart's edge (titles cut at the top, "d = 1024" cut at the right,
# titles on top of each other on a phone).
FURNITURE_PROBLEMS = """(el) => {
  const svg = el.querySelector('svg.main-svg').getBoundingClientRect();
  const items = [...el.querySelectorAll('g.annotation text, .gtitle, g.slider-group > text.slider-label, '
                                         + 'g.updatemenu-button text')]
      .filter(t => t.textContent.trim()).map(t => [t.textContent, t.getBoundingClientRect()])
      .filter(([, r]) => r.width > 0);
  const problems = [];
  for (const [s, r] of items)
    if (r.left < svg.left - 1 || r.right > svg.right + 1 || r.top < svg.top - 1 || r.bottom > svg.bottom + 1)
      problems.push(`"${s}" is cut at the chart's edge`);
  for (let a = 0; a < items.length; a++) for (let b = a + 1; b < items.length; b++) {
    const [p, q] = [items[a][1], items[b][1]];
    if (Math.min(p.right, q.right) - Math.max(p.left, q.left) > 1 && Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top) > 1)
      problems.push(`"${items[a][0]}" overlaps "${items[b][0]}"`);
  }
  return problems;
}"""


@pytest.fixture
def sized(browser, request):
    width, height = request.param
    context = browser.new_context(viewport={"width": width, "height": height})
    yield new_page(context)
    context.close()


@pytest.mark.parametrize("sized,presenter", [((390, 844), False), ((1280, 720), True), ((1920, 1080), True)],
                         indirect=["sized"], ids=["phone", "projector-720", "projector-1080"])
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_no_chart_title_or_label_is_cut_or_overlapping(sized, presenter, app_url, lang):
    page = sized
    open_page(page, app_url, "", f"lang={lang}")
    open_page(page, app_url, "scaling", f"lang={lang}" + ("&presenter=true" if presenter else ""))
    rerun_after(page, page.locator("[data-testid='stMain'] [data-testid='stRadio'] [role='radiogroup'] label").first.click)  # reveal
    charts = page.locator(".js-plotly-plot")
    expect(charts).to_have_count(5, timeout=30_000)
    anim = charts.filter(has=page.locator("g.updatemenu-button")).first
    anim.scroll_into_view_if_needed()
    anim.locator(".updatemenu-button").first.click()  # play through to d = 1024, the widest label
    expect(anim.locator("g.slider-group > text.slider-label")).to_have_text("d = 1024", timeout=30_000)
    for i in range(charts.count()):
        chart = charts.nth(i)
        chart.scroll_into_view_if_needed()
        wait_still(chart)
        assert chart.evaluate(FURNITURE_PROBLEMS) == [], f"chart {i}"
    assert page.locator("[data-testid='stException']").count() == 0


def test_the_sampling_temperature_slider_runs_in_the_browser(page, app_url):
    open_page(page, app_url, "", "lang=en")
    open_page(page, app_url, "scaling", "lang=en")
    # the temperature chart by its title (a busy machine may not have drawn the page's last chart yet)
    chart = page.locator(".js-plotly-plot", has=page.locator(".gtitle", has_text="τ = "))
    expect(chart).to_have_count(1, timeout=60_000)
    chart.scroll_into_view_if_needed()
    title = chart.locator(".gtitle")
    expect(title).to_contain_text("τ = 1 ", timeout=30_000)
    before = chart.evaluate("el => Array.from(el._fullData[0].y)")
    rail = chart.locator("g.slider-group rect.slider-rail-rect").first
    box = rail.bounding_box()
    page.mouse.click(box["x"] + box["width"] - 2, box["y"] + box["height"] / 2)  # the last step: tau = 20
    expect(title).to_contain_text("τ = 20 ", timeout=10_000)
    after = chart.evaluate("el => Array.from(el._fullData[0].y)")
    assert max(after) < max(before) and max(after) - min(after) < 0.05  # flat: every word about equally likely
    assert page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").count() == 1


def test_a_control_inside_the_fragment_still_writes_the_link(page, app_url):
    """The controls live in a fragment (a change reruns only that section); the link must still follow them."""
    open_page(page, app_url, "", "lang=en")
    open_page(page, app_url, "scaling", "lang=en")
    d_slider = page.locator("[data-testid='stMain'] [data-testid='stSlider']").filter(
        has_text=load_strings("en")["scaling.d"])  # by its label: CI once pressed End on the keys slider (.first)
    thumb = d_slider.locator("input[type='range']")
    expect(thumb).to_have_count(1, timeout=30_000)
    thumb.focus()
    expect(thumb).to_be_focused()
    rerun_after(page, lambda: page.keyboard.press("End"))  # a fragment run ends like a full one
    page.wait_for_function("() => location.search.includes('scaling_d=1024')", timeout=15_000)
    expect(page.locator("[data-testid='stMetricValue']").nth(0)).not_to_have_text("", timeout=15_000)
    assert page.locator("[data-testid='stException']").count() == 0
