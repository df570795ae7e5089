"""The "guided class": N students follow each page's "What to try" steps together.

The steps live in bench/guided.toml, keyed by widget key. The class goes page by page in the app's
navigation order, as a teacher leads it: every student clicks the page in the sidebar (spread over
`stagger_s`), then does the page's steps in order with a human pause before each (uniform in `pause_s`),
and the class moves on when everyone is done. Everyone sends the same values, so only the first student
to reach a value pays its computation. A step whose widget is not on screen is skipped and reported.
"""

from __future__ import annotations

import asyncio
import random
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.load import page_label, sample_memory
from bench.protocol import StreamlitTab
from bench.stats import fmt, kb, latency_summary
from bench.widgets import Widget, _options

GUIDED_FILE = Path(__file__).resolve().parent / "guided.toml"


@dataclass(frozen=True)
class Step:
    widget: str
    value: object = None
    click: bool = False


def load_steps(path: Path = GUIDED_FILE) -> dict[str, list[Step]]:
    """url path ("" for home) -> the page's steps, from the TOML file."""
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    out = {}
    for name, page in (data.get("pages") or {}).items():
        steps = []
        for raw in page.get("steps", []):
            if "widget" not in raw or ("value" not in raw and not raw.get("click")):
                raise ValueError(f"{path}: page {name!r}: a step needs `widget` and `value` or `click = true`: {raw}")
            steps.append(Step(str(raw["widget"]), raw.get("value"), bool(raw.get("click", False))))
        out["" if name in ("home", "/") else name.strip("/")] = steps
    return out


def _match_option(options: list[str], value) -> str | None:
    """The option a step means: its exact text, a number equal to it, the first that starts with / contains
    the text (case-insensitive), or, for an int, the option at that index."""
    text = str(value)
    if text in options:
        return text
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for o in options:
            try:
                if float(o) == float(value):
                    return o
            except ValueError:
                pass
    low = text.lower()
    for test in (lambda o: o.lower().startswith(low), lambda o: low in o.lower()):
        for o in options:
            if test(o):
                return o
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(options):
        return options[value]
    return None


def state_for(widget: Widget, step: Step) -> WidgetState:
    """The WidgetState the browser sends for `step` on `widget`; ValueError if it does not fit the widget."""
    p, wid, kind, value = widget.proto, widget.id, widget.kind, step.value
    if kind == "button" or step.click:
        if kind != "button":
            raise ValueError(f"{step.widget} is a {kind}, not a button")
        return WidgetState(id=wid, trigger_value=True)
    if kind == "slider":
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        if p.options:
            picked = [_match_option(list(p.options), v) for v in values]
            if None in picked:
                raise ValueError(f"{step.widget}: {value!r} is not one of {list(p.options)}")
            return WidgetState(id=wid, string_array_value={"data": picked})
        nums = [float(v) for v in values]
        if any(not (p.min - 1e-9 <= v <= p.max + 1e-9) for v in nums):
            raise ValueError(f"{step.widget}: {value!r} is outside {p.min:g}..{p.max:g}")
        return WidgetState(id=wid, double_array_value={"data": nums})
    if kind == "number_input":
        v = float(value)
        if (p.has_min and v < p.min) or (p.has_max and v > p.max):
            raise ValueError(f"{step.widget}: {value!r} is outside the input's range")
        return WidgetState(id=wid, double_value=float(round(v)) if p.data_type == p.INT else v)
    if kind in ("selectbox", "radio", "button_group", "multiselect"):
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        picked = [_match_option(_options(widget), v) for v in values]
        if None in picked:
            raise ValueError(f"{step.widget}: {value!r} is not one of {_options(widget)}")
        if kind in ("selectbox", "radio"):
            return WidgetState(id=wid, string_value=picked[0])
        return WidgetState(id=wid, string_array_value={"data": picked})
    if kind == "checkbox":
        if not isinstance(value, bool):
            raise ValueError(f"{step.widget}: a checkbox takes true or false, not {value!r}")
        return WidgetState(id=wid, bool_value=value)
    if kind in ("text_input", "text_area"):
        return WidgetState(id=wid, string_value=str(value))
    raise ValueError(f"{step.widget}: the guided class does not drive a {kind}")


