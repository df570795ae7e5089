"""What a projector shows: every page in both languages renders with its charts and no
exception, error or dialog; at 1280x720 and 1920x1080, charts keep their text legible (no cell numbers or labels
on top of each other, nothing cut at a chart's edge), tables fit the page and their content fits their frame, and
presenter mode makes what a class reads larger, never
smaller, and cuts no label short ("...")."""

from __future__ import annotations

import pytest

from tests.browser.conftest import charts_drawn, new_page, open_page, rerun_after, wait_still
from tests.pages import PAGES
from ui.shared.i18n import load_strings

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


# Tables (st.dataframe's canvas grid, st.table's HTML) whose frame runs past the page's column, or whose content is
# wider than their frame (the grid then scrolls sideways: its right-hand columns are cut at the frame's edge). A grid
# not drawn yet (in a closed expander) has no scroller and is not measured. -> {measured, problems}
TABLE_PROBLEMS = """() => {
  const main = document.querySelector('[data-testid=stMainBlockContainer]').getBoundingClientRect();
  const problems = [];
  let measured = 0;
  document.querySelectorAll('[data-testid=stDataFrame], [data-testid=stTable]').forEach((e, i) => {
    const r = e.getBoundingClientRect();
    const grid = e.querySelector('.dvn-scroller'), table = e.querySelector('table');
    if (r.width === 0 || !(grid || table)) return;
    measured++;
    if (r.right > main.right + 1 || r.left < main.left - 1)
      problems.push(`table ${i}: its frame (${Math.round(r.left)}..${Math.round(r.right)} px) runs past the page`);
    const [content, frame] = grid ? [grid.scrollWidth, grid.clientWidth] : [table.getBoundingClientRect().width, r.width];
    if (content > frame + 1) problems.push(`table ${i}: its content is ${Math.round(content)} px wide in a ${Math.round(frame)} px frame`);
  });
  return {measured, problems};
}"""

# Pages whose tables are known to fail TABLE_PROBLEMS (reported to their owners), and in which mode; a table problem
# anywhere else fails the test. Lessons 5 and 7 must draw at least one table that fits.
KNOWN_TABLE_PROBLEMS = {
    # lesson 3's number matrices (a column per token or per feature, ui.shared.common.data_table(matrix=True)): numbers do
    # not wrap, so on a projector the zoomed grid scrolls sideways inside its frame (it never runs past the page)
    "self-attention": {"presenter"},
}
TABLES_AT_LEAST = {"causal": 1, "transformer": 1}


def table_problems(page, url_path: str, mode: str) -> list[str]:
    """The page's table problems (TABLE_PROBLEMS) that are not known for this page and mode; known ones are returned
    as ["known: ..."]."""
    found = page.evaluate(TABLE_PROBLEMS)
    assert found["measured"] >= TABLES_AT_LEAST.get(url_path, 0), f"/{url_path}: no table measured"
    known = mode in KNOWN_TABLE_PROBLEMS.get(url_path, set())
    return [("known: " if known else "") + p for p in found["problems"]]


def scroll_through(page) -> None:
    """Scroll the page to its end (Streamlit draws a chart when it comes into view), until every chart is drawn and
    the page has stopped moving."""
    main = page.locator("[data-testid='stMain']")
    height = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
    for y in range(0, int(height) + 700, 600):
        page.evaluate(f"document.querySelector('[data-testid=stMain]').scrollTo(0, {y})")
        wait_still(main)
    charts_drawn(page)
    for i in range(page.locator(".js-plotly-plot").count()):
        wait_still(page.locator(".js-plotly-plot").nth(i))


def answer_predictions(page) -> None:
    """Answer every prediction question (its first option), so the figures it hides are drawn too. (The group's
    first <label> is its question: the first option is the first label inside the radiogroup.)"""
    groups = page.locator("[data-testid='stRadio']:not(:has(input:checked))")
    for _ in range(8):  # lesson 9 asks six
        if groups.count() == 0:
            return
        rerun_after(page, groups.first.locator("[role='radiogroup'] label").first.click)
    assert groups.count() == 0, "a prediction question is still unanswered"


@pytest.fixture
def projector(browser, request):
    width, height = request.param
    context = browser.new_context(viewport={"width": width, "height": height})
    yield new_page(context)
    context.close()


def assert_rendered(page) -> None:
    page.wait_for_selector(".js-plotly-plot", timeout=60_000)  # (drawn after the run, as it comes into view)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    assert page.dialogs == []


# Charts known to fail the check (reported to the charts' owners), by page: the title key of the chart (None for an
# untitled chart: its index). A problem of any other chart fails the test.
KNOWN_PROBLEMS = {
    "summary": ["summary.fig_rnn"],  # lesson 1's influence chart again (its long sentence's words overlap)
}


def known_prefixes(url_path: str, lang: str) -> list[str]:
    """How CHART_TEXT_PROBLEMS starts a problem of each known chart (its title's first characters: it may wrap)."""
    strings = load_strings(lang)
    prefixes = []
    for known in KNOWN_PROBLEMS.get(url_path, []):
        key, values = known if isinstance(known, tuple) else (known, {})
        prefixes.append(f"chart {key}: " if isinstance(key, int) else strings[key].format(**values)[:12])
    return prefixes


