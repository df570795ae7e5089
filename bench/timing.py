"""Shared by the micro-benchmarks: repeat a call, report the median and spread (noisy machines: no single times)."""

from __future__ import annotations

import statistics
import time


def timed(fn, repeats: int) -> list[float]:
    """Run ``fn`` ``repeats`` times; the wall-clock seconds of each run."""
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def describe(name: str, seconds: list[float], width: int = 46) -> str:
    """One line: the name, then median / min / max in milliseconds and the number of runs."""
    ms = [s * 1000 for s in seconds]
    return (f"{name:<{width}} median {statistics.median(ms):8.1f} ms   min {min(ms):8.1f}   max {max(ms):8.1f}"
            f"   (n = {len(ms)})")


# Sentences nobody has sent yet: each one is a cache miss for the pages that embed a sentence (GloVe pages).
SENTENCES = [
    "the dog did not jump over the fence because it was too tired",
    "the bird didn't leave the nest because it was too cold",
    "a cat sat on the mat because it was warm",
    "the horse wouldn't cross the river because it was too deep",
    "the child didn't eat the soup because it was too hot",
    "the car didn't fit in the garage because it was too big",
    "my friend didn't answer the phone because it was too late",
]
