"""The "miss" phase (issue 11): one student, every widget of every page, each changed to a value the server
has not seen before, so every interaction is a cache miss of whatever the page computes from it.

Two fresh servers side by side, one driven with presenter mode off and one with it on (`?presenter=true`):
every change goes to both, one after the other (alternating which goes first), so both compute the same
things under the same machine conditions, and only one server works at a time. Per page: open it, then round by round change each widget of the
lesson (sidebar widgets are the frame's: language, presenter, export format, and are left alone) to an
unseen value: an unused slider grid point or option, a new seed, a new order of the sentence's words (or
the sentence one word shorter), another subset. Widgets that appear later (after a reveal) join the next
round; a widget that has run out of unseen values (a checkbox after one flip, a two-option radio) stops.
A button press is always new. The server's CPU time around each interaction is read from /proc (one
student, so it is that interaction's), in clock ticks: the report gives its mean per widget.
"""

from __future__ import annotations

import asyncio
import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench import report
from bench.load import page_label
from bench.protocol import StreamlitTab
from bench.widgets import Widget, _options

PAUSE_S = 0.05  # the server finishes its post-run work before the next interaction's CPU reading
SETTLE_S = 0.03  # after script_finished, before the CPU reading that closes the interaction
SEED_SPAN = 1_000_000  # new seeds are drawn from [min, min + SEED_SPAN] (or the widget's range)
TRIES = 64


def value_key(state: WidgetState) -> tuple:
    """What a WidgetState says, without the widget id: (field, value(s))."""
    which = state.WhichOneof("value")
    if which is None:
        return (None,)
    value = getattr(state, which)
    if which.endswith("_array_value"):
        return (which, tuple(value.data))
    return (which, value)


@dataclass
class Seen:
    """The values each widget (by page and key) has had on this server: defaults, and every value sent."""

    values: dict[tuple[str, str], set[tuple]] = field(default_factory=dict)

    def of(self, page: str, key: str) -> set[tuple]:
        return self.values.setdefault((page, key), set())

    def add(self, page: str, key: str, state: WidgetState | None) -> None:
        if state is not None:
            self.of(page, key).add(value_key(state))


def _grid(lo: float, hi: float, step: float, is_int: bool) -> list[float]:
    n = int(round((hi - lo) / step)) if step > 0 and hi > lo else 0
    values = [min(max(lo + i * step, lo), hi) for i in range(n + 1)]
    return [float(round(v)) if is_int else round(v, 12) for v in values]


def _pick_unseen(widget: Widget, candidates, seen: set[tuple], rng: random.Random, make) -> WidgetState | None:
    """A random candidate whose state is not in `seen` (candidates: a list, or a zero-argument sampler)."""
    if callable(candidates):
        for _ in range(TRIES):
            state = make(candidates())
            if state is not None and value_key(state) not in seen:
                return state
        return None
    pool = list(candidates)
    rng.shuffle(pool)
    for value in pool:
        state = make(value)
        if state is not None and value_key(state) not in seen:
            return state
    return None


def _reorderings(words: list[str], rng: random.Random):
    """Sentences from the same words: a swap of two words, a rotation, a shuffle, or one word fewer."""
    def sample() -> list[str]:
        w = list(words)
        how = rng.random()
        if how < 0.4 and len(w) >= 2:
            i, j = rng.sample(range(len(w)), 2)
            w[i], w[j] = w[j], w[i]
        elif how < 0.6 and len(w) >= 2:
            k = rng.randrange(1, len(w))
            w = w[k:] + w[:k]
        elif how < 0.8 and len(w) >= 4:
            del w[rng.randrange(len(w))]
        else:
            rng.shuffle(w)
        return w
    return sample


