"""Server CPU of one widget change to a value never used before, on /self-attention.

    .venv/bin/python -m bench.bench_self_attention            # medians per widget
    .venv/bin/python -m bench.bench_self_attention --repeats 5 --profile sa_token

Runs the page in-process with AppTest (the same script a server runs), changes each widget to a fresh value so
every change is a cache miss (a preset change after clearing st.cache_data), and prints per widget the median CPU
of the script thread (time.thread_time around ScriptRunner._run_script: the server's cost of a full rerun, without
AppTest's own parsing; scripts compiled once, as a server does) and, for a widget inside a fragment, the CPU of that fragment's call (what a server reruns
for it; AppTest always reruns the whole script). ``--profile WIDGET`` prints a cProfile of the script thread for
that widget's changes. Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time

import streamlit as st
from streamlit.runtime.scriptrunner import script_cache, script_runner

import ui.self_attention_sections as sections
from bench.timing import SENTENCES
from tests.apptest_utils import run_page

CUTOFFS = [0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85]
LAST = {"script": 0.0, "hand_section": 0.0, "glove_section": 0.0}
PROFILE = {"widget": None, "on": False, "stats": None}
_run_script = script_runner.ScriptRunner._run_script
_get_bytecode = script_cache.ScriptCache.get_bytecode
_BYTECODE: dict = {}


def _shared_bytecode(self, script_path):  # a server compiles each script once; AppTest makes a new cache per run
    if script_path not in _BYTECODE:
        _BYTECODE[script_path] = _get_bytecode(self, script_path)
    return _BYTECODE[script_path]


def _timed_run_script(self, rerun_data):
    profiler = cProfile.Profile() if PROFILE["on"] else None
    start = time.thread_time()
    if profiler:
        profiler.enable()
    try:
        return _run_script(self, rerun_data)
    finally:
        LAST["script"] = 1000 * (time.thread_time() - start)
        if profiler:
            profiler.disable()
            PROFILE["stats"] = profiler if PROFILE["stats"] is None else PROFILE["stats"]
            if PROFILE["stats"] is not profiler:
                PROFILE["stats"].stats = pstats.Stats(PROFILE["stats"]).add(profiler).stats  # type: ignore[attr-defined]


def _timed(name: str):
    section = getattr(sections, name)

    def call(*args, **kwargs):
        start = time.thread_time()
        try:
            return section(*args, **kwargs)
        finally:
            LAST[name] = 1000 * (time.thread_time() - start)
    return call


def _cpu(widget: str, action, fragment: str | None = None) -> tuple[float, float]:
    PROFILE["on"] = widget == PROFILE["widget"]
    action()
    PROFILE["on"] = False
    return LAST["script"], LAST[fragment] if fragment else LAST["script"]


def one_round(r: int) -> dict[str, tuple[float, float]]:
    at = run_page("lessons/self_attention.py")
    out = {}
    out["sa_token"] = _cpu("sa_token", lambda: at.selectbox(key="sa_token").set_value((3 + 5 * r) % 14).run(),
                           "hand_section")
    out["sa_cutoff"] = _cpu("sa_cutoff", lambda: at.slider(key="sa_cutoff").set_value(CUTOFFS[r % len(CUTOFFS)]).run())
    st.cache_data.clear()
    at.run()
    st.cache_data.clear()
    out["sa_preset"] = _cpu("sa_preset", lambda: at.selectbox(key="sa_preset").set_value(["animal", "hanako"][r % 2]).run())
    at.radio(key="sa_predict").set_value(3).run()
    out["sa_text"] = _cpu("sa_text", lambda: at.text_input(key="sa_text").input(SENTENCES[r % len(SENTENCES)]).run(),
                          "glove_section")
    at.toggle(key="sa_random").set_value(True).run()
    out["sa_seed"] = _cpu("sa_seed", lambda: at.number_input(key="sa_seed").set_value(7000 + r).run(), "glove_section")
    out["rerun (hits)"] = _cpu("rerun", at.run)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_self_attention", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--profile", default=None, help="a widget key (sa_token, ...) to profile")
    args = ap.parse_args(argv)
    PROFILE["widget"] = args.profile
    script_runner.ScriptRunner._run_script = _timed_run_script
    script_cache.ScriptCache.get_bytecode = _shared_bytecode
    for name in ("hand_section", "glove_section"):
        setattr(sections, name, _timed(name))
    run_page("lessons/self_attention.py").radio(key="sa_predict").set_value(3).run()  # GloVe and imports, once
    rounds = [one_round(r) for r in range(args.repeats)]
    print("widget            full rerun (script thread CPU)      the widget's fragment alone")
    for widget in rounds[0]:
        full = [x[widget][0] for x in rounds]
        part = [x[widget][1] for x in rounds]
        frag = f"median {statistics.median(part):6.1f} ms" if part != full else "(not in a fragment)"
        print(f"{widget:14s}  median {statistics.median(full):6.1f} ms (min {min(full):5.1f}, max {max(full):5.1f})   {frag}")
    if PROFILE["stats"] is not None:
        pstats.Stats(PROFILE["stats"]).sort_stats("cumulative").print_stats(40)


if __name__ == "__main__":
    main()
