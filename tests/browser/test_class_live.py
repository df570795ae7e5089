"""Issue 41's browser test: a live class through two replicas behind HAProxy, sharing one SQLite class database.

The teacher starts the class with the sidebar's button and opens lesson 5 with the teacher link (presenter mode);
21 students, each a browser context of their own (a fresh HAProxy cookie each: leastconn picks their replica),
answer its predict-then-reveal question 9/6/4/2 over the four options. The teacher's page, never reloaded, counts
them as they come; a student sees no counts, a wrong teacher key is refused. Then the second vote (four students
still on the page answer it without a reload), the reveal reaching a student's page, and the CSV export.
(tests/test_classroom_page.py holds the same flow in AppTest; bench/class_replicas.py its speed.)"""

from __future__ import annotations

import csv
import io
import secrets
import sys
import urllib.parse
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench.balancers import HAProxy
from bench.server import PRODUCTION_OPTIONS, StreamlitServer
from classroom import setting_id
from tests.browser.conftest import new_page, open_page, rerun_after, wait_for_app
from tests.pages import page as page_info
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.browser

LESSON, QUESTION, N, RIGHT = "causal", "causal_predict", 4, 1
PAGE = page_info(LESSON).url_path
FIRST_VOTE = [1] * 9 + [2] * 6 + [3] * 4 + [4] * 2  # 21 students: 9/6/4/2 over the four options
REVOTE = [1, 1, 2, 3]  # the second vote of the four students kept on the page (two on each replica)
KEEP_PER_REPLICA = len(REVOTE) // 2
# only the last students stay on the page: every open page asks the server every second (two cores shared)
KEEP_FROM = len(FIRST_VOTE) - 2 * len(REVOTE)
BATCH = 4  # students opening their pages at once (two cores: more only queue)
WAIT_MS = 120_000  # a noisy shared machine: generous, and every wait is for a state, never a sleep
S = load_strings("en")

# `python -c LAUNCHER run streamlit_app.py ...` = `streamlit run ...` without the start-up thread's work for lessons
# 8-11 (ui/shared/startup.py: about 6 CPU-minutes a process here), which lesson 5 never reads: two replicas doing it
# would take the two shared cores from the class for the whole test
LAUNCHER = """
import sys
from streamlit.web import cli
from ui.shared import startup
startup.STARTUP_MODULES = ()
sys.argv = ["streamlit", *sys.argv[1:]]
cli.main()
"""

# The rows of the one table in the main area whose header names the first vote -> [[cell, ...], ...] (null if none)
COUNTS_ROWS_JS = """(header) => {
  const tables = [...document.querySelectorAll('[data-testid=stMain] table')]
    .filter(t => t.querySelector('thead') && t.querySelector('thead').innerText.includes(header));
  if (tables.length !== 1) return null;
  return [...tables[0].querySelectorAll('tbody tr')]
    .map(r => [...r.querySelectorAll('td')].map(c => c.innerText.replace(/\\s+/g, ' ').trim()));
}"""
COUNTS_ARE_JS = f"([header, want]) => JSON.stringify(({COUNTS_ROWS_JS})(header)) === JSON.stringify(want)"
MAIN_HAS_JS = "(text) => document.querySelector('[data-testid=stMain]').innerText.includes(text)"
ALERT_HAS_JS = """([box, text]) => [...document.querySelectorAll(`[data-testid=stMain] [data-testid=${box}]`)]
  .some(a => a.innerText.includes(text))"""