@dataclass
class GuidedRecord:
    t: float
    student: int
    kind: str  # "open", "navigate", "step"
    page: str
    widget: str
    latency_ms: float
    bytes: int
    errors: list[str]
    fragment: bool = False
    error_alerts: int = 0


async def _student_page(i: int, tab: StreamlitTab, page: str, steps: list[Step], cfg: dict, rng: random.Random,
                        t0: float, sink: list[GuidedRecord], skipped: list[dict]) -> None:
    await asyncio.sleep(rng.uniform(0, cfg["stagger_s"]))
    if tab.ws is None:
        await tab.connect()
        result = await tab.open_page(page)
    else:
        result = await (tab.open_page(page) if not tab.page and not tab.pages else tab.navigate(page))
    sink.append(GuidedRecord(round(result.started_at - t0, 3), i, result.kind, page_label(page), "",
                             round(result.latency_s * 1000, 2), result.bytes_received, list(result.errors),
                             result.fragment, result.error_alerts))
    for step in steps:
        await asyncio.sleep(rng.uniform(*cfg["pause_s"]))
        widget = next((w for w in tab.drivable_widgets() if w.user_key == step.widget), None)
        if widget is None:
            skipped.append({"student": i, "page": page_label(page), "widget": step.widget, "why": "not on screen"})
            continue
        try:
            state = state_for(widget, step)
        except ValueError as exc:
            skipped.append({"student": i, "page": page_label(page), "widget": step.widget, "why": str(exc)})
            continue
        triggers = []
        if widget.kind == "button":
            triggers.append(state)
        else:
            tab.states[widget.id] = state
        result = await tab._run("widget", triggers=triggers, widget=step.widget, fragment_id=widget.fragment_id)
        sink.append(GuidedRecord(round(result.started_at - t0, 3), i, "step", page_label(page), step.widget,
                                 round(result.latency_s * 1000, 2), result.bytes_received, list(result.errors),
                                 result.fragment, result.error_alerts))
        if tab.ws is None:  # the run failed and dropped the socket: back on the page, as a new tab
            await tab.connect()
            await tab.open_page(page)


async def guided_class(base_url: str, pages: list[str], steps: dict[str, list[Step]], *, students: int = 40,
                       pause_s: tuple[float, float] = (3.0, 8.0), stagger_s: float = 2.0, seed: int = 0,
                       timeout_s: float = 30.0, read_memory=None) -> dict:
    """The whole class, page after page; returns records, skipped steps and the pages without steps."""
    cfg = {"pause_s": pause_s, "stagger_s": stagger_s}
    records: list[GuidedRecord] = []
    skipped: list[dict] = []
    t0 = time.perf_counter()
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_memory(read_memory or (lambda: {}), t0, stop))
    tabs = [StreamlitTab(base_url, timeout=timeout_s) for _ in range(students)]
    rngs = [random.Random(seed * 100_003 + i) for i in range(students)]
    led = [p for p in pages if p in steps]
    try:
        await asyncio.gather(*(t.connect() for t in tabs))
        for page in led:
            print(f"  guided: {len(tabs)} students on {page_label(page)} ({len(steps[page])} steps)", flush=True)
            await asyncio.gather(*(_student_page(i, tab, page, steps[page], cfg, rngs[i], t0, records, skipped)
                                   for i, tab in enumerate(tabs)))
    finally:
        await asyncio.gather(*(t.close() for t in tabs), return_exceptions=True)
        stop.set()
        memory = await sampler
    return {
        "config": {"students": students, "pause_s": list(pause_s), "stagger_s": stagger_s, "seed": seed},
        "wall_s": round(time.perf_counter() - t0, 2),
        "records": [r.__dict__ for r in records],
        "skipped": skipped,
        "pages_led": [page_label(p) for p in led],
        "pages_without_steps": [page_label(p) for p in pages if p not in steps],
        "steps_for_missing_pages": sorted(page_label(p) for p in steps if p not in pages),
        "memory": memory,
    }


