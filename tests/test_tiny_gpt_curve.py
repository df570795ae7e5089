"""A run's level stretch before its drop (attention_core.tiny_gpt.curve.flat_stretch) against a brute force over every
window of the curve, and on curves drawn by hand: the plateau is measured on the run's own curve, never assumed."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.tiny_gpt.curve import FIRST_FALL, flat_stretch


def brute_force(steps, loss, until, tolerance):
    """-> (first, last, low, high) of the longest window (earliest on ties) of >= 2 points, all after the first fall
    and before `until`, with max - min <= tolerance; None if none."""
    ok = [loss[k] < loss[0] - FIRST_FALL and (until is None or steps[k] < until) for k in range(len(loss))]
    best = None
    for i in range(len(loss)):
        for j in range(i + 1, len(loss)):
            window = loss[i:j + 1]
            if all(ok[i:j + 1]) and max(window) - min(window) <= tolerance:
                if best is None or steps[j] - steps[i] > best[1] - best[0]:
                    best = (steps[i], steps[j], min(window), max(window))
    return best


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(0.0, 4.0), min_size=2, max_size=14), st.one_of(st.none(), st.integers(0, 350)))
def test_the_stretch_is_the_longest_level_window_after_the_first_fall(values, until):
    steps = np.arange(len(values)) * 25
    loss = np.array([3.5] + values[1:])  # the first measurement at chance, as in every run
    got = flat_stretch(steps, loss, until, tolerance=0.1)
    want = brute_force(steps.tolist(), loss.tolist(), until, 0.1)
    assert (got is None) == (want is None)
    if got is not None:
        assert (got.first, got.last, got.low, got.high) == want


def test_a_curve_that_rests_then_drops_and_one_that_never_rests():
    steps = np.arange(12) * 25
    rests = np.array([3.47, 3.4, 3.1, 2.90, 2.88, 2.86, 2.85, 2.87, 2.5, 1.8, 1.0, 0.8])
    flat = flat_stretch(steps, rests, until=225)
    assert (flat.first, flat.last, flat.length) == (75, 175, 100)
    assert (round(flat.low, 2), round(flat.high, 2)) == (2.85, 2.90)
    falls = np.array([3.47, 3.3, 3.0, 2.7, 2.4, 2.1, 1.8, 1.5, 1.2, 0.9, 0.7, 0.6])
    assert flat_stretch(steps, falls, until=200) is None
    assert flat_stretch(steps, np.full(12, 3.47), None) is None  # never fell: no stretch after the first fall
