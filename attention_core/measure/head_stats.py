"""Measuring heads as a reviewer would: pick on one split, score on the other, with counts, intervals and chance.

Shared by lesson 8 and every later lesson that ranks heads. Pure NumPy; the only random thing takes a ``seed``.

API
- ``Count(k, n)``: k of n, its ``share`` and its Wilson 95 % ``interval``; carried by every result below.
- ``wilson_interval(k, n, z=1.96) -> (lo, hi)``: the Wilson score interval of k successes in n trials.
- ``split(items_or_n, pick_fraction=0.5, strata=None) -> Split``: a fixed, stated split into a pick half and a
  score half: within each stratum (e.g. "answer is the first noun" / "the second"), the items at positions
  floor(j / fraction), j = 0, 1, ..., in file order pick (0.5: the 1st, 3rd, 5th, ...); the rest score.
  No randomness.
- ``pick_on_score_on(scores, pick_idx, score_idx, trials_per_item=1) -> HeldOut``: scores (..., items); the head
  with the highest mean on the pick items (the first in C order on ties) and its score on the held-out items.
- ``best_of_n_chance(outcomes, seed, draws=5000, observed=None, flips=None) -> ChanceOfBest``: outcomes (heads...,
  items) signed in [-1, 1] (+1 right, -1 wrong); a head's score is (1 + mean)/2. Each draw flips the sign of every
  item for all heads at once (which answer is "right" per pair, heads' correlations kept) and records the best
  head's score: the distribution, its mean, its 95th percentile and the share of draws reaching ``observed``.
- ``rule_baseline(picks, answers) -> Count``: how often a fixed rule (the first noun, the previous word, the
  subject, ...) names the answer; ``first_of(candidates)``, ``previous_word(sources)`` make such picks.
- ``head_name(index) -> "L{layer}H{head}"`` for an (L, H) index ("H{head}" for a flat one).
- ``mean_interval(values, confidence=0.95) -> (mean, lo, hi)``: a Student-t interval of the mean of a continuous
  score over items (a head's weight on its target, sequence by sequence), for scores that are not hits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

Z95 = 1.959963984540054  # the normal quantile for a two-sided 95 % interval


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """k of n (0 <= k <= n, n >= 1) -> (lo, hi) the Wilson score interval for the success probability."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Count:
    """k successes of n trials."""

    k: int
    n: int

    def __post_init__(self):
        if self.n < 1 or not 0 <= self.k <= self.n:
            raise ValueError(f"need 0 <= k <= n and n >= 1, got k={self.k}, n={self.n}")

    @property
    def share(self) -> float:
        return self.k / self.n

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.k, self.n)


@dataclass(frozen=True)
class Split:
    """Item indices that choose (pick_idx) and that score (score_idx); rule states how, in words for docs/tests."""

    pick_idx: tuple[int, ...]
    score_idx: tuple[int, ...]
    rule: str


def split(items_or_n, pick_fraction: float = 0.5, strata: Sequence | None = None) -> Split:
    """n items (or a sequence of them), a fraction in (0, 1), optional stratum label per item -> Split (see header)."""
    n = items_or_n if isinstance(items_or_n, (int, np.integer)) else len(items_or_n)
    if n < 2:
        raise ValueError(f"need at least 2 items to split, got {n}")
    if not 0 < pick_fraction < 1:
        raise ValueError(f"pick_fraction must lie in (0, 1), got {pick_fraction}")
    labels = [0] * n if strata is None else list(strata)
    if len(labels) != n:
        raise ValueError(f"strata must have one label per item ({n}), got {len(labels)}")
    pick = []
    for label in dict.fromkeys(labels):
        members = [i for i in range(n) if labels[i] == label]
        # positions floor(j / fraction) in file order: 0.5 -> 0, 2, 4, ...; 1/3 -> 0, 3, 6, ...
        positions = sorted({math.floor(j / pick_fraction + 1e-9) for j in range(len(members))})
        pick += [members[p] for p in positions if p < len(members)]
    pick_set = set(pick)
    score = [i for i in range(n) if i not in pick_set]
    if not score or not pick:
        raise ValueError("the split left one side empty")
    rule = (f"{len(pick)} of {n} items pick, {len(score)} score: within each "
            f"{'stratum' if strata is not None else 'set'}, evenly spaced items in file order "
            f"at positions floor(j / {pick_fraction:g}) pick, the others score")
    return Split(tuple(sorted(pick)), tuple(score), rule)


