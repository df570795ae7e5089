"""The benchmark's load generator speaks Streamlit's protocol correctly (no timing is asserted here).

Two real `streamlit run` servers on free loopback ports:
- the app itself: the generator opens the default page, changes widgets it found in the deltas, sees
  script_finished, and two concurrent students run for two seconds with zero errors;
- a small fixture app with one widget of every kind the generator drives, a form and a second page:
  every value the generator sends is the value the script receives (the script echoes its
  session state), navigation keeps the session, and a reconnect resumes it.
The pure parts (percentiles, the launcher's command) are checked without a server.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import random
from pathlib import Path

import numpy as np
import pytest

from bench import load, report, stats
from bench.protocol import StreamlitTab
from bench.server import APP_SCRIPT, PRODUCTION_OPTIONS, StreamlitServer

FIXTURE_APP = '''
import json
import streamlit as st

KEYS = ["t_d", "t_range", "t_ss", "t_n", "t_sel", "t_r", "t_c", "t_tg", "t_txt", "t_m", "t_pl", "t_fs"]

def lesson():
    st.session_state.full_runs = st.session_state.get("full_runs", 0) + 1
    st.slider("d", 1, 64, 8, key="t_d")
    st.slider("range", 0.0, 1.0, (0.2, 0.8), step=0.1, key="t_range")
    st.select_slider("s", ["a", "b", "c"], value="b", key="t_ss")
    st.number_input("n", 0, 10, 3, key="t_n")
    st.selectbox("sel", ["x", "y", "z"], key="t_sel")
    st.radio("r", ["p", "q"], index=None, key="t_r")
    st.checkbox("c", key="t_c")
    st.toggle("tg", key="t_tg")
    st.text_input("txt", "the cat sat", key="t_txt")
    st.multiselect("m", ["u", "v", "w"], key="t_m")
    st.pills("pl", ["i", "j"], key="t_pl")
    if st.button("b", key="t_b"):
        st.session_state.clicks = st.session_state.get("clicks", 0) + 1
    with st.form("f"):
        st.slider("fs", 0, 5, 1, key="t_fs")
        st.form_submit_button("go")
    state = {k: st.session_state.get(k) for k in KEYS}
    state["clicks"] = st.session_state.get("clicks", 0)
    st.code(json.dumps(state, default=list), language=None)
    part()

@st.fragment
def part():
    st.slider("fr", 0, 9, 4, key="t_fr")
    st.text(json.dumps({"t_fr": st.session_state.t_fr, "full_runs": st.session_state.full_runs}))

def other():
    st.slider("o", 0, 3, 1, key="o_s")

PRESETS = {"low": 1, "high": 9}

def load_preset():
    st.session_state.p_a = PRESETS[st.session_state.p_sel]

def forget_preset():  # as /qkv: moving the slider makes the query one's own (the selectbox shows none)
    st.session_state.p_sel = None

def preset():
    st.selectbox("preset", list(PRESETS), key="p_sel", on_change=load_preset)
    st.slider("a", 0, 10, 1, key="p_a", on_change=forget_preset)
    st.slider("b", 0, 10, 5, key="p_b")
    st.code(json.dumps({k: st.session_state.get(k) for k in ("p_sel", "p_a", "p_b")}), language=None)

def slow():  # a long action: its run takes seconds
    if st.button("train", key="w_b"):
        import time
        time.sleep(3.0)
    st.text("trained")

st.navigation([st.Page(lesson, title="Lesson", default=True), st.Page(other, title="Other", url_path="other"),
               st.Page(preset, title="Preset", url_path="preset"), st.Page(slow, title="Slow", url_path="slow")]).run()
'''


def run_coroutine(coro):
    """asyncio.run in a fresh thread: Playwright's sync API (the browser tests) may own this thread's event loop."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture(scope="module")
