"""The micro-benchmarks' one timing helper: repeat a call, report the median and spread (noisy machines: no single times)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def timed(fn: Callable[[], object], repeats: int, clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """Run ``fn`` ``repeats`` times -> the seconds of each run by ``clock`` (time.process_time: CPU, not waiting)."""
    out = []
    for _ in range(repeats):
        start = clock()
        fn()
        out.append(clock() - start)
    return out


def describe(name: str, seconds: list[float], width: int = 46) -> str:
    """One line: the name, then median / min / max in milliseconds and the number of runs."""
    ms = [s * 1000 for s in seconds]
    return (f"{name:<{width}} median {statistics.median(ms):8.1f} ms   min {min(ms):8.1f}   max {max(ms):8.1f}"
            f"   (n = {len(ms)})")