def head_name(index) -> str:
    """(layer, head) -> 'L{layer}H{head}'; (head,) -> 'H{head}'."""
    if len(index) == 1:
        return f"H{int(index[0])}"
    layer, head = index
    return f"L{int(layer)}H{int(head)}"


@dataclass(frozen=True)
class HeldOut:
    """The head picked on one split and its scores: means over items, and counts when the scores are counts.

    head: its index in the scores' leading dims; pick_mean/held_out_mean: mean score per trial on each side;
    pick_count/held_out_count: Count of successes (None when the scores are not whole counts, e.g. weights).
    """

    head: tuple[int, ...]
    pick_mean: float
    held_out_mean: float
    pick_items: int
    held_out_items: int
    pick_count: Count | None
    held_out_count: Count | None

    @property
    def name(self) -> str:
        return head_name(self.head)


def _as_count(per_item: np.ndarray, trials_per_item: int) -> Count | None:
    successes = per_item * trials_per_item
    if not np.allclose(successes, np.round(successes)):
        return None
    return Count(int(round(successes.sum())), per_item.size * trials_per_item)


def pick_on_score_on(scores, pick_idx: Sequence[int], score_idx: Sequence[int],
                     trials_per_item: int = 1) -> HeldOut:
    """scores: (..., items) a score per head and item (a share of trials_per_item trials, or a weight) -> HeldOut."""
    scores = np.asarray(scores, dtype=np.float64)
    pick_idx, score_idx = list(pick_idx), list(score_idx)
    if scores.ndim < 2:
        raise ValueError(f"scores must be (heads..., items), got shape {scores.shape}")
    if not pick_idx or not score_idx or set(pick_idx) & set(score_idx):
        raise ValueError("pick_idx and score_idx must be non-empty and disjoint")
    items = scores.shape[-1]
    if not all(0 <= i < items for i in pick_idx + score_idx):
        raise ValueError(f"indices must lie in 0..{items - 1}")
    pick_means = scores[..., pick_idx].mean(axis=-1)
    head = tuple(int(i) for i in np.unravel_index(int(np.argmax(pick_means)), pick_means.shape))
    on_pick, on_score = scores[head][pick_idx], scores[head][score_idx]
    return HeldOut(head, float(on_pick.mean()), float(on_score.mean()), len(pick_idx), len(score_idx),
                   _as_count(on_pick, trials_per_item), _as_count(on_score, trials_per_item))


@dataclass(frozen=True)
class ChanceOfBest:
    """What the best of ``heads`` heads scores when each item's answer is flipped at random (draws of them).

    best_scores: (draws,) the best head's score per draw; observed: the best head's real score; p_value: the share
    of draws whose best reaches it.
    """

    best_scores: np.ndarray
    observed: float
    heads: int
    items: int
    seed: int | None

    @property
    def draws(self) -> int:
        return int(self.best_scores.size)

    @property
    def mean(self) -> float:
        return float(self.best_scores.mean())

    @property
    def p95(self) -> float:
        return float(np.quantile(self.best_scores, 0.95))

    @property
    def p_value(self) -> float:
        return float(np.mean(self.best_scores >= self.observed - 1e-12))


def signed_scores(outcomes) -> np.ndarray:
    """outcomes: (..., items) signed in [-1, 1] -> (...) each head's score (1 + mean) / 2."""
    return (1.0 + np.asarray(outcomes, dtype=np.float64).mean(axis=-1)) / 2.0


