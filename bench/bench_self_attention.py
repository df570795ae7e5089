"""Server CPU (time.process_time) of one widget change to a value never used before, on /self-attention.

    .venv/bin/python -m bench.bench_self_attention            # medians per widget
    .venv/bin/python -m bench.bench_self_attention --repeats 5

Runs the page in-process with AppTest (the same script a server runs; AppTest reruns the whole script, so a
section in a fragment is measured at the cost of a full rerun: an upper bound), changes each widget to a fresh
value so every change is a cache miss (a preset change after clearing st.cache_data), and prints the median CPU
per widget. Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import streamlit as st

from tests.apptest_utils import run_page

SENTENCES = [
    "the dog did not jump over the fence because it was too tired",
    "the bird didn't leave the nest because it was too cold",
    "a cat sat on the mat because it was warm",
    "the horse wouldn't cross the river because it was too deep",
    "the child didn't eat the soup because it was too hot",
    "the car didn't fit in the garage because it was too big",
    "my friend didn't answer the phone because it was too late",
]
CUTOFFS = [0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85]


def _cpu(action) -> float:
    start = time.process_time()
    action()
    return 1000 * (time.process_time() - start)


def one_round(r: int) -> dict[str, float]:
    at = run_page("lessons/self_attention.py")
    out = {}
    out["sa_token"] = _cpu(lambda: at.selectbox(key="sa_token").set_value((3 + 5 * r) % 14).run())
    out["sa_cutoff"] = _cpu(lambda: at.slider(key="sa_cutoff").set_value(CUTOFFS[r % len(CUTOFFS)]).run())
    st.cache_data.clear()
    at.run()
    st.cache_data.clear()
    out["sa_preset"] = _cpu(lambda: at.selectbox(key="sa_preset").set_value(["animal", "hanako"][r % 2]).run())
    at.radio(key="sa_predict").set_value(3).run()
    out["sa_text"] = _cpu(lambda: at.text_input(key="sa_text").input(SENTENCES[r % len(SENTENCES)]).run())
    at.toggle(key="sa_random").set_value(True).run()
    out["sa_seed"] = _cpu(lambda: at.number_input(key="sa_seed").set_value(7000 + r).run())
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_self_attention", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    run_page("lessons/self_attention.py").radio(key="sa_predict").set_value(3).run()  # GloVe and imports, once
    rounds = [one_round(r) for r in range(args.repeats)]
    for widget in rounds[0]:
        values = [x[widget] for x in rounds]
        print(f"/self-attention {widget:10s} median {statistics.median(values):7.1f} ms CPU "
              f"(min {min(values):.1f}, max {max(values):.1f}, n={len(values)})")


if __name__ == "__main__":
    main()
