"""Lesson 8's model view in a real browser: what it sends, how large it is drawn and how long the draw takes.

    .venv/bin/python -m bench.model_view_draw [--runs 5] [--url http://127.0.0.1:8501] [--views 1280x720,1920x1080]

Starts `streamlit run streamlit_app.py` on a free loopback port (unless --url is given). For each viewport, in normal
and presenter mode, it opens lesson 8 on the famous sentence in a fresh Chromium context, answers both questions and
reports:
  - spec / data bytes: the model view's Vega-Lite spec (JSON) and its Arrow data, as the websocket delivers them;
  - label px: the axis label font size in the spec the browser draws;
  - map px, cell aspect: one head's map as drawn on the canvas (width x height, found in its pixels) and its cells'
    width / height (1 = square);
  - first draw: from the click on the second answer to the model view's canvas drawn;
  - redraw (median of --runs): from picking another head in the selectbox to the new canvas drawn.
Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.server import PRODUCTION_OPTIONS, StreamlitServer  # noqa: E402
from tests.browser.conftest import CHROMIUM_FLAGS, find_chromium, new_page, rerun_after, wait_for_app  # noqa: E402
from tests.browser.model_view_js import FIRST_MAP_PX, model_view_messages  # noqa: E402

CHART = "[data-testid='stVegaLiteChart']"
# A checksum of what the model view's canvas shows (0 before it has drawn): a redraw changes it (the outline moves).
CANVAS_SUM = """() => {
  const c = document.querySelector("[data-testid='stVegaLiteChart'] canvas");
  if (!c || c.width === 0) return 0;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let sum = 0;
  for (let i = 0; i < d.length; i += 28) sum = (sum * 31 + d[i] + 3 * d[i + 1] + 7 * d[i + 2] + d[i + 3]) % 1000000007;
  return sum;
}"""
CHANGED = f"(before) => {{ const now = ({CANVAS_SUM})(); return now !== 0 && now !== before; }}"


def geometry(pg) -> dict:
    """The canvas's size, one head's map as drawn (L0H0) and its cells' width / height (the map is n x n cells)."""
    box = pg.locator(f"{CHART} canvas").bounding_box()
    first = pg.evaluate(FIRST_MAP_PX)
    return {"canvas": f"{box['width']:.0f}x{box['height']:.0f}", "map px": f"{first['w']:.0f}x{first['h']:.0f}",
            "cell aspect": round(first["w"] / first["h"], 2)}


def label_px(spec: dict) -> float | None:
    axis = (spec.get("config") or {}).get("axis") or {}
    return axis.get("labelFontSize")


def measure(browser, url: str, width: int, height: int, presenter: bool, runs: int) -> dict:
    context = browser.new_context(viewport={"width": width, "height": height})
    pg = new_page(context)
    seen = model_view_messages(pg)
    try:
        query = "lang=en" + ("&presenter=true" if presenter else "")
        pg.goto(f"{url}/trained-model?{query}")
        wait_for_app(pg, 180_000)
        pg.wait_for_selector(".st-key-pretrained_predict", timeout=180_000)
        rerun_after(pg, pg.locator(".st-key-pretrained_predict [role='radiogroup'] label").first.click)
        start = pg.evaluate("performance.now()")
        pg.locator(".st-key-pretrained_switch_predict [role='radiogroup'] label").first.click()
        pg.wait_for_function(CHANGED, arg=0, timeout=180_000, polling="raf")
        first = pg.evaluate("performance.now()") - start
        wait_for_app(pg)
        pg.locator(CHART).scroll_into_view_if_needed()
        spec_bytes, data_bytes, spec = seen[-1]
        result = {"spec bytes": spec_bytes, "data bytes": data_bytes, "label px": label_px(spec),
                  **geometry(pg), "first draw ms": round(first)}
        redraws = []
        for i in range(runs):
            before = pg.evaluate(CANVAS_SUM)
            box = pg.locator(".st-key-pretrained_head input")
            box.click()
            box.fill(str(2 + i % 10))  # (the featured head is H1; typing filters the options, Enter takes the first)
            start = pg.evaluate("performance.now()")
            box.press("Enter")
            pg.wait_for_function(CHANGED, arg=before, timeout=120_000, polling="raf")
            redraws.append(pg.evaluate("performance.now()") - start)
            wait_for_app(pg)
        result["redraw ms"] = round(statistics.median(redraws))
        return result
    finally:
        context.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--url", default=None)
    parser.add_argument("--views", default="1280x720,1920x1080")
    args = parser.parse_args(argv)
    chromium = find_chromium()
    if chromium is None:
        print("no Chromium found (set CHROMIUM_PATH)")
        return 1
    from playwright.sync_api import sync_playwright

    with contextlib.ExitStack() as stack:
        url = args.url
        if url is None:
            log = Path(tempfile.mkdtemp(prefix="model_view_")) / "streamlit.log"
            server = stack.enter_context(StreamlitServer(options=PRODUCTION_OPTIONS, log_path=log))
            server.wait_healthy(timeout=120)
            url = server.url
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS, headless=True)
        stack.callback(browser.close)
        started = time.perf_counter()
        for view in args.views.split(","):
            width, height = (int(v) for v in view.split("x"))
            for presenter in (False, True):
                row = measure(browser, url, width, height, presenter, args.runs)
                print(f"{view} {'presenter' if presenter else 'normal   '}: "
                      + ", ".join(f"{k} {v}" for k, v in row.items()), flush=True)
        print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
