"""Timing of the RNN-bottleneck core at the page's defaults (run: .venv/bin/python bench/bench_rnn.py).

The page caches both results (st.cache_data); these are the cold, uncached costs of one rerun with new settings.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attention_core.rnn import influence_profile, memory_probe  # noqa: E402

PROBE = dict(lengths=range(1, 41), hidden_sizes=(8, 32, 128), n_train=2000, n_test=500)


def timings(repeats: int, fn) -> tuple[float, float, float]:
    """-> (first, median, max) seconds of ``fn(seed)`` for seeds 0..repeats-1 (each a cache miss on the page)."""
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        fn(seed)
        times.append(time.perf_counter() - start)
    return times[0], float(np.median(times)), max(times)


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; times in ms: first / median / max")
    X = 0.7 * np.random.default_rng(0).normal(size=(40, 50))  # a 40-word sentence of GloVe-sized vectors
    for hidden in (32, 256):
        first, median, worst = timings(5, lambda seed: influence_profile(X, hidden, 0.9, seed=seed))
        print(f"influence_profile  T=40 hidden={hidden:<4d}         {first * 1e3:7.1f} / {median * 1e3:7.1f} / {worst * 1e3:7.1f}")
    for radius in (0.1, 0.9, 2.0):
        first, median, worst = timings(5, lambda seed: memory_probe(radius=radius, seed=seed, **PROBE))
        print(f"memory_probe       radius={radius:<4}  (8, 32, 128) {first * 1e3:7.1f} / {median * 1e3:7.1f} / {worst * 1e3:7.1f}")


if __name__ == "__main__":
    main()
