"""CPU cost of the RNN page's experiments on a cache miss (run: .venv/bin/python bench/bench_rnn.py [--old FILE]).

The page caches every result (st.cache_data); these are the uncached costs of the work one widget change to a new
value triggers, in process CPU time (time.process_time, so waiting for a busy CPU is not counted), median over
seeds. ``--old FILE`` times an older attention_core/rnn.py (e.g. from `git show <commit>:attention_core/rnn.py`)
with the old page's probe sizes, for a before/after table from one run on the same machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attention_core import rnn, rnn_probe  # noqa: E402
from streamlit import logger  # noqa: E402

logger.get_logger("streamlit.runtime.caching.cache_data_api").setLevel("ERROR")  # "No runtime found": expected here
from ui.rnn_sections import PROBE_D, PROBE_HIDDEN, PROBE_LENGTHS, PROBE_TEST, PROBE_TRAIN  # noqa: E402

OLD_PROBE = dict(lengths=range(1, 41), hidden_sizes=(8, 32, 128), n_train=2000, n_test=500)


def cpu_ms(fn, repeats: int) -> tuple[float, float]:
    """-> (median, max) CPU milliseconds of ``fn(i)`` for i = 1..repeats (each i a value nobody used before)."""
    times = []
    for i in range(1, repeats + 1):
        start = time.process_time()
        fn(i)
        times.append(time.process_time() - start)
    return float(np.median(times)) * 1e3, max(times) * 1e3


def load_old(path: str):
    spec = importlib.util.spec_from_file_location("old_rnn", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_rnn"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def cases(module, new: bool):
    X = 0.7 * np.random.default_rng(0).normal(size=(40, 50))  # a 40-word sentence of GloVe-sized vectors
    if new:
        def probe(radius, seed):
            return module.memory_probe(PROBE_LENGTHS, PROBE_HIDDEN, radius, seed, d_in=PROBE_D, n_train=PROBE_TRAIN,
                                       n_test=PROBE_TEST)

        def best(seed):
            return module.best_case_memory(PROBE_LENGTHS, PROBE_HIDDEN, seed, d_in=PROBE_D)
    else:
        def probe(radius, seed):
            return module.memory_probe(radius=radius, seed=seed, **OLD_PROBE)

        def best(seed):
            return None
    return {
        "radius change (probe + influence, hidden 32)": lambda i: (probe(0.9 + 0.01 * i, 0),
                                                                     module.influence_profile(X, 32, 0.9 + 0.01 * i, 0)),
        "seed change (probe + best case + influence)": lambda i: (probe(0.9, 100 + i), best(100 + i),
                                                                   module.influence_profile(X, 32, 0.9, 100 + i)),
        "hidden change to 256 (influence only)": lambda i: module.influence_profile(X, 256, 0.9, 200 + i),
        "radius change at hidden 256 (influence only)": lambda i: module.influence_profile(X, 256, 0.9 + 0.01 * i, 0),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", help="an older attention_core/rnn.py to time beside the current one")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; CPU ms per cache miss: median / max")
    now = SimpleNamespace(influence_profile=rnn.influence_profile, memory_probe=rnn_probe.memory_probe,
                          best_case_memory=rnn_probe.best_case_memory)  # the probe lives in rnn_probe.py now
    runs = [("now", cases(now, True))]
    if args.old:
        runs.insert(0, ("old", cases(load_old(args.old), False)))
    for name in runs[0][1]:
        row = [f"{name:<46}"]
        for label, table in runs:
            median, worst = cpu_ms(table[name], args.repeats)
            row.append(f"{label} {median:7.1f} / {worst:7.1f}")
        print("  ".join(row))


if __name__ == "__main__":
    main()