@pytest.fixture(scope="module")
def replicas(tmp_path_factory):
    """Two `streamlit run` replicas on loopback sharing one SQLite class file, HAProxy (deploy/haproxy.cfg: leastconn,
    sticky SERVERID cookie) in front of them -> SimpleNamespace(url, servers, balancer)."""
    folder = tmp_path_factory.mktemp("class-live")
    db = folder / "classes.sqlite3"
    # one database for both; the same cookie secret, as every replica of a deployment has
    env = {"ATTENTION_CLASS_DB": str(db), "ATTENTION_CLASS_DATABASE_URL": "",
           "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(32)}
    servers = [StreamlitServer(options=PRODUCTION_OPTIONS, env=env, log_path=folder / f"app-{i}.log",
                               launcher=(sys.executable, "-c", LAUNCHER)) for i in (1, 2)]
    with servers[0], servers[1]:
        for server in servers:
            server.wait_healthy(timeout=120)
        with HAProxy([f"127.0.0.1:{s.port}" for s in servers], folder) as balancer:
            yield SimpleNamespace(url=balancer.url, servers=servers, balancer=balancer)


def finished_runs(pg) -> list[str]:
    """-> a list that fills with the kind ("page" or "fragment") of each run the server finishes for ``pg`` from now
    on (its app socket's script_finished messages; a page from new_page)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    kinds = []

    def seen(payload) -> None:
        if isinstance(payload, bytes):
            msg = ForwardMsg()
            msg.ParseFromString(payload)
            if msg.WhichOneof("type") == "script_finished" and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                kinds.append("fragment" if msg.script_finished == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
                             else "page")

    pg.app_socket.on("framereceived", seen)
    return kinds


def replica_of(context, url: str) -> str:
    """The replica HAProxy pinned this browser context to (its SERVERID cookie: app-1 or app-2)."""
    return next(c["value"] for c in context.cookies(url) if c["name"] == "SERVERID")


def counts_rows(first: list[int], second: list[int]) -> list[list[str]]:
    return [[S[f"{LESSON}.predict_{i}"], str(first[i - 1]), str(second[i - 1])] for i in range(1, N + 1)]


def tally(choices: list[int]) -> list[int]:
    seen = Counter(choices)
    return [seen[i] for i in range(1, N + 1)]


def wait_for_counts(pg, first: list[int], second: list[int]) -> None:
    """Wait until the teacher's live table shows exactly these counts (its fragment redraws it every second)."""
    want = counts_rows(first, second)
    try:
        pg.wait_for_function(COUNTS_ARE_JS, arg=[S["classroom.first_vote"], want], timeout=WAIT_MS)
    except PlaywrightTimeout:
        shown = pg.evaluate(COUNTS_ROWS_JS, S["classroom.first_vote"])
        raise AssertionError(f"the teacher's counts never reached {want}; they show {shown}") from None


def main_has(pg, text: str) -> None:
    pg.wait_for_function(MAIN_HAS_JS, arg=text, timeout=WAIT_MS)


def no_counts_table(pg) -> bool:
    return pg.evaluate(COUNTS_ROWS_JS, S["classroom.first_vote"]) is None


def option(pg, key: str, choice: int):
    """The label of option ``choice`` of the radio ``key`` (clicking it picks the option)."""
    return pg.locator(f".st-key-{key} [role='radiogroup'] label").filter(has_text=S[f"{LESSON}.predict_{choice}"])


def export(teacher, attempts: int = 3) -> Path:
    """Click the teacher's export button -> the downloaded file. A click lost to a redraw of the page (the live
    counts redraw every second) is clicked again, as conftest.choose opens a list again."""
    button = teacher.locator(f".st-key-{QUESTION}_export button")
    for _ in range(attempts - 1):
        try:
            with teacher.expect_download(timeout=WAIT_MS // attempts) as download:
                button.click()
            return Path(download.value.path())
        except PlaywrightTimeout:
            pass
    with teacher.expect_download(timeout=WAIT_MS) as download:
        button.click()
    return Path(download.value.path())


def start_class(browser, url: str):
    """The teacher opens lesson 5, presses "Start a class" and opens the teacher link the sidebar gives ->
    (context, page, code, key, the students' join link)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(WAIT_MS)
    teacher = new_page(context)
    open_page(teacher, url, PAGE, timeout=180_000)  # (a replica's first run of the page: imports, word vectors)
    start = teacher.locator(".st-key-class_start").get_by_role("button", name=S["classroom.start"])
    rerun_after(teacher, start.click, timeout=WAIT_MS)
    teacher.wait_for_function("() => ['class=', 'seat=', 'teacher='].every(p => location.search.includes(p))",
                              timeout=WAIT_MS)
    linked = urllib.parse.parse_qs(urllib.parse.urlsplit(teacher.evaluate("location.href")).query)
    code, key = linked["class"][0], linked["teacher"][0]
    sidebar = teacher.get_by_test_id("stSidebar").inner_text()
    assert S["classroom.started"].format(code=code).replace("**", "") in sidebar
    join = teacher.locator(".st-key-class_join_link input").input_value()
    assert join == f"{url}/{PAGE}?class={code}"  # the page's link through the balancer: no seat, no key
    link = teacher.locator(".st-key-class_teacher_link input").input_value()
    query = urllib.parse.urlsplit(link).query
    assert link.startswith(join) and urllib.parse.parse_qs(query) == {"class": [code], "teacher": [key],
                                                                      "presenter": ["true"]}
    open_page(teacher, url, PAGE, query, timeout=180_000)  # (the link as given: this page, a new session)
    assert teacher.evaluate("location.href").startswith(link)
    return context, teacher, code, key, join


def test_a_class_of_21_across_two_replicas_counts_revotes_reveals_and_exports(browser, replicas):
    url = replicas.url
    teacher_context, teacher, code, _, join = start_class(browser, url)
    teacher_replica = replica_of(teacher_context, url)
    teacher.evaluate("window.__neverReloaded = true")  # (a reload would drop it)
    wait_for_counts(teacher, [0] * N, [0] * N)
    main_has(teacher, S["classroom.teacher_counts"].format(answered=0, answered2=0, other=0))
    assert teacher.locator(".st-key-presenter input").is_checked()  # the teacher link opened presenter mode

    # a link with a wrong teacher key: refused, and a student's page with no counts
    wrong = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        pg = new_page(wrong)
        open_page(pg, url, PAGE, f"class={code}&teacher={'A' * 32}", timeout=180_000)
        main_has(pg, S["classroom.error_forbidden"])
        main_has(pg, S["classroom.in_class"].format(code=code))
        assert no_counts_table(pg) and pg.locator(f".st-key-{QUESTION}_revote button").count() == 0
    finally:
        wrong.close()

    kept, served, answered = [], Counter(), []
    for start in range(0, len(FIRST_VOTE), BATCH):
        batch = []
        for choice in FIRST_VOTE[start:start + BATCH]:  # open the batch's pages together ...
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.set_default_timeout(WAIT_MS)
            pg = new_page(context)
            pg.goto(join, wait_until="commit")
            batch.append((context, pg, choice))
        for context, pg, choice in batch:  # ... then each answers once its page has settled
            wait_for_app(pg, 180_000)
            runs = finished_runs(pg)
            option(pg, QUESTION, choice).click()
            main_has(pg, S["classroom.recorded"])
            # the answer reran the question's box alone (a fragment), never the whole page
            assert runs and set(runs) == {"fragment"}, f"an answer before the reveal ran {runs}"
            assert no_counts_table(pg), "a student's page shows the class's counts"
            assert "seat=" in pg.url and "teacher=" not in pg.url
            answered.append(choice)
            replica = replica_of(context, url)
            served[replica] += 1
            if len(answered) > KEEP_FROM and sum(r == replica for _, _, _, r in kept) < KEEP_PER_REPLICA:
                kept.append((context, pg, choice, replica))  # (on the page for the second vote and the reveal)
            else:
                context.close()
        wait_for_counts(teacher, tally(answered), [0] * N)  # the teacher's table follows the class, batch by batch

    assert set(served) == {"app-1", "app-2"}, f"HAProxy sent every student to one replica: {dict(served)}"
    assert len(kept) == len(REVOTE), f"the last students were not on both replicas: {[r for *_, r in kept]}"
    main_has(teacher, S["classroom.teacher_counts"].format(answered=len(FIRST_VOTE), answered2=0, other=0))

    # the second vote: the students' pages ask it by themselves, the teacher's second column fills without a reload
    teacher.locator(f".st-key-{QUESTION}_revote button").click()
    teacher.wait_for_function("(sel) => document.querySelector(sel)?.disabled === true",
                              arg=f".st-key-{QUESTION}_revote button", timeout=WAIT_MS)
    for (context, pg, _, _), again in zip(kept, REVOTE):
        pg.wait_for_selector(f".st-key-{QUESTION}_revote [role='radiogroup']", timeout=WAIT_MS)
        wait_for_app(pg, WAIT_MS)  # (the run that drew it has finished: a click now is not lost to a redraw)
        main_has(pg, S["classroom.revote_q"])
        option(pg, f"{QUESTION}_revote", again).click()
    wait_for_counts(teacher, tally(answered), tally(REVOTE))
    main_has(teacher, S["classroom.teacher_counts"].format(answered=len(FIRST_VOTE), answered2=len(REVOTE),
                                                           other=0))
    for _, pg, _, _ in kept:
        assert no_counts_table(pg)

    # the reveal reaches a student's page without a reload: right or wrong, with the reason
    teacher.locator(f".st-key-{QUESTION}_reveal button").click()
    main_has(teacher, S[f"{LESSON}.predict_why"])
    teacher.wait_for_function("(sel) => document.querySelector(sel)?.disabled === true",
                              arg=f".st-key-{QUESTION}_reveal button", timeout=WAIT_MS)
    for _, pg, first, _ in kept:
        box = "stAlertContentSuccess" if first == RIGHT else "stAlertContentWarning"
        pg.wait_for_function(ALERT_HAS_JS, arg=[box, S[f"{LESSON}.predict_why"]], timeout=WAIT_MS)
        assert S["classroom.recorded"] not in pg.get_by_test_id("stMain").inner_text()
        assert no_counts_table(pg)  # (the teacher revealed the answer, never showed the spread)

    # the export: one row per option with both votes (clicked once the reveal's run has drawn the page)
    wait_for_app(teacher, WAIT_MS)
    rows = list(csv.DictReader(io.StringIO(export(teacher).read_text(encoding="utf-8"))))
    mine = [r for r in rows if (r["lesson"], r["question"]) == (LESSON, QUESTION)]
    assert {r["setting"] for r in mine} == {setting_id({})}
    exported = {int(r["option"]): (int(r["first_vote"]), int(r["second_vote"])) for r in mine}
    assert exported == {i: (tally(answered)[i - 1], tally(REVOTE)[i - 1]) for i in range(1, N + 1)}

    assert teacher.evaluate("window.__neverReloaded === true"), "the teacher's page was reloaded"
    print(f"teacher on {teacher_replica}; students per replica {dict(served)}; "
          f"kept for the revote {Counter(r for _, _, _, r in kept)}")
    for context, _, _, _ in kept:
        context.close()
    teacher_context.close()
    for server in replicas.servers:
        assert server.log_tracebacks() == 0, f"a traceback in {server.log_path}"
    # sticky: every request that carried the SERVERID cookie went where it said (N: a new context's first request)
    cookies = replicas.balancer.log_summary()["request_cookie"]
    assert set(cookies) <= {"N", "V"} and cookies.get("V", 0) > 0, cookies
