"""CPU cost of the RNN page's experiments on a cache miss, without Streamlit.

    .venv/bin/python -m bench.bench_rnn [--repeats 7]

The page caches every result (st.cache_data); these are the uncached costs of the work one widget change to a new
value triggers, in process CPU time (time.process_time, so waiting for a busy CPU is not counted), each repeat with
a value nobody used before. Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import itertools
import os
import time

import numpy as np
from streamlit import logger

from attention_core import rnn, rnn_probe
from bench.timing import describe, timed

logger.get_logger("streamlit.runtime.caching.cache_data_api").setLevel("ERROR")  # "No runtime found": expected here
from ui.rnn import PROBE_D, PROBE_HIDDEN, PROBE_LENGTHS, PROBE_TEST, PROBE_TRAIN  # noqa: E402


def probe(radius: float, seed: int):
    return rnn_probe.memory_probe(PROBE_LENGTHS, PROBE_HIDDEN, radius, seed, d_in=PROBE_D, n_train=PROBE_TRAIN,
                                  n_test=PROBE_TEST)


def cases() -> dict:
    """What one widget change computes, as a function of a fresh integer i."""
    X = 0.7 * np.random.default_rng(0).normal(size=(40, 50))  # a 40-word sentence of GloVe-sized vectors
    return {
        "radius change (probe + influence, hidden 32)": lambda i: (probe(0.9 + 0.01 * i, 0),
                                                                     rnn.influence_profile(X, 32, 0.9 + 0.01 * i, 0)),
        "seed change (probe + best case + influence)": lambda i: (
            probe(0.9, 100 + i), rnn_probe.best_case_memory(PROBE_LENGTHS, PROBE_HIDDEN, 100 + i, d_in=PROBE_D),
            rnn.influence_profile(X, 32, 0.9, 100 + i)),
        "hidden change to 256 (influence only)": lambda i: rnn.influence_profile(X, 256, 0.9, 200 + i),
        "radius change at hidden 256 (influence only)": lambda i: rnn.influence_profile(X, 256, 0.9 + 0.01 * i, 0),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_rnn", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; CPU per cache miss")
    for name, case in cases().items():
        fresh = itertools.count(1)
        print(describe(name, timed(lambda: case(next(fresh)), args.repeats, clock=time.process_time)))


if __name__ == "__main__":
    main()