def unseen_state(widget: Widget, current: WidgetState | None, seen: set[tuple],
                 rng: random.Random) -> WidgetState | None:
    """A valid value for `widget` whose value is not in `seen` (None: it has none left to try)."""
    p, wid = widget.proto, widget.id
    kind = widget.kind
    if kind == "button":
        return WidgetState(id=wid, trigger_value=True)
    if kind == "slider":
        n_values = max(len(p.default), 1)
        if p.options:
            labels = list(p.options)
            make = lambda picks: WidgetState(id=wid, string_array_value={"data": [labels[i] for i in sorted(picks)]})  # noqa: E731
            if n_values == 1:
                return _pick_unseen(widget, [(i,) for i in range(len(labels))], seen, rng, make)
            return _pick_unseen(widget, lambda: rng.sample(range(len(labels)), n_values), seen, rng, make)
        grid = _grid(p.min, p.max, p.step or 1.0, p.data_type != p.FLOAT)
        make = lambda vals: WidgetState(id=wid, double_array_value={"data": sorted(vals)})  # noqa: E731
        if n_values == 1:
            return _pick_unseen(widget, [(v,) for v in grid], seen, rng, make)
        return _pick_unseen(widget, lambda: rng.sample(grid, n_values) if len(grid) >= n_values else grid,
                            seen, rng, make)
    if kind == "number_input":
        is_int = p.data_type == p.INT
        step = p.step or (1.0 if is_int else 0.01)
        lo = p.min if p.has_min else 0.0
        hi = min(p.max, lo + SEED_SPAN * step) if p.has_max else lo + SEED_SPAN * step
        grid_n = int(round((hi - lo) / step))
        make = lambda v: WidgetState(id=wid, double_value=float(round(v)) if is_int else round(v, 12))  # noqa: E731
        if grid_n <= 200:
            return _pick_unseen(widget, _grid(lo, hi, step, is_int), seen, rng, make)
        return _pick_unseen(widget, lambda: lo + rng.randint(0, grid_n) * step, seen, rng, make)
    if kind in ("selectbox", "radio"):
        return _pick_unseen(widget, _options(widget), seen, rng, lambda o: WidgetState(id=wid, string_value=o))
    if kind == "button_group" and p.click_mode == p.SINGLE_SELECT:
        return _pick_unseen(widget, _options(widget), seen, rng,
                            lambda o: WidgetState(id=wid, string_array_value={"data": [o]}))
    if kind in ("multiselect", "button_group"):
        options = _options(widget)
        cap = p.max_selections if kind == "multiselect" and p.max_selections else len(options)

        def subset() -> list[str]:
            return rng.sample(options, rng.randint(0, min(cap, len(options))))
        return _pick_unseen(widget, subset, seen, rng, lambda s: WidgetState(id=wid, string_array_value={"data": s}))
    if kind == "checkbox":
        now = current.bool_value if current is not None else p.default
        return _pick_unseen(widget, [not now], seen, rng, lambda b: WidgetState(id=wid, bool_value=b))
    if kind in ("text_input", "text_area"):
        # From the page's own sentence (its default), so sentences stay in the lesson's vocabulary and length
        # (at most one word fewer); a widget without a default sentence starts from what it shows.
        text = p.default if p.HasField("default") and len(p.default.split()) >= 2 else (
            current.string_value if current is not None and current.HasField("string_value") else "")
        words = text.split()
        if len(words) < 2:
            return None

        def make(ws: list[str]) -> WidgetState:
            out = " ".join(ws)
            return WidgetState(id=wid, string_value=out[: p.max_chars] if p.max_chars else out)
        return _pick_unseen(widget, _reorderings(words, rng), seen, rng, make)
    if kind == "color_picker":
        return _pick_unseen(widget, lambda: "#%06x" % rng.randrange(1 << 24), seen, rng,
                            lambda c: WidgetState(id=wid, string_value=c))
    if kind == "pagination":
        return _pick_unseen(widget, range(max(p.num_pages, 1)), seen, rng, lambda i: WidgetState(id=wid, int_value=i))
    return None


def widget_name(widget: Widget) -> str:
    """How the phase names a widget: its key (stable), else its kind and label."""
    return widget.user_key or f"{widget.kind}:{getattr(widget.proto, 'label', '')[:30]}"


@dataclass
class MissRecord:
    page: str
    widget: str
    kind: str
    latency_ms: float
    cpu_ms: float | None
    bytes: int
    errors: list[str]
    fragment: bool
    presenter: bool


def widget_rng(seed: int, page: str, name: str) -> random.Random:
    """One generator per widget: its values do not depend on which other widgets the page shows (presenter
    mode may show fewer), so both passes send the same values to the same widget."""
    return random.Random(zlib.crc32(f"{seed}|{page}|{name}".encode()))


@dataclass
class Lane:
    """One server of the miss phase: presenter mode off or on, its tab, its CPU reader, its records."""

    name: str  # "off" / "on"
    url: str
    read_cpu: Callable[[], float | None]
    tab: StreamlitTab | None = None
    records: list[MissRecord] = field(default_factory=list)
    pages: dict = field(default_factory=dict)

    @property
    def presenter(self) -> bool:
        return self.name == "on"

    @property
    def query(self) -> str:
        return "presenter=true" if self.presenter else ""


