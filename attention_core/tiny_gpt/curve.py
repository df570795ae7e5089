"""Reading a run's loss curve: its flat stretch before the drop, measured on the curve itself (not assumed).

A curve first falls from chance (log of the vocabulary) as the model learns the tokens' statistics; then, in some
runs, it stays level for a while before the copying circuit forms and the loss drops. The flat stretch is the longest
run of consecutive measurements, after the first fall and before the drop, whose values stay within `tolerance`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TOLERANCE = 0.1  # nats: a stretch whose loss moves less than this is flat
FIRST_FALL = 0.25  # nats below the first measurement: the first fall is done
PLATEAU_STEPS = 100  # a flat stretch this long (in steps) is called a plateau


@dataclass(frozen=True)
class Flat:
    """The flat stretch: from step `first` to step `last`, its loss between `low` and `high` nats."""

    first: int
    last: int
    low: float
    high: float

    @property
    def length(self) -> int:
        return self.last - self.first


def flat_stretch(steps, loss, until: int | None = None, tolerance: float = TOLERANCE) -> Flat | None:
    """steps: (S,), loss: (S,) -> the longest stretch of consecutive measurements after the first fall (loss below
    loss[0] - FIRST_FALL) and at steps before `until` (the drop; None: the whole curve) whose max - min <= tolerance;
    None if no stretch has two measurements. Ties: the earliest."""
    steps, loss = np.asarray(steps), np.asarray(loss, dtype=np.float64)
    keep = (loss < loss[0] - FIRST_FALL) & ((steps < until) if until is not None else True)
    best = None
    for i in np.flatnonzero(keep):
        j = i
        while j + 1 < len(loss) and keep[j + 1] and np.ptp(loss[i:j + 2]) <= tolerance:
            j += 1
        if j > i and (best is None or steps[j] - steps[i] > best.length):
            best = Flat(int(steps[i]), int(steps[j]), float(loss[i:j + 1].min()), float(loss[i:j + 1].max()))
    return best
