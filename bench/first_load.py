"""First load in a real browser: how long a fresh tab waits until a page is fully drawn.

    .venv/bin/python -m bench.first_load [--runs 5] [--pages home,causal] [--url http://127.0.0.1:8501] [--fresh-cache]

Starts `streamlit run streamlit_app.py` on a free loopback port (unless --url is given), then opens each page in a new
Chromium context (no cache, no cookies: a student's first visit) ``--runs`` times and reports, per page, the median
milliseconds from navigation start to
  - script done: Streamlit's `[data-testid=stApp][data-test-script-state=notRunning]`, after its first run;
  - first view drawn: the script is done and every chart in the first screen has drawn its SVG;
  - all charts drawn: every chart on the page has drawn (the page is scrolled through, as Streamlit draws a chart when
    it comes near the screen).
The very first visit after the server starts (it loads GloVe and fills the caches) is reported on its own line, as a
timeline: when the header, a loading message (spinner or progress bar), the first chart and the last chart appeared,
and when the script was done. ``--fresh-cache`` points the server's XDG_CACHE_HOME at an empty temporary folder (the
GPT's float32 weights and its cached results are built again: a new server's first visit). ``--prebuild`` first runs
`python -m attention_core.smollm2.prebuild` in that cache folder, as `python3 dev.py run` does before it starts the server
(its wall time is printed: what a new machine's start waits before the server accepts anyone).
Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.server import APP_SCRIPT, PRODUCTION_OPTIONS, StreamlitServer  # noqa: E402
from tests.browser.conftest import CHROMIUM_FLAGS, find_chromium  # noqa: E402
from tests.pages import PAGES  # noqa: E402

SCRIPT_DONE = "() => !!document.querySelector(\"[data-testid='stApp'][data-test-script-state='notRunning']\")"
FIRST_VIEW_DRAWN = """() => {
  if (!document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']")) return false;
  const charts = [...document.querySelectorAll("[data-testid='stPlotlyChart']")]
    .filter(c => c.getBoundingClientRect().top < innerHeight);
  return charts.every(c => c.querySelector('.js-plotly-plot .main-svg'));
}"""
ALL_DRAWN = """() => [...document.querySelectorAll("[data-testid='stPlotlyChart']")]
  .every(c => c.querySelector('.js-plotly-plot .main-svg'))"""


# Recorded in the page from its first byte: the first time each thing is seen (ms from navigation start).
TIMELINE_SCRIPT = """
window.__marks = {};
const seen = (name, ok) => { if (ok && !(name in window.__marks)) window.__marks[name] = performance.now(); };
const look = () => {
  const d = document;
  seen('header', !!d.querySelector("[data-testid=stMain] h1"));
  seen('loading message', !!d.querySelector("[data-testid=stSpinner], [data-testid=stProgress]"));
  const svgs = d.querySelectorAll("[data-testid=stPlotlyChart] .main-svg, [data-testid=stVegaLiteChart] canvas");
  seen('first chart', svgs.length > 0);
  seen('script done', !!d.querySelector("[data-testid=stMain] h1")
       && !!d.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']"));
};
new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true});
"""


def _timeline(browser, url: str, timeout_ms: float = 300_000) -> dict[str, float]:
    """A first visit -> {mark: ms from navigation start} (TIMELINE_SCRIPT's marks, then 'all charts drawn')."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.add_init_script(TIMELINE_SCRIPT)
    page = context.new_page()
    try:
        page.goto(url, wait_until="commit")
        page.wait_for_function("() => 'script done' in (window.__marks || {})", timeout=timeout_ms, polling=50)
        main = "document.querySelector('[data-testid=stMain]')"
        height = page.evaluate(f"{main}.scrollHeight")
        for y in range(0, int(height) + 720, 600):
            page.evaluate(f"{main}.scrollTo(0, {y})")
            page.wait_for_timeout(30)
        page.wait_for_function(ALL_DRAWN, timeout=timeout_ms, polling=50)
        marks = dict(page.evaluate("window.__marks"))
        marks["all charts drawn"] = page.evaluate("performance.now()")
        return dict(sorted(marks.items(), key=lambda kv: kv[1]))
    finally:
        context.close()


def _visit(browser, url: str, timeout_ms: float = 120_000) -> dict[str, float]:
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        page.goto(url, wait_until="commit")
        page.wait_for_function(SCRIPT_DONE, timeout=timeout_ms, polling=20)
        done = page.evaluate("performance.now()")
        page.wait_for_function(FIRST_VIEW_DRAWN, timeout=timeout_ms, polling=20)
        first_view = page.evaluate("performance.now()")
        main = "document.querySelector('[data-testid=stMain]')"
        height = page.evaluate(f"{main}.scrollHeight")
        for y in range(0, int(height) + 720, 600):
            page.evaluate(f"{main}.scrollTo(0, {y})")
            page.wait_for_timeout(30)
        page.wait_for_function(ALL_DRAWN, timeout=timeout_ms, polling=20)
        all_drawn = page.evaluate("performance.now()")
        return {"script done": done, "first view drawn": first_view, "all charts drawn": all_drawn}
    finally:
        context.close()


def _prebuild(env: dict[str, str]) -> None:
    """Run dev.py run's prebuild step with the server's environment; print its line and its wall time."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "attention_core.smollm2.prebuild"], cwd=ROOT, env={**os.environ, **env},
                   check=False)
    print(f"prebuild before the server starts (as dev.py run): {time.perf_counter() - start:.1f} s wall", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pages", default="", help="comma-separated url paths (home = the default page)")
    ap.add_argument("--url", default="", help="an app already running (default: start one)")
    ap.add_argument("--fresh-cache", action="store_true",
                    help="the started server gets an empty XDG_CACHE_HOME (a new server: the GPT's caches built again)")
    ap.add_argument("--prebuild", action="store_true",
                    help="build the GPT's float32 weights before the server starts, as `dev.py run` does")
    args = ap.parse_args(argv)
    wanted = {p.strip().replace("home", "") for p in args.pages.split(",")} if args.pages else None
    pages = [p for p in PAGES if wanted is None or p.url_path in wanted]
    from playwright.sync_api import sync_playwright

    with contextlib.ExitStack() as stack:
        if args.url:
            url = args.url.rstrip("/")
        else:
            log = Path(tempfile.mkdtemp()) / "streamlit.log"
            env = {}
            if args.fresh_cache:
                env["XDG_CACHE_HOME"] = stack.enter_context(tempfile.TemporaryDirectory(prefix="first-load-cache-"))
            if args.prebuild:
                _prebuild(env)
            server = stack.enter_context(StreamlitServer(APP_SCRIPT, options=PRODUCTION_OPTIONS, log_path=log,
                                                         env=env))
            server.wait_healthy(timeout=90)
            url = server.url
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_FLAGS, headless=True)
        start = time.perf_counter()
        cold = _timeline(browser, f"{url}/{pages[0].url_path}")
        print(f"first visit after start (/{pages[0].url_path}): " + ", ".join(f"{k} {v:.0f} ms" for k, v in cold.items())
              + f"  (wall {1000 * (time.perf_counter() - start):.0f} ms)", flush=True)
        if args.runs < 1:
            return 0
        print(f"{'page':<16}{'script done':>13}{'first view':>12}{'all charts':>12}   (median ms of {args.runs})")
        for page in pages:
            runs = [_visit(browser, f"{url}/{page.url_path}") for _ in range(args.runs)]
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            print(f"{page.url_path or 'home':<16}{med['script done']:>13.0f}{med['first view drawn']:>12.0f}"
                  f"{med['all charts drawn']:>12.0f}", flush=True)
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