def app_server(tmp_path_factory):
    srv = StreamlitServer(APP_SCRIPT, options=PRODUCTION_OPTIONS,
                          log_path=tmp_path_factory.mktemp("bench") / "server.log")
    with srv:
        srv.wait_healthy(timeout=90)
        yield srv


@pytest.fixture(scope="module")
def fixture_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fixture_app")
    (folder / "fixture_app.py").write_text(FIXTURE_APP)
    srv = StreamlitServer(str(folder / "fixture_app.py"), options=PRODUCTION_OPTIONS, log_path=folder / "server.log")
    with srv:
        srv.wait_healthy(timeout=90)
        yield srv


# --- the app ----------------------------------------------------------------------------------------

async def _drive_app(url: str) -> tuple[StreamlitTab, list]:
    tab = StreamlitTab(url, timeout=60)
    await tab.connect()
    try:
        runs = [await tab.open_page("")]
        runs += [await tab.change_random_widget(random.Random(seed)) for seed in range(3)]
        runs.append(await tab.rerun())
    finally:
        await tab.close()
    return tab, runs


def test_the_app_opens_and_its_widgets_change(app_server):
    tab, runs = run_coroutine(_drive_app(app_server.url))
    opened, *changed, again = runs
    assert [r.errors for r in runs] == [[]] * len(runs)
    assert tab.session_id and "" in tab.pages and len(tab.pages) > 1, "new_session and navigation were read"
    assert opened.kind == "open" and opened.messages > 0 and opened.bytes_received > 0
    assert all(r.kind == "widget" and r.widget for r in changed), [(r.kind, r.widget) for r in changed]
    assert again.kind == "rerun"
    assert tab.drivable_widgets(), "the frame's and the page's widgets were read out of the deltas"


def test_concurrent_students_on_the_app_report_no_errors(app_server):
    cfg = load.LoadConfig(students=2, duration_s=2.0, think_s=0.4, ramp_s=0.2, timeout_s=60, seed=1, pages=[""])
    raw = run_coroutine(load.concurrent_students(app_server.url, cfg, app_server.memory))
    assert raw["student_errors"] == []
    assert raw["records"], "the students ran the app"
    assert [r.errors for r in raw["records"]] == [[] for _ in raw["records"]]
    assert any(r.kind == "widget" for r in raw["records"])
    assert raw["memory"] and raw["memory"][0]["rss_mb"] > 0
    summary = report.load_summary({**raw, "records": [r.__dict__ for r in raw["records"]]})
    assert summary["errors"] == 0 and summary["runs"] == len(raw["records"])


# --- every widget kind, forms, navigation, reconnect ---------------------------------------------------

def _echo(tab: StreamlitTab) -> dict:
    return json.loads(next(p.code_text for kind, p in tab.elements if kind == "code"))


def _expected(widget, state) -> object:
    """What the script should see for the WidgetState the generator sent."""
    field = state.WhichOneof("value")
    if field == "double_array_value":
        values = list(state.double_array_value.data)
        return values if len(values) > 1 else (int(values[0]) if widget.proto.data_type == 0 else values[0])
    if field == "string_array_value":
        values = list(state.string_array_value.data)
        if widget.kind == "multiselect":
            return values
        return values[0] if values else None
    if field == "double_value":
        return int(state.double_value) if widget.proto.data_type == 0 else state.double_value
    return getattr(state, field)