@pytest.mark.parametrize("projector", [(1280, 720)], indirect=True)
@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("url_path", [p.url_path for p in PAGES])
def test_every_page_renders_and_its_chart_text_is_legible_at_1280x720(projector, app_url, url_path, lang):
    open_page(projector, app_url, url_path, f"lang={lang}")
    assert_rendered(projector)
    answer_predictions(projector)
    scroll_through(projector)
    assert_rendered(projector)
    problems = projector.evaluate(CHART_TEXT_PROBLEMS, 2)
    known = [p for p in problems if any(p.startswith(prefix) for prefix in known_prefixes(url_path, lang))]
    tables = table_problems(projector, url_path, "normal")
    assert [p for p in problems if p not in known] + [p for p in tables if not p.startswith("known: ")] == []
    known += tables
    if known:
        pytest.xfail(f"known (KNOWN_PROBLEMS): {known[:2]}")


FORTY_WORDS = "+".join(["the", "animal", "did", "not", "cross", "street", "because", "it", "was", "tired"] * 4)


@pytest.mark.parametrize("projector", [(1280, 720)], indirect=True)
@pytest.mark.parametrize("url_path,query", [("causal", f"causal_preset=custom&causal_text={FORTY_WORDS}")])
def test_a_40_token_sentence_keeps_its_heat_maps_legible(projector, app_url, url_path, query):
    open_page(projector, app_url, url_path, query)
    answer_predictions(projector)
    scroll_through(projector)
    assert projector.locator("g.heatmaplayer").count() >= 1
    assert projector.evaluate(CHART_TEXT_PROBLEMS, 2) == []


# --- presenter mode: larger, never smaller, and nothing cut short -------------------------------

FONT_SIZES = """() => {
  const px = (sel) => { const e = [...document.querySelectorAll(sel)].find(e => e.getBoundingClientRect().width > 0);
                        return e ? parseFloat(getComputedStyle(e).fontSize) : null; };
  const zoomed = (sel, base) => { const e = document.querySelector(sel);
                                  return e ? base * parseFloat(getComputedStyle(e).zoom || '1') : null; };
  return {
    'metric value': px('[data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p')
                    || px('[data-testid="stMetricValue"]'),
    'metric label': px('[data-testid="stMetricLabel"] p'),
    'widget label': px('.stMain [data-testid="stWidgetLabel"] p'),
    'toggle label': px('.stMain [data-testid="stCheckbox"] [data-testid="stMarkdownContainer"] p'),
    'select box': px('[data-testid="stSelectbox"] input'),
    'number input': px('[data-testid="stNumberInput"] input'),
    'text input': px('[data-testid="stTextInput"] input'),
    'paragraph': px('.stMain [data-testid="stMarkdownContainer"] p'),
    'caption': px('.stMain [data-testid="stCaptionContainer"]'),
    'button': px('.stMain button p'),
    'sidebar link': px('[data-testid="stSidebarNavLink"] span'),
    'table (canvas, as zoom x 14 px)': zoomed('[data-testid="stDataFrame"]', 14),
  };
}"""

# Text cut short: an element whose own text is wider than its box while the box hides the rest ("..." or clipped).
CLIPPED_LABELS = """() => {
  const cut = [];
  document.querySelectorAll('[data-testid="stAppViewContainer"] *').forEach(e => {
    if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) return;
    if (e.closest('.js-plotly-plot, [data-testid="stDataFrame"], .katex, [data-testid="stCode"], pre')) return;
    const r = e.getBoundingClientRect();
    if (r.width <= 2 || r.right <= 0 || r.left >= innerWidth || (e.tagName === 'A' && e.getAttribute('href')?.startsWith('#'))) return;
    for (let box = e, depth = 0; box && depth < 4; box = box.parentElement, depth++) {
      const cs = getComputedStyle(box);
      const hides = cs.textOverflow === 'ellipsis' || ['hidden', 'clip'].includes(cs.overflowX);
      if (hides && box.scrollWidth > box.clientWidth + 1) { cut.push(e.textContent.trim().slice(0, 60)); break; }
    }
  });
  return cut;
}"""


@pytest.mark.parametrize("projector", [(1280, 720), (1920, 1080)], indirect=True, ids=["1280x720", "1920x1080"])
@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("url_path", [p.url_path for p in PAGES])
def test_presenter_mode_is_larger_and_cuts_no_label(projector, app_url, url_path, lang):
    open_page(projector, app_url, url_path, f"lang={lang}")
    normal = projector.evaluate(FONT_SIZES)
    open_page(projector, app_url, url_path, f"lang={lang}&presenter=true")
    # The page can settle a moment before the presenter style sheet applies: wait for it (fails after 30 s).
    projector.wait_for_function(f"(n) => ({FONT_SIZES})()['paragraph'] > n", arg=normal["paragraph"], timeout=30_000)
    presenter = projector.evaluate(FONT_SIZES)
    assert presenter["paragraph"] > normal["paragraph"], "presenter mode is on"
    compared = {name: (normal[name], presenter[name]) for name in normal if normal[name] and presenter[name]}
    assert compared, "no text found to measure"
    smaller = {name: sizes for name, sizes in compared.items() if sizes[1] < sizes[0]}
    assert not smaller, f"smaller in presenter mode (normal px, presenter px): {smaller}"
    for name in ("metric value", "metric label", "widget label", "select box", "number input", "text input",
                 "toggle label", "table (canvas, as zoom x 14 px)"):
        if name in compared:
            assert compared[name][1] >= 1.15 * compared[name][0], (name, compared[name])
    scroll_through(projector)
    assert projector.evaluate(CLIPPED_LABELS) == []
    tables = table_problems(projector, url_path, "presenter")
    assert [p for p in tables if not p.startswith("known: ")] == []
    if tables:
        pytest.xfail(f"known (KNOWN_TABLE_PROBLEMS): {tables[:2]}")
