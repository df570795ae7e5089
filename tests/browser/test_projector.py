"""What a projector shows (issue 13 items 2 and 3): at 1280x720 and 1920x1080, charts keep their text legible (no cell
numbers or labels on top of each other, nothing cut at a chart's edge), and presenter mode makes what a class reads
larger, never smaller, and cuts no label short ("...")."""

from __future__ import annotations

import pytest

from tests.browser.conftest import open_page, wait_for_app
from tests.pages import PAGES

pytestmark = pytest.mark.browser

# Text boxes of one chart that overlap by more than TOLERANCE px both ways; text reaching past the chart's edge.
CHART_TEXT_PROBLEMS = """(tolerance) => {
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > tolerance
                         && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > tolerance;
  const boxes = (p, sel) => [...p.querySelectorAll(sel)].filter(t => t.textContent.trim())
                           .map(t => [t.textContent, t.getBoundingClientRect()]).filter(([, r]) => r.width > 0);
  const problems = [];
  document.querySelectorAll('.js-plotly-plot').forEach((p, i) => {
    const title = (p.querySelector('.gtitle') || {}).textContent || `chart ${i}`;
    const svg = p.querySelector('svg.main-svg').getBoundingClientRect();
    for (const sel of ['g.heatmaplayer text, g.textpoint text', 'g.xtick text', 'g.ytick text']) {
      const b = boxes(p, sel);
      for (let x = 0; x < b.length; x++) for (let y = x + 1; y < b.length; y++)
        if (overlap(b[x][1], b[y][1])) problems.push(`${title}: "${b[x][0]}" overlaps "${b[y][0]}"`);
    }
    for (const [s, r] of boxes(p, 'svg text'))
      if (r.left < svg.left - 1 || r.right > svg.right + 1 || r.top < svg.top - 1 || r.bottom > svg.bottom + 1)
        problems.push(`${title}: "${s}" is cut at the chart's edge`);
  });
  return problems;
}"""


def scroll_through(page) -> None:
    """Scroll the page to its end and back (Streamlit draws a chart when it comes into view)."""
    height = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
    for y in range(0, int(height) + 700, 600):
        page.evaluate(f"document.querySelector('[data-testid=stMain]').scrollTo(0, {y})")
        page.wait_for_timeout(120)
    page.wait_for_timeout(600)


def answer_predictions(page) -> None:
    """Answer every prediction question (its first option), so the figures it hides are drawn too."""
    for _ in range(4):
        groups = page.locator("[data-testid='stRadio']:not(:has(input:checked))")
        if groups.count() == 0:
            return
        groups.first.locator("label").first.click()
        wait_for_app(page)


@pytest.fixture
def projector(browser, request):
    width, height = request.param
    context = browser.new_context(viewport={"width": width, "height": height})
    pg = context.new_page()
    yield pg
    context.close()


@pytest.mark.parametrize("projector", [(1280, 720)], indirect=True)
@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("url_path", [p.url_path for p in PAGES if p.url_path != "qkv"] + ["qkv"])
def test_chart_text_is_legible_at_1280x720(projector, app_url, url_path, lang):
    open_page(projector, app_url, url_path, f"lang={lang}")
    answer_predictions(projector)
    scroll_through(projector)
    assert projector.locator(".js-plotly-plot").count() >= 1
    assert projector.evaluate(CHART_TEXT_PROBLEMS, 2) == []


FORTY_WORDS = "+".join(["the", "animal", "did", "not", "cross", "street", "because", "it", "was", "tired"] * 4)


@pytest.mark.parametrize("projector", [(1280, 720)], indirect=True)
@pytest.mark.parametrize("url_path,query", [("causal", f"causal_preset=custom&causal_text={FORTY_WORDS}"),
                                            ("self-attention", f"sa_text={FORTY_WORDS}")])
def test_a_40_token_sentence_keeps_its_heat_maps_legible(projector, app_url, url_path, query):
    open_page(projector, app_url, url_path, query)
    answer_predictions(projector)
    scroll_through(projector)
    assert projector.locator("g.heatmaplayer").count() >= 1
    assert projector.evaluate(CHART_TEXT_PROBLEMS, 2) == []