async def _drive_fixture(url: str) -> dict:
    tab = StreamlitTab(url, timeout=60)
    await tab.connect()
    rng = random.Random(7)
    out = {"runs": [], "checked": {}, "mismatch": {}}
    try:
        out["runs"].append(await tab.open_page(""))
        out["kinds"] = sorted({w.kind for w in tab.drivable_widgets()})
        for key in ["t_d", "t_range", "t_ss", "t_n", "t_sel", "t_r", "t_c", "t_tg", "t_txt", "t_m", "t_pl", "t_b", "go"]:
            widget = next(w for w in tab.drivable_widgets() if w.user_key == key or (key == "go" and w.is_form_submitter))
            clicks_before = _echo(tab)["clicks"]
            out["runs"].append(await tab.change_widget(widget, rng))
            echo = _echo(tab)
            if key == "t_b":
                out["checked"][key] = echo["clicks"] == clicks_before + 1
                continue
            if key == "go":
                widget = next(w for w in tab.widgets if w.user_key == "t_fs")
            want = _expected(widget, tab.states[widget.id])
            out["checked"][widget.user_key] = echo[widget.user_key] == want
            if echo[widget.user_key] != want:
                out["mismatch"][widget.user_key] = (echo[widget.user_key], want)
        session = tab.session_id
        out["runs"].append(await tab.navigate("other"))
        out["other_keys"] = sorted(w.user_key for w in tab.widgets)
        out["same_session_after_navigate"] = tab.session_id == session
        out["runs"].append(await tab.change_random_widget(rng))
        await tab.reconnect()
        out["runs"].append(await tab.rerun())
        out["resumed"] = tab.session_id == session
        out["runs"].append(await tab.navigate(""))
        out["back_on_lesson"] = "t_d" in {w.user_key for w in tab.widgets}
    finally:
        await tab.close()
    return out


async def _drive_fragment(url: str) -> dict:
    tab = StreamlitTab(url, timeout=60)
    await tab.connect()
    try:
        opened = await tab.open_page("")
        inside = next(w for w in tab.widgets if w.user_key == "t_fr")
        outside = next(w for w in tab.widgets if w.user_key == "t_d")
        before = json.loads(next(p.body for kind, p in tab.elements if kind == "text"))
        run = await tab.change_widget(inside, random.Random(3))
        after = json.loads(next(p.body for kind, p in tab.elements if kind == "text"))
        return {"errors": opened.errors + run.errors, "fragment": run.fragment, "inside_id": inside.fragment_id,
                "outside_id": outside.fragment_id, "before": before, "after": after,
                "sent": int(tab.states[inside.id].double_array_value.data[0]),
                "still_there": {"t_d", "t_fr"} <= {w.user_key for w in tab.widgets}, "echo": _echo(tab)}
    finally:
        await tab.close()


def test_a_widget_inside_a_fragment_reruns_only_the_fragment(fixture_server):
    out = run_coroutine(_drive_fragment(fixture_server.url))
    assert out["errors"] == []
    assert out["inside_id"] and not out["outside_id"], "the fragment id comes from the widget's delta"
    assert out["fragment"] is True
    assert out["after"]["t_fr"] == out["sent"] != out["before"]["t_fr"]
    assert out["after"]["full_runs"] == out["before"]["full_runs"], "the page itself did not run again"
    assert out["still_there"] and out["echo"]["t_d"] == 8, "the page's own elements stay on screen"


async def _drive_preset(url: str) -> dict:
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    tab = StreamlitTab(url, timeout=60)
    await tab.connect()
    try:
        runs = [await tab.open_page("preset")]
        start = _echo(tab)
        by_key = {w.user_key: w for w in tab.widgets}
        tab.states[by_key["p_a"].id] = WidgetState(id=by_key["p_a"].id, double_array_value={"data": [7.0]})
        runs.append(await tab._run("widget", widget="p_a"))
        after_a = _echo(tab)
        sel = next(w for w in tab.widgets if w.user_key == "p_sel")
        sent_for_sel = tab.states[sel.id]
        tab.states[by_key["p_b"].id] = WidgetState(id=by_key["p_b"].id, double_array_value={"data": [3.0]})
        runs.append(await tab._run("widget", widget="p_b"))
        return {"errors": [r.errors for r in runs], "start": start, "after_a": after_a, "after_b": _echo(tab),
                "sel_value_field": sent_for_sel.WhichOneof("value")}
    finally:
        await tab.close()


