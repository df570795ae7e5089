"""Browser fixtures: one real `streamlit run` server per test session, and Chromium driven by Playwright.

Chromium is found at $CHROMIUM_PATH, /usr/bin/chromium or on PATH. Without it the browser tests skip,
except under CI=true, where a missing browser fails the run.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]


def find_chromium() -> str | None:
    candidates = [os.environ.get("CHROMIUM_PATH"), "/usr/bin/chromium", "/usr/bin/chromium-browser"]
    candidates += [shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")]
    return next((c for c in candidates if c and Path(c).exists()), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited early with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.read().decode().strip() == "ok":
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError("streamlit did not become healthy in time")


@contextlib.contextmanager
def streamlit_server(log_path: Path, launcher: list[str] | None = None, extra: tuple[str, ...] = ()):
    """Run `streamlit run streamlit_app.py` on a free loopback port with bench/server.py's launcher (``launcher``
    replaces `python -m streamlit`, ``extra`` holds `--section.option value` pairs); yields (base URL, process)
    once /_stcore/health answers, and stops the server afterwards."""
    from bench.server import StreamlitServer

    options = {flag.removeprefix("--"): value for flag, value in zip(extra[::2], extra[1::2])}
    server = StreamlitServer(options=options, log_path=log_path, launcher=tuple(launcher or ()))
    with server:
        server.wait_healthy(timeout=90)
        yield server.url, server.proc


APP_LOG: list[Path] = []  # the session server's log, once started (its tail goes into a failed test's report)


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    """Base URL of a `streamlit run streamlit_app.py` server on a free loopback port."""
    log_path = tmp_path_factory.mktemp("server") / "streamlit.log"
    APP_LOG.append(log_path)
    with streamlit_server(log_path) as (url, _):
        yield url


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test on the session server gets the server log's last lines in its report (CI prints only the
    report: the traceback behind a message on the page is in the log)."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and "app_url" in item.fixturenames and APP_LOG and APP_LOG[-1].is_file():
        lines = APP_LOG[-1].read_text(encoding="utf-8", errors="replace").splitlines()
        report.sections.append(("the app server's log (last 60 lines)", "\n".join(lines[-60:])))


@pytest.fixture(scope="session")
def browser():
    path = find_chromium()
    if path is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI=true but no Chromium found (set CHROMIUM_PATH or apt-get install chromium)")
        pytest.skip("no Chromium found: set CHROMIUM_PATH or install chromium to run the browser tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS, headless=True)
        yield b
        b.close()


# Settled: the script is not running, the page's own title and header formula are drawn (every page starts with
# ui.shared.common.page_header; KaTeX loads after the first paint) and no element is left over from an earlier run
# (Streamlit marks those data-stale).
SETTLED_JS = """() => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const main = document.querySelector("[data-testid='stMain']");
  return !!main && !!main.querySelector('h1') && !!main.querySelector('.katex')
         && !main.querySelector("[data-stale='true']");
}"""


def new_page(context):
    """A page of ``context`` that keeps its app websocket (``pg.app_socket``, for rerun_after) and records dialogs
    (``pg.dialogs``)."""
    pg = context.new_page()
    pg.app_socket = None
    pg.on("websocket", lambda ws: setattr(pg, "app_socket", ws) if "/_stcore/stream" in ws.url else None)
    dialogs = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.dialogs = dialogs
    return pg


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    yield new_page(context)
    context.close()


def wait_for_app(pg, timeout: float = 60_000) -> None:
    """Wait until the page has settled: the script finished (Streamlit's own e2e readiness check), the page's title
    and formulas are drawn and nothing stale is left on screen."""
    pg.wait_for_function(SETTLED_JS, timeout=timeout)


def _script_finished(payload) -> bool:
    """A server message that ends a script run (a full or a fragment run; not one cut short for a rerun)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    if not isinstance(payload, bytes):
        return False
    msg = ForwardMsg()
    msg.ParseFromString(payload)
    return msg.WhichOneof("type") == "script_finished" and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN


def rerun_after(pg, action, timeout: float = 60_000) -> None:
    """Do ``action()`` (a click, a key press) and wait for the server's message that the run it starts has finished,
    then for the page to settle. The page must come from ``new_page`` (or the ``page`` fixture)."""
    assert getattr(pg, "app_socket", None) is not None, "a page from new_page() keeps its app socket; this one does not"
    with pg.app_socket.expect_event("framereceived", predicate=_script_finished, timeout=timeout):
        action()
    wait_for_app(pg, timeout)



def choose(pg, label: str, option: str, attempts: int = 3) -> None:
    """Open the selectbox whose label starts with ``label``, pick ``option`` and wait for the run it starts. A list
    that is not open 10 s after the click (a late redraw closed it: once on CI) is opened again."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = pg.get_by_test_id("stSelectbox").filter(has_text=label)
    choice = pg.get_by_role("option", name=option, exact=True)
    for attempt in range(attempts):
        box.evaluate("e => e.scrollIntoView({block: 'center'})")  # room below it for the list of options
        box.get_by_role("combobox").click()
        try:
            choice.wait_for(state="visible", timeout=10_000)
            break
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise
            pg.keyboard.press("Escape")
    rerun_after(pg, choice.click)

# Resolves true once the element's box, its number of SVG texts and the main area's scroll position have stayed the
# same for 5 animation frames (a chart finished drawing or resizing, a scroll came to rest); false after 20 s.
STILL_JS = """(el) => new Promise(resolve => {
  const main = document.querySelector("[data-testid='stMain']");
  const started = performance.now();
  let last = null, same = 0;
  const look = () => {
    const r = el.getBoundingClientRect();
    const now = [r.x, r.y, r.width, r.height, el.querySelectorAll('text').length, main ? main.scrollTop : 0,
                 window.scrollY].join();
    same = now === last ? same + 1 : 0;
    last = now;
    if (same >= 5) resolve(true);
    else if (performance.now() - started > 20000) resolve(false);
    else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})"""


def wait_still(locator) -> None:
    """Wait until what ``locator`` shows has stopped moving (see STILL_JS)."""
    assert locator.evaluate(STILL_JS), "still moving after 20 s"


def charts_drawn(pg, timeout: float = 60_000) -> None:
    """Wait until every Plotly chart element on the page has drawn its SVG (Streamlit draws one as it comes into view)."""
    pg.wait_for_function("""() => [...document.querySelectorAll("[data-testid='stPlotlyChart']")]
        .every(c => c.querySelector('.js-plotly-plot svg.main-svg'))""", timeout=timeout)


def open_page(pg, app_url: str, url_path: str = "", query: str = "", timeout: float = 60_000) -> None:
    """Go to one page of the app (its url_path, e.g. 'scaling') and wait for it to settle."""
    pg.goto(f"{app_url}/{url_path}{('?' + query) if query else ''}")
    pg.wait_for_selector("[data-testid='stApp']", timeout=timeout)
    wait_for_app(pg, timeout)


def run_in_own_loop(coroutine_function):
    """asyncio.run(coroutine_function()) in a thread of its own (Playwright's sync API may already run an event loop
    in this one) -> its result; an exception is raised again here, with its traceback."""
    import asyncio
    import threading

    outcome = {}

    def target():
        try:
            outcome["value"] = asyncio.run(coroutine_function())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="protocol-scenario")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


# Every toast's text as it appears (a toast leaves after 10 s: on a busy machine the page may take longer to be read)
RECORD_TOASTS = """
window.__toasts = [];
new MutationObserver(() => document.querySelectorAll('[data-testid=stToast]').forEach(el => {
  if (!window.__toasts.includes(el.innerText)) window.__toasts.push(el.innerText);
})).observe(document, {childList: true, subtree: true, characterData: true});
"""