async def _change(lane: Lane, page: str, name: str, state: WidgetState) -> None:
    """Send `state` (a value computed for the leading lane) to this lane's widget of the same name."""
    tab = lane.tab
    if tab.ws is None:  # the page's open (or an earlier run) failed and dropped the socket: open it again
        await tab.connect()
        opened = await tab.open_page(page, lane.query)
        lane.pages[page_label(page)].setdefault("reopen_errors", []).extend(opened.errors)
    widget = next((w for w in tab.drivable_widgets() if widget_name(w) == name), None)
    if widget is None:
        return
    state = WidgetState.FromString(state.SerializeToString())
    state.id = widget.id
    triggers = [state] if widget.kind == "button" else []
    if not triggers:
        tab.states[widget.id] = state
    await asyncio.sleep(PAUSE_S)
    cpu0 = lane.read_cpu()
    result = await tab._run("widget", triggers=triggers, widget=name, fragment_id=widget.fragment_id)
    await asyncio.sleep(SETTLE_S)
    cpu1 = lane.read_cpu()
    cpu_ms = None if cpu0 is None or cpu1 is None else round((cpu1 - cpu0) * 1000, 1)
    lane.records.append(MissRecord(page_label(page), name, widget.kind, round(result.latency_s * 1000, 2), cpu_ms,
                                   result.bytes_received, list(result.errors), result.fragment, lane.presenter))
    if tab.ws is None:  # the run failed and dropped the socket: come back on the page
        await tab.connect()
        await tab.open_page(page, lane.query)


async def miss_page(lanes: list[Lane], page: str, *, per_widget: int, seed: int, seen: Seen) -> None:
    """Open `page` on every lane, then `per_widget` rounds over the lesson widgets of the first lane, each
    change to a value unseen on its server, sent to every lane in turn (the order alternates)."""
    label = page_label(page)
    for lane in lanes:
        opened = await lane.tab.open_page(page, lane.query)
        tab = lane.tab
        lane.pages[label] = {
            "open_ms": round(opened.latency_s * 1000, 1), "open_errors": opened.errors, "exhausted": [],
            "sidebar_skipped": sorted({widget_name(w) for w in tab.drivable_widgets() if w.in_sidebar}),
            "undriven": sorted({widget_name(w) for w in tab.widgets if not w.drivable}),
            "lesson_widgets": sorted({widget_name(w) for w in tab.drivable_widgets() if not w.in_sidebar})}
    lead = lanes[0].tab
    exhausted: set[str] = set()
    rngs: dict[str, random.Random] = {}
    turn = 0
    for _ in range(per_widget):
        for w in lead.drivable_widgets():
            seen.add(label, widget_name(w), lead.states.get(w.id))
        names = [widget_name(w) for w in lead.drivable_widgets() if not w.in_sidebar]
        for name in dict.fromkeys(names):
            if name in exhausted:
                continue
            widget = next((w for w in lead.drivable_widgets() if widget_name(w) == name), None)
            if widget is None:  # gone after an earlier change of this round (e.g. the sentence changed)
                continue
            seen.add(label, name, lead.states.get(widget.id))
            rng = rngs.setdefault(name, widget_rng(seed, label, name))
            state = unseen_state(widget, lead.states.get(widget.id), seen.of(label, name), rng)
            if state is None:
                exhausted.add(name)
                continue
            seen.add(label, name, state)
            order = lanes if turn % 2 == 0 else lanes[::-1]
            turn += 1
            for lane in order:
                await _change(lane, page, name, state)
            for w in lead.drivable_widgets():  # values the run itself set (a callback, a clamp) are seen too
                seen.add(label, widget_name(w), lead.states.get(w.id))
    for lane in lanes:
        lane.pages[label]["exhausted"] = sorted(exhausted)


async def miss_passes(lanes: list[Lane], pages: list[str], *, per_widget: int, seed: int,
                      timeout: float = 30.0) -> dict:
    """Every page in its own session on each lane's server; the same values to every lane, change by change."""
    seen = Seen()
    for page in pages:
        for lane in lanes:
            lane.tab = StreamlitTab(lane.url, timeout=timeout)
            await lane.tab.connect()
        counts = [len(lane.records) for lane in lanes]
        try:
            await miss_page(lanes, page, per_widget=per_widget, seed=seed, seen=seen)
        finally:
            for lane in lanes:
                await lane.tab.close()
        for lane, n in zip(lanes, counts):
            s = summarize([r.__dict__ for r in lane.records[n:]])
            print(f"  {page_label(page):16s} presenter {lane.name:3s} {s['n']:3d} misses, "
                  f"p50 {report._fmt(s['p50_ms'])} ms, p95 {report._fmt(s['p95_ms'])} ms, "
                  f"CPU mean {report._fmt(s['cpu_ms_mean'])} ms, errors {s['errors']}", flush=True)
    return {lane.name: {"records": [r.__dict__ for r in lane.records], "pages": lane.pages} for lane in lanes}