def test_a_selectbox_a_callback_cleared_is_reported_as_none(fixture_server):
    """/qkv's pattern: a slider's callback sets the preset selectbox to None. The browser then reports the
    selectbox with no value; reporting its old option would reload the preset and undo the slider."""
    out = run_coroutine(_drive_preset(fixture_server.url))
    assert out["errors"] == [[], [], []]
    assert out["start"] == {"p_sel": "low", "p_a": 1, "p_b": 5}
    assert out["after_a"] == {"p_sel": None, "p_a": 7, "p_b": 5}
    assert out["sel_value_field"] is None, "the tab sends the cleared selectbox without a value, as the frontend"
    assert out["after_b"] == {"p_sel": None, "p_a": 7, "p_b": 3}, "the second change kept the first"


def test_cleared_widgets_initial_state_has_no_value():
    from streamlit.proto.NumberInput_pb2 import NumberInput
    from streamlit.proto.Selectbox_pb2 import Selectbox
    from streamlit.proto.TextInput_pb2 import TextInput

    from bench.widgets import Widget

    cleared = Selectbox(id="$$ID-x-sel", options=["a", "b"], set_value=True)  # no raw_value, no default
    assert Widget("selectbox", cleared).initial_state().WhichOneof("value") is None
    assert Widget("selectbox", Selectbox(id="s", options=["a", "b"], default=1)).initial_state().string_value == "b"
    assert Widget("selectbox", Selectbox(id="s", options=["a", "b"])).initial_state() is None
    assert Widget("number_input", NumberInput(id="n", set_value=True)).initial_state().WhichOneof("value") is None
    assert Widget("text_input", TextInput(id="t", set_value=True)).initial_state().WhichOneof("value") is None
    assert Widget("text_input", TextInput(id="t", set_value=True, value="x")).initial_state().string_value == "x"


def test_every_widget_kind_reaches_the_script_with_the_value_sent(fixture_server):
    out = run_coroutine(_drive_fixture(fixture_server.url))
    assert [r.errors for r in out["runs"]] == [[] for _ in out["runs"]]
    assert set(out["kinds"]) >= {"slider", "number_input", "selectbox", "radio", "checkbox", "text_input",
                                 "multiselect", "button_group", "button"}
    assert out["mismatch"] == {}
    assert all(out["checked"].values()) and len(out["checked"]) == 13
    assert out["other_keys"] == ["o_s"] and out["same_session_after_navigate"]
    assert out["resumed"] and out["back_on_lesson"]


# --- the pure parts -----------------------------------------------------------------------------------

async def _press_the_long_action(url: str) -> list[list[str]]:
    tab = StreamlitTab(url, timeout=60)
    await tab.connect()
    try:
        await tab.open_page("slow")
        button = next(w for w in tab.drivable_widgets() if w.user_key == "w_b")
        tab.timeout, tab.long_actions, tab.long_timeout = 1.0, frozenset({"w_b"}), 60.0
        held = await tab.change_widget(button, random.Random(0))  # a long action: held to long_timeout
        tab.long_actions = frozenset()
        cut = await tab.change_widget(button, random.Random(0))  # the same press, held to the 1 s of the others
    finally:
        await tab.close()
    return [held.errors, cut.errors]


def test_a_long_action_is_held_to_its_own_timeout(fixture_server):
    held, cut = run_coroutine(_press_the_long_action(fixture_server.url))
    assert held == [] and cut == ["timeout"]


def test_a_student_busy_in_a_long_action_past_its_reconnect_still_reconnects(fixture_server):
    cfg = load.LoadConfig(students=1, duration_s=1.0, think_s=0.1, ramp_s=0.0, timeout_s=60, seed=1, pages=["slow"],
                          long_actions=("w_b",), reconnect_after_s=0.5)
    out = run_coroutine(load.concurrent_students(fixture_server.url, cfg))
    [student] = out["sessions"]
    assert any(r.widget == "w_b" for r in out["records"])  # the 3-s press ran over the reconnect's time to the end
    assert student["resumed"] is True and len(student["session_ids"]) == 2 and not out["student_errors"]


