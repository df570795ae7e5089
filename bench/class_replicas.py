"""A class answering through two replicas (`python -m bench.bench_classroom --replicas`): N students on lesson 5's
question, each a StreamlitTab behind HAProxy, every page polling as a browser does, each answering once at a random
moment within the window. -> every answer counted?, the answers' latency (p50/p95/max), the polls' latency, errors,
the load average."""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import tempfile
import time
from collections import Counter
from pathlib import Path

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.balancers import HAProxy
from bench.load import fetch_page_cookies
from bench.protocol import StreamlitTab
from bench.server import PRODUCTION_OPTIONS, StreamlitServer
from classroom import new_student, setting_id
from classroom.sqlite_store import SqliteStore

PAGE, LESSON, QUESTION, N = "causal", "causal", "causal_predict", 4
TARGET_P95_MS = 300.0


class _TimerRecorder:
    """The tab's websocket, passed through, noting the fragment timers the server asks for (ForwardMsg auto_rerun)."""

    def __init__(self, ws, timers: dict[str, float]):
        self._ws, self.timers = ws, timers

    def __getattr__(self, name):
        return getattr(self._ws, name)

    async def recv(self):
        data = await self._ws.recv()
        if isinstance(data, bytes):
            msg = ForwardMsg()
            msg.ParseFromString(data)
            if msg.WhichOneof("type") == "auto_rerun":
                self.timers[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        return data


class ClassTab(StreamlitTab):
    """A student's tab that reruns its page's timed fragments as the browser does (``poll_once``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.timers: dict[str, float] = {}
        self.lock = asyncio.Lock()  # (one run at a time on a socket, as in the browser, which queues them)

    async def connect(self, resume_session: bool = False) -> None:
        await super().connect(resume_session)
        self.ws = _TimerRecorder(self.ws, self.timers)

    async def poll_once(self):
        async with self.lock:
            fragment = next(iter(self.timers), "")
            return await self._run("widget", fragment_id=fragment, widget="timer") if fragment else None


async def _student(url: str, code: str, window: dict, within: float, rng: random.Random, out: dict) -> None:
    seat = new_student()
    query = f"class={code}&seat={seat}"
    cookie, _ = await asyncio.to_thread(fetch_page_cookies, f"{url}/{PAGE}?{query}", 30)
    tab = ClassTab(url, timeout=30, cookie=cookie)
    await tab.connect()
    try:
        opened = await tab.open_page(PAGE, query)
        out["errors"] += opened.errors
        window["opened"] += 1
        if window["opened"] == window["students"]:  # the window opens once every page is open (and polling)
            window["start_at"] = time.time() + 1.0
            window["ready"].set()
        await window["ready"].wait()
        start_at, end_at = window["start_at"], window["start_at"] + within + 3.0
        answer_at = start_at + rng.uniform(0, within)

        async def poll():
            every = next(iter(tab.timers.values()), 1.0)
            next_at = time.time() + rng.uniform(0, every)  # (pages opened at different moments)
            while next_at < end_at:
                await asyncio.sleep(max(0.0, next_at - time.time()))
                next_at += every
                result = await tab.poll_once()
                if result is not None:
                    out["polls"].append(result.latency_s)
                    out["errors"] += result.errors

        poller = asyncio.create_task(poll())
        await asyncio.sleep(max(0.0, answer_at - time.time()))
        clicked = time.perf_counter()
        async with tab.lock:
            radio = next(w for w in tab.widgets if w.user_key == QUESTION)
            result = await tab.change_widget(radio, rng)
        out["answers"].append(time.perf_counter() - clicked)
        out["errors"] += result.errors
        label = tab.states[radio.id].string_value
        out["choices"].append(list(radio.proto.options).index(label) + 1)
        out["recorded"] += any(kind == "alert" and "answer is in" in proto.body for kind, proto in tab.elements)
        await poller
    finally:
        await tab.close()


async def _class(url: str, code: str, students: int, within: float) -> dict:
    out = {"answers": [], "polls": [], "choices": [], "errors": [], "recorded": 0}
    window = {"students": students, "opened": 0, "ready": asyncio.Event()}
    await asyncio.gather(*(_student(url, code, window, within, random.Random(i), out) for i in range(students)))
    return out


def _quantile(values: list[float], q: float) -> float:
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))] * 1000, 1) if values else float("nan")


def main(students: int = 100, within: float = 5.0) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-class-") as folder:
        db = Path(folder) / "classes.sqlite3"
        store = SqliteStore(db)
        code, key = store.create_class()
        env = {"ATTENTION_CLASS_DB": str(db), "STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(32)}
        replicas = [StreamlitServer(options=PRODUCTION_OPTIONS, env=env, log_path=Path(folder) / f"app-{i}.log")
                    for i in (1, 2)]
        with replicas[0], replicas[1]:
            for r in replicas:
                r.wait_healthy(timeout=120)
            with HAProxy([f"127.0.0.1:{r.port}" for r in replicas], Path(folder)) as lb:
                asyncio.run(_warm(lb.url))
                load_before = os.getloadavg()
                out = asyncio.run(_class(lb.url, code, students, within))
                load_after = os.getloadavg()
                per_server = lb.log_summary()["requests_per_server"]
            tracebacks = sum(r.log_tracebacks() for r in replicas)
        counted = store.counts(code, key, LESSON, QUESTION, setting_id({}), N).first
    tally = Counter(out["choices"])
    return {"students": students, "within_s": within, "answers": len(out["answers"]),
            "all_counted": counted == tuple(tally[i] for i in range(1, N + 1)) and sum(counted) == students,
            "recorded_shown": out["recorded"], "answer_p50_ms": _quantile(out["answers"], 0.5),
            "answer_p95_ms": _quantile(out["answers"], 0.95), "answer_max_ms": _quantile(out["answers"], 1.0),
            "target_p95_ms": TARGET_P95_MS, "polls": len(out["polls"]), "poll_p95_ms": _quantile(out["polls"], 0.95),
            "errors": len(out["errors"]) + tracebacks, "requests_per_replica": per_server,
            "load_avg_1m_before_after": (round(load_before[0], 2), round(load_after[0], 2)), "cpus": os.cpu_count()}


async def _warm(url: str) -> None:
    """Each replica's first run of the page (imports, word vectors) before the class: two tabs, the first kept open
    so that the balancer (least connections) sends the second to the other replica."""
    tabs = []
    try:
        for _ in range(2):
            cookie, _ = await asyncio.to_thread(fetch_page_cookies, f"{url}/{PAGE}", 120)
            tabs.append(StreamlitTab(url, timeout=120, cookie=cookie))
            await tabs[-1].connect()
            await tabs[-1].open_page(PAGE)
    finally:
        for tab in tabs:
            await tab.close()
