"""The harness logic that needs no server: unseen values (miss phase), guided steps, the HAProxy config and the
replica check, and how the harness's modules depend on each other. No timing is asserted here."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from streamlit.proto.ButtonGroup_pb2 import ButtonGroup
from streamlit.proto.Checkbox_pb2 import Checkbox
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Radio_pb2 import Radio
from streamlit.proto.Selectbox_pb2 import Selectbox
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.TextInput_pb2 import TextInput

from bench import balancers, guided, miss, miss_report, replicas
from bench.widgets import Widget

ROOT = Path(__file__).resolve().parent.parent


def _drain(widget: Widget, page: str = "/p", rounds: int = 100) -> list:
    """Ask for unseen values until there are none left (or `rounds`), as the miss phase does."""
    seen = miss.Seen()
    current = widget.initial_state()
    seen.add(page, "w", current)
    rng = random.Random(0)
    values = []
    for _ in range(rounds):
        state = miss.unseen_state(widget, current, seen.of(page, "w"), rng)
        if state is None:
            break
        values.append(miss.value_key(state))
        seen.add(page, "w", state)
        current = state
    return values


def test_an_int_slider_gets_every_grid_point_once_then_none():
    w = Widget("slider", Slider(id="s", min=0, max=4, step=1, default=[2], data_type=Slider.INT))
    values = _drain(w)
    assert sorted(v[1][0] for v in values) == [0.0, 1.0, 3.0, 4.0], "each unused grid point once, never the default"


def test_a_float_slider_stays_on_its_grid():
    w = Widget("slider", Slider(id="s", min=0.1, max=2.0, step=0.05, default=[0.9], data_type=Slider.FLOAT))
    values = [v[1][0] for v in _drain(w, rounds=20)]
    assert len(set(values)) == 20 and 0.9 not in values
    assert all(0.1 - 1e-9 <= v <= 2.0 + 1e-9 and abs((v - 0.1) / 0.05 - round((v - 0.1) / 0.05)) < 1e-6 for v in values)


def test_a_select_slider_walks_its_options():
    w = Widget("slider", Slider(id="s", options=["4", "8", "16", "32"], default=[0], min=0, max=3, step=1))
    values = _drain(w)
    assert sorted(v[1][0] for v in values) == ["16", "32", "8"]


def test_seeds_are_new_and_in_range():
    w = Widget("number_input", NumberInput(id="n", min=0, max=2**31 - 1, has_min=True, has_max=True, step=1,
                                           default=0, data_type=NumberInput.INT))
    values = [v[1] for v in _drain(w, rounds=50)]
    assert len(set(values)) == 50 and 0 not in values
    assert all(v == int(v) and 0 <= v <= miss.SEED_SPAN for v in values)


def test_choices_checkbox_and_pills_run_out():
    sel = Widget("selectbox", Selectbox(id="c", options=["a", "b", "c"], default=0))
    assert sorted(v[1] for v in _drain(sel)) == ["b", "c"]
    radio = Widget("radio", Radio(id="r", options=["x", "y"]))  # no default: nothing seen at first
    assert sorted(v[1] for v in _drain(radio)) == ["x", "y"]
    box = Widget("checkbox", Checkbox(id="b", default=False))
    assert _drain(box) == [("bool_value", True)]
    pills = Widget("button_group", ButtonGroup(id="g", options=[ButtonGroup.Option(content=c) for c in "0123"],
                                               default=[0], click_mode=ButtonGroup.SINGLE_SELECT))
    assert sorted(v[1] for v in _drain(pills)) == [("1",), ("2",), ("3",)]


def test_a_sentence_is_reordered_or_shortened_never_repeated():
    text = "the animal did not cross the street because it was too tired"
    w = Widget("text_input", TextInput(id="t", default=text))
    values = [v[1] for v in _drain(w, rounds=30)]
    assert len(set(values)) == 30 and text not in values
    words = sorted(text.split())
    for v in values:
        got = sorted(v.split())
        assert got == words or (len(got) == len(words) - 1 and all(got.count(x) <= words.count(x) for x in got))


def test_a_button_is_always_a_new_press():
    from streamlit.proto.Button_pb2 import Button

    w = Widget("button", Button(id="b"))
    assert miss.unseen_state(w, None, set(), random.Random(0)).trigger_value is True


def test_widget_values_do_not_depend_on_other_widgets():
    a = miss.widget_rng(0, "/glove", "glove_seed").random()
    assert a == miss.widget_rng(0, "/glove", "glove_seed").random() != miss.widget_rng(0, "/glove", "glove_dk").random()


def _rec(page, widget, latency, cpu, errors=()):
    return {"page": page, "widget": widget, "kind": "slider", "latency_ms": latency, "cpu_ms": cpu, "bytes": 100,
            "errors": list(errors), "fragment": False, "presenter": False}


def test_presenter_ratio_compares_the_same_changes_only():
    off = [_rec("/a", "x", 100, 50), _rec("/a", "x", 100, 50), _rec("/a", "y", 100, 50), _rec("/b", "t", 900, 900)]
    on = [_rec("/a", "x", 110, 60), _rec("/a", "x", 130, 60), _rec("/a", "z", 500, 500), _rec("/b", "t", 2000, 2000)]
    r = miss_report.presenter_ratios(off, on, long_actions=("t",))
    assert r["presenter_pairs"] == 2
    assert r["presenter_cpu_ratio"] == 1.2 and r["presenter_p50_ratio"] == 1.2
    assert r["only_presenter_off"] == ["/a y"] and r["only_presenter_on"] == ["/a z"]
    summary = miss_report.miss_summary({"records": off, "pages": {}}, {"records": on, "pages": {}}, ("t",))
    assert summary["overall"]["off"]["n"] == 3 and summary["overall"]["off_long"]["n"] == 1
    checks = {c["target"]: c["ok"] for c in miss_report.check(summary, 150, 1.2, 2000)}
    assert checks["presenter mode: server CPU per miss <= 1.2x off"] is True
    assert "\n".join(miss_report.markdown(summary)).count("| /a |") == 3


# --- guided class ---------------------------------------------------------------------------------

def test_the_guided_file_parses_and_names_widgets_by_key():
    steps = guided.load_steps()
    assert {"scaling", "causal", "qkv", "rnn", "self-attention", "glove"} <= set(steps)
    for page, page_steps in steps.items():
        assert page_steps, page
        for s in page_steps:
            assert s.widget and s.widget == s.widget.strip() and " " not in s.widget, (page, s)
            assert s.click or s.value is not None


def test_a_guided_file_without_value_or_click_is_rejected(tmp_path):
    bad = tmp_path / "g.toml"
    bad.write_text('[pages.scaling]\nsteps = [{widget = "scaling_d"}]\n')
    with pytest.raises(ValueError, match="scaling_d"):
        guided.load_steps(bad)
    home = tmp_path / "h.toml"
    home.write_text('[pages.home]\nsteps = [{widget = "home_seed", value = 3}]\n')
    assert list(guided.load_steps(home)) == [""]


def test_guided_values_become_the_browsers_widget_states():
    d = Widget("slider", Slider(id="d", options=["4", "8", "1024"], default=[0], min=0, max=2, step=1))
    assert list(guided.state_for(d, guided.Step("d", 1024)).string_array_value.data) == ["1024"]
    tau = Widget("slider", Slider(id="t", options=["0.05", "1.0", "20.0"], default=[1], min=0, max=2, step=1))
    assert list(guided.state_for(tau, guided.Step("t", 20)).string_array_value.data) == ["20.0"]
    radius = Widget("slider", Slider(id="r", min=0.1, max=2.0, step=0.05, default=[0.9], data_type=Slider.FLOAT))
    assert list(guided.state_for(radius, guided.Step("r", 2.0)).double_array_value.data) == [2.0]
    with pytest.raises(ValueError):
        guided.state_for(radius, guided.Step("r", 3.0))
    tokens = Widget("selectbox", Selectbox(id="s", options=["猫 (1)", "が (2)", "それ (9)"], default=0))
    assert guided.state_for(tokens, guided.Step("s", "それ")).string_value == "それ (9)"
    quiz = Widget("radio", Radio(id="q", options=["Only to itself: 100 %", "To every token equally"]))
    assert guided.state_for(quiz, guided.Step("q", "only to itself")).string_value == "Only to itself: 100 %"
    with pytest.raises(ValueError):
        guided.state_for(quiz, guided.Step("q", "nowhere"))
    step = Widget("button_group", ButtonGroup(id="g", options=[ButtonGroup.Option(content=c) for c in "0123"]))
    assert list(guided.state_for(step, guided.Step("g", "3")).string_array_value.data) == ["3"]
    box = Widget("checkbox", Checkbox(id="c", default=True))
    assert guided.state_for(box, guided.Step("c", False)).bool_value is False
    with pytest.raises(ValueError):
        guided.state_for(box, guided.Step("c", "no"))


def test_guided_summary_keeps_long_actions_and_skips_apart():
    def rec(kind, widget, ms):
        return {"t": 0, "student": 0, "kind": kind, "page": "/glove", "widget": widget, "latency_ms": ms,
                "bytes": 10, "errors": [], "fragment": False, "error_alerts": 0}
    raw = {"config": {"students": 2, "pause_s": [3, 8], "stagger_s": 2, "seed": 0}, "wall_s": 10.0,
           "records": [rec("navigate", "", 300), rec("step", "glove_dk", 40), rec("step", "glove_train", 1800)],
           "skipped": [{"student": 0, "page": "/glove", "widget": "gone", "why": "not on screen"}] * 2,
           "pages_without_steps": ["/"], "steps_for_missing_pages": [], "memory": []}
    s = guided.guided_summary(raw, ("glove_train",))
    assert s["steps"]["n"] == 1 and s["long_steps"]["n"] == 1 and s["navigations"]["n"] == 1
    assert s["skipped"] == [{"page": "/glove", "widget": "gone", "why": "not on screen", "students": 2}]
    assert guided.check(s, 150)[0]["ok"] is True
    assert "gone x2" in "\n".join(guided.markdown(s))


def test_the_load_summary_keeps_long_actions_apart_and_reads_private_memory():
    from bench import report

    def rec(kind, widget, ms):
        return {"t": 0, "student": 0, "kind": kind, "page": "/gpt", "widget": widget, "latency_ms": ms,
                "bytes": 10, "errors": [], "fragment": False, "error_alerts": 0}
    records = [rec("open", "", 900)] + [rec("widget", "gpt_seed", ms) for ms in (10, 20, 30)] + \
        [rec("widget", "gpt_generate", 2500)]
    raw = {"config": {"students": 1, "duration_s": 1, "think_s": 1, "ramp_s": 0}, "records": records,
           "student_errors": [], "long_actions": ["gpt_generate"],
           "memory": [{"t": 0, "rss_mb": 1500.0, "private_mb": 400.0}, {"t": 1, "rss_mb": 1510.0, "private_mb": 420.0}]}
    s = report.load_summary(raw)
    assert s["interactions"]["n"] == 4 and s["interactions_short"]["n"] == 3 and s["interactions_long"]["n"] == 1
    assert s["interactions_short"]["max_ms"] == 30 and s["interactions_long"]["max_ms"] == 2500
    assert s["rss_max_mb"] == 1510.0 and s["private_max_mb"] == 420.0
    assert s["by_widget"]["/gpt gpt_seed"]["n"] == 3 and s["by_widget"]["/gpt gpt_seed"]["max_ms"] == 30
    assert s["by_widget"]["/gpt gpt_generate"]["n"] == 1 and "/gpt open" not in s["by_widget"]  # (opens apart)
    slowest = [line for line in report.per_page_lines(s) if line.startswith("| /gpt ")]
    assert slowest[0].startswith("| /gpt | 4 |") and slowest[1].startswith("| /gpt gpt_generate | 1 |")
    meta = {"started": "now", "command": "python -m bench", "cpus": 2, "loadavg": "0", "python": "3.11",
            "streamlit": "1.67.0", "commit": "abc"}
    text = report.markdown({"meta": meta, "concurrent": s})
    assert "private (RssAnon) at most 420 MB" in text
    assert "Without the long actions (gpt_generate: 1 runs" in text and "3 runs" in text


# --- HAProxy and the replica check ------------------------------------------------------------------

def test_haproxy_config_is_the_deploy_file_on_loopback():
    template = balancers.HAPROXY_TEMPLATE.read_text()
    conf = balancers.haproxy_config(template, ["127.0.0.1:1001", "127.0.0.1:1002"], 8080)
    assert "server app-1 127.0.0.1:1001 cookie app-1" in conf and "server app-2 127.0.0.1:1002 cookie app-2" in conf
    assert "app-1:8501" not in conf and "bind 127.0.0.1:8080" in conf and balancers.HAPROXY_UPSTREAM_HEADER in conf
    assert "balance leastconn" in conf and "cookie SERVERID insert indirect nocache" in conf
    assert "timeout tunnel" in conf
    plain = balancers.haproxy_config(template, ["127.0.0.1:1001", "127.0.0.1:1002"], 8080, sticky=False)
    assert "cookie SERVERID" not in plain and "balance leastconn" in plain


@pytest.mark.skipif(not (shutil.which("haproxy") or Path("/usr/sbin/haproxy").exists()), reason="no haproxy")
def test_haproxy_accepts_the_config(tmp_path):
    binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
    for sticky in (True, False):
        conf = tmp_path / f"h{sticky}.cfg"
        conf.write_text(balancers.haproxy_config(balancers.HAPROXY_TEMPLATE.read_text(),
                                                 ["127.0.0.1:1001", "127.0.0.1:1002"], 8080, sticky))
        check = subprocess.run([binary, "-c", "-f", str(conf)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr


def test_haproxy_log_lines_give_servers_and_cookie_flags():
    lines = [
        '127.0.0.1:5001 [30/Nov/2026:22:30:01.123] www streamlit/app-1 0/0/0/2/2 200 1234 - - --NI 1/1/0/0/0 0/0 '
        '"GET /rnn HTTP/1.1"',
        '127.0.0.1:5002 [30/Nov/2026:22:30:01.456] www streamlit/app-1 0/0/0/1/40000 101 300 - - --VN 2/2/1/1/0 0/0 '
        '"GET /_stcore/stream HTTP/1.1"',
        "not a log line",
    ]
    s = balancers.haproxy_log_summary(lines)
    assert s == {"requests_per_server": {"app-1": 2}, "request_cookie": {"N": 1, "V": 1},
                 "response_cookie": {"I": 1, "N": 1}}


def _session(i, http, ws, resumed=True, same_session=True):
    return {"student": i, "http_upstream": http, "ws_upstreams": ws, "session_ids": ["a", "a" if same_session else "b"],
            "resumed": resumed}


def _res(sessions, errors=0):
    return {"stickiness": replicas.stickiness({"sessions": sessions}), "through_balancer": {"errors": errors},
            "balancer_log": {"request_cookie": {"N": 40, "V": 80}}, "meta": {"server_tracebacks": 0}}


def test_the_replica_check_passes_only_when_every_session_stays_and_the_split_is_even():
    good = [_session(i, f"r{i % 2}", [f"r{i % 2}", f"r{i % 2}"]) for i in range(40)]
    assert all(replicas.verdict(_res(good), 40).values())
    moved = good[:-1] + [_session(39, "r1", ["r1", "r0"], resumed=False)]
    checks = replicas.verdict(_res(moved), 40)
    assert not checks["every student stayed on one replica"] and not checks["every student reconnected once and resumed its session"]
    uneven = [_session(i, "r0" if i < 28 else "r1", ["r0" if i < 28 else "r1"] * 2) for i in range(40)]
    assert replicas.verdict(_res(uneven), 40)["new sessions split no worse than 45/55"] is False
    assert replicas.verdict(_res(good, errors=1), 40)["no errors"] is False
    by_chance = {**_res(good), "balancer_log": {"request_cookie": {"-": 120}}}  # no cookie: leastconn alone
    assert not replicas.verdict(by_chance, 40)["the cookie chose the replica for every websocket and reconnect "
                                                "(HAProxy log: flag V)"]


@pytest.mark.skipif(not (shutil.which("haproxy") or Path("/usr/sbin/haproxy").exists()), reason="no haproxy")
def test_the_kubernetes_haproxy_config_is_valid_and_matches_the_deploy_file(tmp_path):
    text = (ROOT / "deploy" / "k8s.yaml").read_text()
    start = text.index("  haproxy.cfg: |\n") + len("  haproxy.cfg: |\n")
    block = text[start:text.index("\n---", start)]
    cfg = "\n".join(line[4:] for line in block.splitlines()) + "\n"
    for line in ("balance leastconn", "cookie SERVERID insert indirect nocache", "timeout tunnel 8h",
                 "option httpchk GET /_stcore/health"):
        assert line in cfg and line in balancers.HAPROXY_TEMPLATE.read_text(), line
    conf = tmp_path / "k8s-haproxy.cfg"
    conf.write_text(cfg)
    binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
    check = subprocess.run([binary, "-c", "-f", str(conf)], capture_output=True, text=True,
                           env={"LB_COOKIE_KEY": "test", "PATH": "/usr/bin:/bin"})
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_benchmarks_run_the_server_as_the_dockerfile_does():
    """bench/ measures the production configuration: every option and variable it adds is in the Dockerfile too."""
    from bench.server import PRODUCTION_ENV, PRODUCTION_OPTIONS, ROOT

    dockerfile = (ROOT / "Dockerfile").read_text()
    for name, value in PRODUCTION_ENV.items():
        assert f"{name}={value}" in dockerfile
    for key, value in PRODUCTION_OPTIONS.items():
        section, option = key.split(".")
        snake = "".join("_" + c if c.isupper() else c.upper() for c in option)
        assert f"STREAMLIT_{section.upper()}_{snake}={value}" in dockerfile


def test_the_phase_reports_do_not_import_the_run_report():
    """report -> guided, miss_report -> stats, never back: the import graph of bench/ has no circle."""
    import ast

    def imports(module: str) -> set[str]:
        tree = ast.parse((ROOT / "bench" / f"{module}.py").read_text())
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bench"):
                found |= {f"{node.module}.{a.name}" if node.module == "bench" else node.module for a in node.names}
        return found

    assert imports("stats") == set()
    for module in ("guided", "miss_report", "miss", "load", "protocol", "widgets"):
        assert "bench.report" not in imports(module), module
    assert {"bench.guided", "bench.miss_report"} <= imports("report")


def test_wait_until_idle_waits_for_a_quiet_window_and_gives_up_at_the_limit():
    from bench.server import wait_until_idle

    busy_until = 2.0  # the fake process uses a whole core for 2 s, then nothing
    clock = {"t": 0.0}

    def read_cpu(pid):
        return min(clock["t"], busy_until)

    def sleep(seconds):
        clock["t"] += seconds

    waited = wait_until_idle([1], quiet_s=1.0, read_cpu=read_cpu, sleep=sleep)
    assert busy_until + 1.0 <= waited <= busy_until + 1.5
    clock["t"] = 0.0
    assert wait_until_idle([1], limit_s=1.0, read_cpu=lambda pid: clock["t"], sleep=sleep) == 1.0  # never idle
