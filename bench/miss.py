"""The "miss" phase: one student, every widget of every page, each changed to a value the server
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

from bench.load import page_label
from bench.miss_report import summarize
from bench.protocol import StreamlitTab
from bench.stats import fmt
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
                  f"p50 {fmt(s['p50_ms'])} ms, p95 {fmt(s['p95_ms'])} ms, "
                  f"CPU mean {fmt(s['cpu_ms_mean'])} ms, errors {s['errors']}", flush=True)
    return {lane.name: {"records": [r.__dict__ for r in lane.records], "pages": lane.pages} for lane in lanes}
