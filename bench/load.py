"""The benchmark scenarios: cold start, one student per page, N concurrent students.

Everything a virtual student does goes through `bench.protocol.StreamlitTab` (the websocket
protocol, as the browser speaks it). All randomness comes from `random.Random(seed)`, one per
student, so a run with the same options makes the same choices.
"""

from __future__ import annotations

import asyncio
import random
import resource
import time
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from http.cookies import SimpleCookie

from bench.protocol import RunResult, StreamlitTab

PAUSE_S = 0.05  # between a single user's runs: the server finishes its post-run work, as with a person


@dataclass
class RunRecord:
    """A RunResult flattened for the JSON report (t = seconds since the scenario started)."""

    t: float
    student: int
    kind: str
    page: str
    latency_ms: float
    bytes: int
    messages: int
    errors: list[str]
    error_alerts: int
    widget: str
    fragment: bool = False  # only an @st.fragment ran (a widget inside it changed)

    @classmethod
    def of(cls, result: RunResult, t0: float, student: int = 0) -> RunRecord:
        return cls(
            t=round(result.started_at - t0, 3), student=student, kind=result.kind, page=page_label(result.page),
            latency_ms=round(result.latency_s * 1000, 2), bytes=result.bytes_received, messages=result.messages,
            errors=list(result.errors), error_alerts=result.error_alerts, widget=result.widget,
            fragment=result.fragment,
        )


async def connect_with_retry(tab: StreamlitTab, deadline: float) -> None:
    """Connect as soon as the server accepts websockets (used while it is still starting)."""
    while True:
        try:
            await tab.connect()
            return
        except Exception:  # noqa: BLE001 - refused, reset or 503 while the server starts
            if time.perf_counter() > deadline:
                raise
            await asyncio.sleep(0.02)


async def discover_pages(base_url: str, timeout: float = 60.0) -> list[str]:
    """The app's url paths in navigation order, read from the navigation ForwardMsg of a first run.

    The default page's url path is "" (Streamlit serves it at "/" whatever its `url_path`).
    """
    tab = StreamlitTab(base_url, timeout=timeout)
    await tab.connect()
    try:
        await tab.open_page("")
        return list(tab.pages) or [""]
    finally:
        await tab.close()


def resolve_pages(requested: list[str], available: list[str]) -> list[str]:
    """--pages values -> url paths; "/" and "home" name the default page ("") when no page is called that."""
    resolved = []
    for name in requested:
        path = name.strip().strip("/")
        if path == "home" and "home" not in available:
            path = ""
        if path not in available:
            shown = ", ".join(page_label(p) for p in available)
            raise ValueError(f"no page {name!r}; the app has {shown}")
        resolved.append(path)
    return resolved


def page_label(url_path: str) -> str:
    """How reports name a page: its URL path ("/" for the default page)."""
    return "/" + url_path


async def cold_start(base_url: str, started_at: float, page: str, timeout: float = 120.0) -> dict:
    """From process spawn (`started_at`, perf_counter) to the first completed run of `page`."""
    tab = StreamlitTab(base_url, timeout=timeout)
    await connect_with_retry(tab, started_at + timeout)
    connected = time.perf_counter()
    try:
        result = await tab.open_page(page)
    finally:
        await tab.close()
    done = time.perf_counter()
    return {
        "page": page_label(page),
        "websocket_ready_s": round(connected - started_at, 3),
        "first_run_s": round(result.latency_s, 3),
        "start_to_page_s": round(done - started_at, 3),
        "bytes": result.bytes_received,
        "errors": result.errors,
    }


async def single_user(base_url: str, page: str, *, reruns: int, interactions: int, seed: int,
                      timeout: float = 30.0) -> list[RunRecord]:
    """One student alone: open `page`, rerun it unchanged `reruns` times, then change widgets."""
    rng = random.Random(seed)
    tab = StreamlitTab(base_url, timeout=timeout)
    await tab.connect()
    t0 = time.perf_counter()
    records = []

    async def step(action) -> None:
        await asyncio.sleep(PAUSE_S)
        if tab.ws is None:  # the last run failed and dropped the socket: come back as a new tab
            await tab.connect()
            records.append(RunRecord.of(await tab.open_page(page), t0))
        records.append(RunRecord.of(await action(), t0))

    try:
        records.append(RunRecord.of(await tab.open_page(page), t0))
        for _ in range(reruns):
            await step(tab.rerun)
        for _ in range(interactions):
            await step(lambda: tab.change_random_widget(rng))
    finally:
        await tab.close()
    return records


@dataclass
class LoadConfig:
    students: int = 40
    duration_s: float = 60.0
    think_s: float = 1.0  # mean time between one student's interactions (uniform 0.5x..1.5x)
    navigate_p: float = 0.1  # chance that an interaction is a page change instead of a widget change
    ramp_s: float = 5.0  # students arrive spread over this many seconds
    timeout_s: float = 30.0
    long_actions: tuple[str, ...] = ()  # widget keys of explicit long actions, with their progress on screen meanwhile
    long_timeout_s: float = 120.0  # ... a run of one counts as an error only past this
    seed: int = 0
    pages: list[str] = field(default_factory=list)
    get_page_first: bool = False  # GET the page's HTML first and keep its cookies, as a browser does
    reconnect_after_s: float | None = None  # drop the websocket once, then resume the same session


def fetch_page_cookies(url: str, timeout: float) -> tuple[str, str]:
    """GET the page as a browser does first -> (Cookie header to send back, X-Upstream of the answer)."""
    with urllib.request.urlopen(url, timeout=timeout) as r:
        r.read()
        jar = SimpleCookie()
        for header in r.headers.get_all("Set-Cookie") or []:
            jar.load(header)
        cookie = "; ".join(f"{k}={m.value}" for k, m in jar.items())
        return cookie, r.headers.get("X-Upstream", "")