def best_of_n_chance(outcomes, seed: int | None = 0, draws: int = 5000, observed: float | None = None,
                     flips=None) -> ChanceOfBest:
    """outcomes: (heads..., items) signed -> ChanceOfBest. flips: (draws, items) of +-1 to use instead of random
    ones (e.g. every sign pattern of a small set); otherwise ``draws`` patterns from ``seed``."""
    outcomes = np.asarray(outcomes, dtype=np.float64)
    if outcomes.ndim < 2 or outcomes.shape[-1] < 1:
        raise ValueError(f"outcomes must be (heads..., items), got shape {outcomes.shape}")
    if np.any(np.abs(outcomes) > 1 + 1e-12):
        raise ValueError("outcomes must lie in [-1, 1]")
    items = outcomes.shape[-1]
    flat = outcomes.reshape(-1, items)
    if flips is None:
        if draws < 1:
            raise ValueError(f"draws must be >= 1, got {draws}")
        flips = np.random.default_rng(seed).choice(np.array([-1.0, 1.0]), size=(draws, items))
    else:
        flips = np.asarray(flips, dtype=np.float64)
        if flips.ndim != 2 or flips.shape[1] != items or not np.all(np.abs(flips) == 1):
            raise ValueError(f"flips must be (draws, {items}) of +-1")
        seed = None
    best = (1.0 + (flips @ flat.T).max(axis=1) / items) / 2.0
    real = float(signed_scores(flat).max()) if observed is None else float(observed)
    return ChanceOfBest(best, real, flat.shape[0], items, seed)


def rule_baseline(picks: Sequence[int], answers: Sequence[int]) -> Count:
    """picks, answers: (items,) word indices -> Count of items where the rule's pick is the answer."""
    if len(picks) != len(answers) or not len(picks):
        raise ValueError("need one pick per answer, and at least one")
    return Count(sum(int(p) == int(a) for p, a in zip(picks, answers)), len(picks))


def first_of(candidates: Sequence[Sequence[int]]) -> list[int]:
    """Per item its candidate word indices -> the earliest one (the rule "the first noun")."""
    return [min(c) for c in candidates]


def previous_word(sources: Sequence[int]) -> list[int]:
    """Per item the source word index -> the word before it (the rule "the previous word")."""
    return [int(s) - 1 for s in sources]


def mean_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """values: (n,) one score per item -> (mean, lo, hi), the Student-t interval of the mean (lo = hi = mean for n = 1)."""
    from scipy.stats import t as student_t  # (imported here: only the pages that rank continuous scores need it)

    v = np.asarray(values, dtype=np.float64)
    mean = float(v.mean())
    if v.size < 2:
        return mean, mean, mean
    half = float(student_t.ppf((1 + confidence) / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return mean, mean - half, mean + half


def rank_correlation(x: np.ndarray, y: np.ndarray, seed: int, resamples: int = 2000) -> tuple[float, float, float]:
    """x, y: (m,) -> (Spearman's rho, 2.5 % and 97.5 % of its bootstrap over the m items, resampled with `seed`)."""
    x, y = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(resamples, x.size))
    samples = _rho(x[idx], y[idx])  # every resample at once (a loop of them cost ~0.7 s a page run)
    low, high = np.quantile(samples, [0.025, 0.975])
    return float(_rho(x, y)), float(low), float(high)


def _rho(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a, b: (..., m) -> (...) Spearman's rho of each row pair (0 where a row is constant)."""
    ra, rb = _ranks(a), _ranks(b)
    ra, rb = ra - ra.mean(axis=-1, keepdims=True), rb - rb.mean(axis=-1, keepdims=True)
    denominator = np.sqrt((ra * ra).sum(axis=-1) * (rb * rb).sum(axis=-1))
    safe = np.where(denominator > 0, denominator, 1.0)
    return np.where(denominator > 0, (ra * rb).sum(axis=-1) / safe, 0.0)


def _ranks(a: np.ndarray) -> np.ndarray:
    """(..., m) -> (..., m) average ranks from 1 along the last axis (ties share the mean of their ranks)."""
    order = np.argsort(a, axis=-1, kind="stable")
    ordered = np.take_along_axis(a, order, axis=-1)
    position = np.broadcast_to(np.arange(a.shape[-1]), a.shape)
    starts = np.ones(a.shape, dtype=bool)
    starts[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    ends = np.ones(a.shape, dtype=bool)
    ends[..., :-1] = starts[..., 1:]
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=-1)  # where each tie group starts and ends
    last = np.flip(np.minimum.accumulate(np.flip(np.where(ends, position, a.shape[-1]), -1), axis=-1), -1)
    ranks = np.empty(a.shape, dtype=np.float64)
    np.put_along_axis(ranks, order, (first + last) / 2 + 1, axis=-1)
    return ranks