def guided_summary(raw: dict, long_actions: tuple[str, ...] = ()) -> dict:
    """Steps (widget changes; explicitly long actions apart) and page opens, per page and per step widget."""
    recs = raw["records"]
    all_steps = [r for r in recs if r["kind"] == "step"]
    steps = [r for r in all_steps if r["widget"] not in long_actions]
    by_step: dict[tuple[str, str], list[dict]] = {}
    for r in all_steps:
        by_step.setdefault((r["page"], r["widget"]), []).append(r)
    skipped: dict[tuple[str, str, str], int] = {}
    for s in raw["skipped"]:
        k = (s["page"], s["widget"], s["why"])
        skipped[k] = skipped.get(k, 0) + 1
    rss = [m["rss_mb"] for m in raw.get("memory", [])]
    return {
        "students": raw["config"]["students"],
        "pause_s": raw["config"]["pause_s"],
        "wall_s": raw["wall_s"],
        "steps": latency_summary(steps),
        "long_actions": list(long_actions),
        "long_steps": latency_summary([r for r in all_steps if r["widget"] in long_actions]),
        "navigations": latency_summary([r for r in recs if r["kind"] != "step"]),
        "by_page": {p: latency_summary([r for r in steps if r["page"] == p])
                    for p in dict.fromkeys(r["page"] for r in steps)},
        "by_widget": [{"page": p, "widget": w, **latency_summary(rs)} for (p, w), rs in by_step.items()],
        "skipped": [{"page": p, "widget": w, "why": why, "students": n} for (p, w, why), n in skipped.items()],
        "pages_without_steps": raw["pages_without_steps"],
        "steps_for_missing_pages": raw["steps_for_missing_pages"],
        "errors": sum(len(r["errors"]) for r in recs),
        "rss_max_mb": max(rss) if rss else None,
    }


def markdown(s: dict) -> list[str]:
    f = fmt
    a, nav = s["steps"], s["navigations"]
    lines = ["", f"#### Guided class: {s['students']} students follow each page's \"What to try\" "
                 f"(bench/guided.toml, pauses {s['pause_s'][0]:g}-{s['pause_s'][1]:g} s, {s['wall_s']:.0f} s)", "",
             "| runs | n | p50 (ms) | p95 (ms) | p99 (ms) | max (ms) | kB mean | errors |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    rows = [("steps (widget changes)", a), ("page opens (sidebar click)", nav)]
    if s.get("long_steps", {}).get("n"):
        rows.insert(1, (f"long actions ({', '.join(s['long_actions'])})", s["long_steps"]))
    for name, x in rows:
        lines.append(f"| {name} | {x['n']} | {f(x['p50_ms'])} | {f(x['p95_ms'])} | {f(x['p99_ms'])} | {f(x['max_ms'])} "
                     f"| {kb(x['bytes_mean'])} | {x['errors']} |")
    lines += ["", "| page | step widget | n | p50 (ms) | p95 (ms) | max (ms) |", "|---|---|---:|---:|---:|---:|"]
    for w in s["by_widget"]:
        name = w["widget"] + (" (long action)" if w["widget"] in s.get("long_actions", []) else "")
        lines.append(f"| {w['page']} | {name} | {w['n']} | {f(w['p50_ms'])} | {f(w['p95_ms'])} | {f(w['max_ms'])} |")
    if s["skipped"]:
        lines += ["", "Skipped steps: " + "; ".join(f"{x['page']} {x['widget']} x{x['students']} ({x['why']})"
                                                 for x in s["skipped"]) + "."]
    if s["pages_without_steps"]:
        lines += ["", "Pages without steps in bench/guided.toml (not led): " + ", ".join(s["pages_without_steps"]) + "."]
    if s["steps_for_missing_pages"]:
        lines += ["", "Steps for pages not run (not among --pages, or no longer in the app): "
                  + ", ".join(s["steps_for_missing_pages"]) + "."]
    return lines


def check(s: dict, target_p95_ms: float) -> list[dict]:
    p95 = s["steps"]["p95_ms"]
    return [{"target": f"guided class ({s['students']} students): step p95 <= {target_p95_ms:g} ms "
                       f"(long actions apart), no errors",
             "value": p95, "limit": target_p95_ms, "ok": p95 is not None and p95 <= target_p95_ms and s["errors"] == 0}]