async def _student(i: int, base_url: str, cfg: LoadConfig, t0: float, end: float,
                   sink: list[RunRecord], errors: list[dict], sessions: list[dict]) -> None:
    rng = random.Random(cfg.seed * 100_003 + i)
    await asyncio.sleep(cfg.ramp_s * i / max(cfg.students, 1))
    page = cfg.pages[i % len(cfg.pages)]
    tab = StreamlitTab(base_url, timeout=cfg.timeout_s)
    tab.long_actions, tab.long_timeout = frozenset(cfg.long_actions), cfg.long_timeout_s
    info = {"student": i, "http_upstream": "", "ws_upstreams": [], "session_ids": [], "resumed": None}
    sessions.append(info)

    def error(text: str) -> None:
        errors.append({"t": round(time.perf_counter() - t0, 3), "student": i, "error": text[:200]})

    try:
        if cfg.get_page_first:
            tab.cookie, info["http_upstream"] = await asyncio.to_thread(
                fetch_page_cookies, f"{base_url.rstrip('/')}/{page}", cfg.timeout_s)
        await tab.connect()
    except Exception as exc:  # noqa: BLE001 - every failure to connect is a reported error
        error(f"connect: {exc!r}")
        return
    reconnect_at = None if cfg.reconnect_after_s is None else t0 + cfg.ramp_s + cfg.reconnect_after_s

    async def reconnect() -> RunResult:
        """The browser's reconnect: the same session id, then a rerun."""
        first_session = tab.session_id
        await tab.reconnect()
        info["ws_upstreams"].append(tab.upstream)
        result = await tab.rerun()
        info["session_ids"].append(tab.session_id)
        info["resumed"] = tab.session_id == first_session
        return result

    try:
        info["ws_upstreams"].append(tab.upstream)
        sink.append(RunRecord.of(await tab.open_page(page), t0, i))
        info["session_ids"].append(tab.session_id)
        next_at = time.perf_counter() + rng.uniform(0.5, 1.5) * cfg.think_s
        while next_at < end:
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
            next_at += rng.uniform(0.5, 1.5) * cfg.think_s
            if tab.ws is None:  # the server dropped us: come back as a new tab
                await tab.connect()
                result = await tab.open_page(page)
            elif reconnect_at is not None and time.perf_counter() >= reconnect_at:
                reconnect_at = None
                result = await reconnect()
            elif len(cfg.pages) > 1 and rng.random() < cfg.navigate_p:
                page = rng.choice([p for p in cfg.pages if p != page])
                result = await tab.navigate(page)
            else:
                result = await tab.change_random_widget(rng)
            sink.append(RunRecord.of(result, t0, i))
            next_at = max(next_at, time.perf_counter())  # a slow run delays, never bunches, the next one
        if reconnect_at is not None and tab.ws is not None and time.perf_counter() >= reconnect_at:
            sink.append(RunRecord.of(await reconnect(), t0, i))  # a long action ran from before its time to the end
    except Exception as exc:  # noqa: BLE001
        error(repr(exc))
    finally:
        await tab.close()


async def sample_memory(read: Callable[[], dict], t0: float, stop: asyncio.Event,
                        every_s: float = 1.0) -> list[dict]:
    """The server's RSS (MB) and CPU use (% of one core since the last sample) every `every_s` s."""
    samples = []
    last = None
    while not stop.is_set():
        mem = read()
        now = time.perf_counter()
        if mem:
            sample = {"t": round(now - t0, 2), "rss_mb": round(mem["VmRSS"] / 2**20, 1)}
            if "RssAnon" in mem:  # private memory; the rest of RSS is files mapped from the shared page cache
                sample["private_mb"] = round(mem["RssAnon"] / 2**20, 1)
            if mem.get("cpu_s") is not None:
                if last is not None:
                    sample["cpu_pct"] = round(100 * (mem["cpu_s"] - last[1]) / max(now - last[0], 1e-6))
                last = (now, mem["cpu_s"])
            samples.append(sample)
        try:
            await asyncio.wait_for(stop.wait(), timeout=every_s)
        except asyncio.TimeoutError:
            pass
    return samples


async def concurrent_students(base_url: str, cfg: LoadConfig,
                              read_memory: Callable[[], dict[str, int]] | None = None) -> dict:
    """N students, each interacting about once per `think_s` for `duration_s` seconds."""
    records: list[RunRecord] = []
    student_errors: list[dict] = []
    t0 = time.perf_counter()
    end = t0 + cfg.ramp_s + cfg.duration_s
    stop = asyncio.Event()
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    sampler = asyncio.create_task(sample_memory(read_memory or (lambda: {}), t0, stop))
    sessions: list[dict] = []
    students = [asyncio.create_task(_student(i, base_url, cfg, t0, end, records, student_errors, sessions))
                for i in range(cfg.students)]
    hard_limit = cfg.ramp_s + cfg.duration_s + 2 * max(cfg.timeout_s, cfg.long_timeout_s) + 10
    done, pending = await asyncio.wait(students, timeout=hard_limit)
    for task in pending:
        task.cancel()
        student_errors.append({"t": round(time.perf_counter() - t0, 3), "student": -1, "error": "student hung"})
    stop.set()
    memory = await sampler
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    generator_cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return {
        "generator_cpu_s": round(generator_cpu, 2),
        "config": asdict(cfg),
        "wall_s": round(time.perf_counter() - t0, 2),
        "records": records,
        "student_errors": student_errors,
        "memory": memory,
        "sessions": sorted(sessions, key=lambda x: x["student"]),
    }