def summarize(records: list[dict]) -> dict:
    ok = [r for r in records if not r["errors"]]
    lat = [r["latency_ms"] for r in ok]
    cpu = [r["cpu_ms"] for r in ok if r["cpu_ms"] is not None]
    sizes = [r["bytes"] for r in records]
    return {
        "n": len(records),
        "p50_ms": report._r(report.percentile(lat, 50)),
        "p95_ms": report._r(report.percentile(lat, 95)),
        "max_ms": report._r(max(lat)) if lat else None,
        "cpu_ms_mean": report._r(sum(cpu) / len(cpu)) if cpu else None,
        "cpu_ms_total": report._r(sum(cpu)) if cpu else None,
        "bytes_mean": round(sum(sizes) / len(sizes)) if sizes else None,
        "errors": sum(len(r["errors"]) for r in records),
        "fragment_runs": sum(bool(r.get("fragment")) for r in records),
    }


def miss_summary(off: dict | None, on: dict | None, long_actions: tuple[str, ...] = ()) -> dict:
    """Per-widget and overall numbers of the two passes; long actions (e.g. training) apart."""
    out: dict = {"long_actions": list(long_actions), "widgets": [], "overall": {}, "pages": {}}
    passes = {"off": off, "on": on}
    keys: dict[tuple[str, str], str] = {}
    for p in passes.values():
        for r in (p or {}).get("records", []):
            keys.setdefault((r["page"], r["widget"]), r["kind"])
    for (page, widget), kind in keys.items():
        row = {"page": page, "widget": widget, "kind": kind, "long": widget in long_actions}
        for name, p in passes.items():
            recs = [r for r in (p or {}).get("records", []) if r["page"] == page and r["widget"] == widget]
            row[name] = summarize(recs) if p else None
        out["widgets"].append(row)
    for name, p in passes.items():
        if not p:
            continue
        recs = p["records"]
        out["overall"][name] = summarize([r for r in recs if r["widget"] not in long_actions])
        out["overall"][name + "_long"] = summarize([r for r in recs if r["widget"] in long_actions])
        out["pages"][name] = p["pages"]
    if off and on:
        out.update(presenter_ratios(off["records"], on["records"], long_actions))
    return out


def _numbered(records: list[dict]) -> dict[tuple[str, str, int], dict]:
    """(page, widget, i) -> the i-th change of that widget: the same value in both passes."""
    count: dict[tuple[str, str], int] = {}
    out = {}
    for r in records:
        k = (r["page"], r["widget"])
        count[k] = count.get(k, 0) + 1
        out[(*k, count[k])] = r
    return out


def presenter_ratios(off: list[dict], on: list[dict], long_actions: tuple[str, ...] = ()) -> dict:
    """Presenter on / off over the changes both passes made (same page, widget and turn), without errors:
    the ratio of total server CPU and of median latency; plus what only one pass could change."""
    a, b = _numbered(off), _numbered(on)
    both = [k for k in a if k in b and k[1] not in long_actions and not a[k]["errors"] and not b[k]["errors"]]
    cpu_off = sum(a[k]["cpu_ms"] or 0 for k in both)
    cpu_on = sum(b[k]["cpu_ms"] or 0 for k in both)
    p50_off = report.percentile([a[k]["latency_ms"] for k in both], 50)
    p50_on = report.percentile([b[k]["latency_ms"] for k in both], 50)
    only = lambda x, y: sorted({f"{k[0]} {k[1]}" for k in x if k not in y})  # noqa: E731
    return {
        "presenter_pairs": len(both),
        "presenter_cpu_ratio": round(cpu_on / cpu_off, 2) if cpu_off else None,
        "presenter_p50_ratio": round(p50_on / p50_off, 2) if both and p50_off else None,
        "only_presenter_off": only(a, b),
        "only_presenter_on": only(b, a),
    }


