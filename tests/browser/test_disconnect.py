"""A browser that disconnects while lesson 6 trains: the run stops, no thread is left behind, the server stays healthy.

A real `streamlit run` server (its own, so that its thread count is this test's alone) is driven through
Streamlit's websocket protocol by bench.protocol.StreamlitTab. The tab opens the GloVe page, picks the largest
training setting, presses "Train the head", and drops the connection as soon as the progress bar moves.

Signal: the server is started through a small launcher that keeps, for each live Python thread, a file
"<native thread id>-<thread name>" in a folder (created when the thread starts, removed when it ends), so the
test sees exactly which ScriptRunner.scriptThread threads are running (Python 3.11 does not give threads OS
names, and threads that C libraries start inherit their creator's, so /proc alone cannot tell). After the
disconnect their number returns to 0. That the run stopped, rather than finished, shows in the session itself:
the tab resumes it (as a browser does after a network blip), and the page still says the head is not trained.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.protocol import StreamlitTab
from tests.browser.conftest import run_in_own_loop, streamlit_server
from ui.shared.i18n import Translator

pytestmark = pytest.mark.browser

LARGEST_STEPS, LARGEST_DK = 800, 64  # the slider's and the selectbox's largest values (ui/glove/page.py)
ATTEMPTS = 3  # a run that finishes before the server hears of the disconnect proves nothing; try again
SETTLE_S = 30.0


# `python -c LAUNCHER <folder> run streamlit_app.py ...` = `streamlit run ...`, listing its live threads in <folder>.
LAUNCHER = """
import os, sys, threading
from streamlit.web import cli
folder = sys.argv.pop(1)
start = threading.Thread._bootstrap_inner
def listed(self):
    path = os.path.join(folder, f"{threading.get_native_id()}-{self.name}")
    open(path, "w").close()
    try:
        start(self)
    finally:
        os.unlink(path)
threading.Thread._bootstrap_inner = listed
sys.argv = ["streamlit", *sys.argv[1:]]
cli.main()
"""
SCRIPT_THREAD = "ScriptRunner.scriptThread"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(base URL, (pid, thread folder)) of a `streamlit run streamlit_app.py` of our own, without a file watcher
    (as in production)."""
    if not Path("/proc/self/task").exists():
        pytest.skip("needs Linux /proc to check the server's threads")
    workdir = tmp_path_factory.mktemp("disconnect")
    threads = workdir / "threads"
    threads.mkdir()
    with streamlit_server(workdir / "streamlit.log", launcher=[sys.executable, "-c", LAUNCHER, str(threads)],
                          extra=("--server.fileWatcherType", "none")) as (url, proc):
        yield url, (proc.pid, threads)


def live_threads(server) -> list[str]:
    """Names of the server's live Python threads, from the launcher's folder (checked against /proc)."""
    pid, folder = server
    names = []
    for entry in os.listdir(folder):
        tid, _, name = entry.partition("-")
        if Path(f"/proc/{pid}/task/{tid}").exists():
            names.append(name)
    return names


def script_threads(server) -> int:
    return sum(name == SCRIPT_THREAD for name in live_threads(server))


def settle(server) -> int:
    """Poll until no script thread is alive (or SETTLE_S passed); -> how many are left."""
    deadline = time.monotonic() + SETTLE_S
    while script_threads(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    return script_threads(server)


def healthy(url: str) -> bool:
    with urllib.request.urlopen(url + "/_stcore/health", timeout=5) as r:
        return r.read().decode().strip() == "ok"


def widget(tab: StreamlitTab, key: str):
    return next(w for w in tab.widgets if w.user_key == key)


async def press_train_and_vanish(tab: StreamlitTab, server, seed: int) -> int:
    """Largest setting, press Train, read until the progress bar has moved, then drop the socket.

    -> the number of script threads alive just before the socket went."""
    steps, d_k, train_seed = (widget(tab, k) for k in ("glove_train_steps", "glove_train_dk", "glove_train_seed"))
    tab.states[steps.id] = WidgetState(id=steps.id, double_array_value={"data": [LARGEST_STEPS]})
    tab.states[d_k.id] = WidgetState(id=d_k.id, string_value=str(LARGEST_DK))
    tab.states[train_seed.id] = WidgetState(id=train_seed.id, double_value=float(seed))
    trigger = WidgetState(id=widget(tab, "glove_train").id, trigger_value=True)
    await tab.ws.send(tab._client_state_msg(tab.page, tab.page_script_hash, [trigger]))
    progress = 0
    while progress < 2:  # the bar is drawn at step 0, then moves every steps / 40 steps
        msg = ForwardMsg()
        msg.ParseFromString(await asyncio.wait_for(tab.ws.recv(), timeout=60))
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            progress += msg.delta.new_element.WhichOneof("type") == "progress"
        assert kind != "script_finished", "the training run ended before the progress bar moved"
    during = script_threads(server)
    await tab.close()
    return during


def trained(tab: StreamlitTab) -> bool:
    """True when the page on screen shows a finished training run (its loss curve), False when it says 'not trained'."""
    not_trained = Translator("en")("glove.not_trained")
    alerts = [proto.body for kind, proto in tab.elements if kind == "alert"]
    figures = [proto.id for kind, proto in tab.elements if kind == "plotly_chart"]
    has_loss = any(fid.endswith("glove_loss_fig") for fid in figures)
    assert has_loss != (not_trained in alerts), (has_loss, alerts)
    return has_loss


def test_a_disconnect_during_training_stops_the_run_and_leaves_no_thread(server):
    url, process = server

    async def scenario():
        stopped = False
        for attempt in range(ATTEMPTS):
            tab = StreamlitTab(url, timeout=120)
            await tab.connect()
            opened = await tab.open_page("glove")
            assert opened.ok, opened.errors
            session = tab.session_id
            during = await press_train_and_vanish(tab, process, seed=attempt)
            assert during >= 1, "the signal should see the training run's script thread"

            assert settle(process) == 0, f"script threads left behind: {live_threads(process)}"
            assert healthy(url)

            await tab.connect(resume_session=True)  # the same session, as a browser reconnects
            for _ in range(3):  # the first reply may be the tail of the stopped run, queued while we were away
                rerun = await tab.rerun()
                assert rerun.ok and tab.session_id == session, rerun.errors
                if any(w.user_key == "glove_train" for w in tab.widgets):
                    break  # a whole run of the page
            stopped = not trained(tab)
            await tab.close()
            assert settle(process) == 0
            if stopped:
                break
        assert stopped, f"training finished before the disconnect reached the server in {ATTEMPTS} attempts"

        # The server keeps serving: a new student opens the page and trains to the end.
        other = StreamlitTab(url, timeout=120)
        await other.connect()
        assert (await other.open_page("glove")).ok
        run = await other.change_widget(widget(other, "glove_train"), random.Random(0))
        assert run.ok and run.error_alerts == 0, run.errors
        assert trained(other)
        await other.close()
        assert settle(process) == 0 and healthy(url)

    run_in_own_loop(scenario)