def test_percentile_interpolates_between_ranks():
    assert stats.percentile([1, 2, 3, 4], 50) == 2.5
    assert stats.percentile([5.0], 95) == 5.0 and stats.percentile([], 95) is None
    assert stats.percentile(list(range(101)), 95) == 95
    values = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]
    for q in (5, 50, 95, 99):  # numpy's default method is the same linear interpolation between ranks
        assert stats.percentile(values, q) == pytest.approx(np.percentile(values, q))


def test_the_launcher_replaces_python_m_streamlit_and_keeps_the_options():
    default = StreamlitServer("app.py", port=1234, options={"server.fileWatcherType": "none"}).command()
    assert default[1:5] == ["-m", "streamlit", "run", "app.py"]
    assert default[-2:] == ["--server.fileWatcherType", "none"] and "1234" in default
    wrapped = StreamlitServer("app.py", port=1234, launcher=("python3", "-c", "code")).command()
    assert wrapped[:5] == ["python3", "-c", "code", "run", "app.py"]


# --- the miss and guided phases against the fixture app (no timing asserted) ------------------------------------

def test_the_miss_phase_drives_every_widget_to_new_values(fixture_server):
    from bench import miss

    lanes = [miss.Lane("off", fixture_server.url, lambda: fixture_server.memory().get("cpu_s")),
             miss.Lane("on", fixture_server.url, lambda: fixture_server.memory().get("cpu_s"))]
    out = run_coroutine(miss.miss_passes(lanes, [""], per_widget=2, seed=3, timeout=60))
    off = out["off"]["records"]
    assert off and [r["errors"] for r in off] == [[] for _ in off]
    counts = {}
    for r in off:
        counts[r["widget"]] = counts.get(r["widget"], 0) + 1
    assert {"t_d", "t_range", "t_ss", "t_n", "t_sel", "t_r", "t_c", "t_tg", "t_txt", "t_m", "t_pl", "t_b", "t_fr"} <= set(counts)
    assert counts["t_c"] == 1 and counts["t_d"] == 2, "a checkbox has one unseen value; a slider many"
    assert all(r["cpu_ms"] is not None for r in off)
    assert any(r["fragment"] for r in off if r["widget"] == "t_fr")
    assert len(out["on"]["records"]) == len(off), "the same changes went to the second lane"
    assert out["off"]["pages"]["/"]["sidebar_skipped"] == []


def test_the_guided_class_follows_the_steps_and_skips_what_is_missing(fixture_server):
    from bench import guided

    steps = {"": [guided.Step("t_d", 10), guided.Step("nope", 1), guided.Step("t_sel", "z"),
                  guided.Step("t_c", True), guided.Step("t_b", click=True), guided.Step("t_d", "x")],
             "other": [guided.Step("o_s", 3)], "gone": [guided.Step("g", 1)]}
    raw = run_coroutine(guided.guided_class(fixture_server.url, ["", "other"], steps, students=2,
                                            pause_s=(0.0, 0.05), stagger_s=0.1, seed=1, timeout_s=60))
    recs = raw["records"]
    assert [r["errors"] for r in recs] == [[] for _ in recs]
    assert sorted(r["widget"] for r in recs if r["kind"] == "step" and r["student"] == 0) == \
        sorted(["t_d", "t_sel", "t_c", "t_b", "o_s"])
    assert [r["kind"] for r in recs if r["student"] == 1 and r["kind"] != "step"] == ["open", "navigate"]
    why = {(s["widget"], s["why"].split(":")[0]) for s in raw["skipped"]}
    assert ("nope", "not on screen") in why and any(w == "t_d" for w, _ in why), raw["skipped"]
    assert raw["steps_for_missing_pages"] == ["/gone"]