def markdown(summary: dict) -> list[str]:
    f, kb = report._fmt, report._kb
    lines = ["", "#### One student, a cache miss per interaction (every lesson widget, presenter mode off / on)", "",
             "Each change sends a value the server has not seen; two fresh servers, presenter off and on, get the same "
             "change one after the other (alternating which goes first). "
             "CPU = the server process's CPU time around the interaction (/proc, 10 ms ticks: a mean over n).", "",
             "| page | widget | kind | n | p50 off (ms) | p95 off (ms) | CPU off (ms) | p50 on (ms) | p95 on (ms) "
             "| CPU on (ms) | kB mean | errors |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in summary["widgets"]:
        o, n = row.get("off") or {}, row.get("on") or {}
        errors = (o.get("errors") or 0) + (n.get("errors") or 0)
        name = row["widget"] + (" (long action)" if row["long"] else "")
        lines.append(f"| {row['page']} | {name} | {row['kind']} | {o.get('n', n.get('n'))} | {f(o.get('p50_ms'))} "
                     f"| {f(o.get('p95_ms'))} | {f(o.get('cpu_ms_mean'))} | {f(n.get('p50_ms'))} | {f(n.get('p95_ms'))} "
                     f"| {f(n.get('cpu_ms_mean'))} | {kb(o.get('bytes_mean', n.get('bytes_mean')))} | {errors} |")
    lines += ["", "| pass | misses | p50 (ms) | p95 (ms) | max (ms) | CPU mean (ms) | errors | fragment runs |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, s in summary["overall"].items():
        if s["n"]:
            title = {"off": "presenter off", "on": "presenter on", "off_long": "long actions, presenter off",
                     "on_long": "long actions, presenter on"}[name]
            lines.append(f"| {title} | {s['n']} | {f(s['p50_ms'])} | {f(s['p95_ms'])} | {f(s['max_ms'])} "
                         f"| {f(s['cpu_ms_mean'])} | {s['errors']} | {s['fragment_runs']} |")
    if summary.get("presenter_cpu_ratio") is not None:
        lines += ["", f"Presenter on / off, over the {summary['presenter_pairs']} changes both passes made (same page, "
                      f"widget, turn and value): server CPU {f(summary['presenter_cpu_ratio'], 2)}x, "
                      f"p50 latency {f(summary.get('presenter_p50_ratio'), 2)}x."]
        for name in ("off", "on"):
            if summary.get(f"only_presenter_{name}"):
                lines.append(f"Changed only with presenter mode {name} (the widget was not on screen in the other "
                             f"pass, or ran out of values there): {', '.join(summary[f'only_presenter_{name}'])}.")
    failed = [f"{page} (presenter {name}): {', '.join(info.get('open_errors', []) + info.get('reopen_errors', []))}"
              for name, pages in summary["pages"].items() for page, info in pages.items()
              if info.get("open_errors") or info.get("reopen_errors")]
    if failed:
        lines += ["", "Page opens that failed: " + "; ".join(failed) + "."]
    notes = []
    for name, pages in summary["pages"].items():
        for page, info in pages.items():
            if info.get("exhausted") and name == "off":
                notes.append(f"{page}: out of unseen values: {', '.join(info['exhausted'])}")
    if notes:
        lines += ["", "Widgets that ran out of unseen values before the last round (fewer n): " + "; ".join(notes) + "."]
    return lines


def check(summary: dict, target_p95_ms: float, target_ratio: float, long_limit_ms: float) -> list[dict]:
    checks = []
    for name in ("off", "on"):
        s = summary["overall"].get(name)
        if s and s["n"]:
            checks.append({"target": f"cache miss, presenter {name}: p95 <= {target_p95_ms:g} ms", "value": s["p95_ms"],
                           "limit": target_p95_ms, "ok": s["p95_ms"] is not None and s["p95_ms"] <= target_p95_ms
                           and s["errors"] == 0})
        long = summary["overall"].get(name + "_long")
        if long and long["n"]:
            checks.append({"target": f"long action ({', '.join(summary['long_actions'])}), presenter {name}: "
                                     f"max <= {long_limit_ms / 1000:g} s", "value": long["max_ms"],
                           "limit": long_limit_ms, "ok": long["max_ms"] is not None and long["max_ms"] <= long_limit_ms})
    ratio = summary.get("presenter_cpu_ratio")
    if ratio is not None:
        checks.append({"target": f"presenter mode: server CPU per miss <= {target_ratio:g}x off", "value": ratio,
                       "limit": target_ratio, "ok": ratio <= target_ratio})
    return checks

