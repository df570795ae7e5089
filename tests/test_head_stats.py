"""The measurement toolkit against independent computations: exact binomial sums (math.comb), every sign flip of
tiny cases enumerated, naive loops, scipy's Wilson interval and the interval's defining inequality."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from attention_core.measure import head_stats as hs
from tests.hypothesis_budget import examples

# ---------------------------------------------------------------- Wilson interval


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(1, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_matches_scipy(kn):
    k, n = kn
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    np.testing.assert_allclose(hs.wilson_interval(k, n), (ci.low, ci.high), atol=1e-9)


@pytest.mark.parametrize("k, n", [(0, 5), (3, 5), (5, 5), (11, 26), (26, 52), (40, 52)])
def test_wilson_is_the_set_of_p_the_score_test_keeps(k, n):
    # {p : (k - n p)^2 <= z^2 n p (1 - p)} on a fine grid: its ends are the interval's, to the grid's step
    grid = np.linspace(0, 1, 200_001)
    kept = grid[(k - n * grid) ** 2 <= hs.Z95 ** 2 * n * grid * (1 - grid)]
    lo, hi = hs.wilson_interval(k, n)
    assert abs(kept.min() - lo) < 1e-5 and abs(kept.max() - hi) < 1e-5


def test_the_issues_example_11_of_26_is_26_to_61_percent():
    lo, hi = hs.wilson_interval(11, 26)
    assert (round(lo * 100), round(hi * 100)) == (26, 61)


@pytest.mark.parametrize("k, n", [(-1, 5), (6, 5), (0, 0)])
def test_impossible_counts_are_refused(k, n):
    with pytest.raises(ValueError):
        hs.wilson_interval(k, n)
    with pytest.raises(ValueError):
        hs.Count(k, n)


def test_a_count_carries_its_share_and_interval():
    c = hs.Count(13, 20)
    assert c.share == 13 / 20 and c.interval == hs.wilson_interval(13, 20)


# ---------------------------------------------------------------- the split


def test_split_halves_every_other_item_from_the_first():
    s = hs.split(list("abcdefg"))
    assert s.pick_idx == (0, 2, 4, 6) and s.score_idx == (1, 3, 5)
    assert "4 of 7" in s.rule


def test_split_by_strata_keeps_each_stratum_halved():
    strata = ["first"] * 6 + ["second"] * 6
    s = hs.split(12, strata=strata)
    for label in ("first", "second"):
        members = [i for i in range(12) if strata[i] == label]
        assert sum(i in s.pick_idx for i in members) == 3 and sum(i in s.score_idx for i in members) == 3


@settings(max_examples=examples(100), deadline=None)
@given(st.integers(3, 60), st.sampled_from([0.5, 1 / 3, 0.25, 0.6]), st.integers(1, 3))
def test_split_is_a_fixed_partition(n, fraction, n_strata):
    # (each stratum gets at least 3 items: with 2, a fraction over 1/2 picks both and the split is refused, as tested below)
    strata = [i % n_strata for i in range(n)]
    a = hs.split(n, fraction, strata if n >= 3 * n_strata else None)
    b = hs.split(n, fraction, strata if n >= 3 * n_strata else None)
    assert a == b
    assert sorted(a.pick_idx + a.score_idx) == list(range(n)) and not set(a.pick_idx) & set(a.score_idx)


@pytest.mark.parametrize("args", [(1,), (5, 0.0), (5, 1.0), (4, 0.5, [0, 1]), (2, 0.6)])
def test_split_refuses_what_cannot_be_split(args):
    with pytest.raises(ValueError):
        hs.split(*args)


# ---------------------------------------------------------------- pick on one split, score on the other


def test_pick_on_score_on_against_a_loop():
    rng = np.random.default_rng(3)
    scores = (rng.random((3, 4, 20)) < 0.5).astype(float)
    pick, score = list(range(0, 20, 2)), list(range(1, 20, 2))
    best, best_mean = None, -1.0
    for layer in range(3):
        for head in range(4):
            m = sum(scores[layer, head, i] for i in pick) / len(pick)
            if m > best_mean:
                best, best_mean = (layer, head), m
    out = hs.pick_on_score_on(scores, pick, score)
    assert out.head == best and out.name == f"L{best[0]}H{best[1]}"
    k = int(sum(scores[best][i] for i in score))
    assert out.held_out_count == hs.Count(k, 10) and out.held_out_mean == pytest.approx(k / 10)
    assert out.pick_mean == pytest.approx(best_mean)


def test_the_pick_never_looks_at_the_held_out_items():
    scores = np.array([[1, 1, 0, 0], [0, 1, 1, 1.0]])  # head 0 wins on items 0, 1; head 1 wins overall
    out = hs.pick_on_score_on(scores, [0], [1, 2, 3])
    assert out.head == (0,) and out.held_out_count == hs.Count(1, 3)


def test_pairs_scored_as_shares_of_two_sentences_count_sentences():
    scores = np.array([[1.0, 0.5, 0.5, 1.0]])
    out = hs.pick_on_score_on(scores, [0, 1], [2, 3], trials_per_item=2)
    assert out.pick_count == hs.Count(3, 4) and out.held_out_count == hs.Count(3, 4)


def test_weights_carry_no_count():
    out = hs.pick_on_score_on(np.array([[0.3, 0.2], [0.1, 0.7]]), [0], [1])
    assert out.head == (0,) and out.held_out_count is None and out.held_out_mean == pytest.approx(0.2)


def test_overlapping_splits_are_refused():
    with pytest.raises(ValueError):
        hs.pick_on_score_on(np.zeros((2, 4)), [0, 1], [1, 2])


# ---------------------------------------------------------------- the best of N heads by chance


def every_flip(items):
    return np.array(list(itertools.product([-1.0, 1.0], repeat=items)))


def test_one_head_under_every_flip_is_the_exact_binomial():
    n = 9
    chance = hs.best_of_n_chance(np.ones((1, n)), flips=every_flip(n), observed=7 / 9)
    hits = np.round(chance.best_scores * n).astype(int)
    for k in range(n + 1):
        assert int((hits == k).sum()) == math.comb(n, k)
    exact_tail = sum(math.comb(n, j) for j in range(7, n + 1)) / 2 ** n
    assert chance.p_value == pytest.approx(exact_tail)
    assert chance.mean == pytest.approx(0.5)


def test_seeded_draws_approach_the_exact_binomial_tail():
    n, draws = 26, 20_000
    chance = hs.best_of_n_chance(np.ones((1, n)), seed=1, draws=draws, observed=17 / 26)
    exact = sum(math.comb(n, j) for j in range(17, n + 1)) / 2 ** n
    assert abs(chance.p_value - exact) < 4 * math.sqrt(exact * (1 - exact) / draws)
    assert chance.seed == 1 and chance.draws == draws


def test_several_correlated_heads_against_a_brute_force_enumeration():
    rng = np.random.default_rng(5)
    outcomes = rng.choice([-1.0, 0.0, 1.0], size=(2, 3, 6))
    outcomes[1, 2] = outcomes[0, 0]  # two heads with the same outcomes: their correlation must be kept
    brute = []
    for signs in itertools.product([-1, 1], repeat=6):
        best = -1.0
        for index in np.ndindex(2, 3):
            score = (1 + sum(s * o for s, o in zip(signs, outcomes[index])) / 6) / 2
            best = max(best, score)
        brute.append(best)
    chance = hs.best_of_n_chance(outcomes, flips=every_flip(6))
    np.testing.assert_allclose(np.sort(chance.best_scores), np.sort(brute))
    observed = max((1 + outcomes[i].mean()) / 2 for i in np.ndindex(2, 3))
    assert chance.observed == pytest.approx(observed)
    assert chance.p_value == pytest.approx(np.mean(np.array(brute) >= observed - 1e-12))
    assert chance.p95 == pytest.approx(np.quantile(brute, 0.95))


def test_a_head_split_between_the_two_nouns_scores_exactly_half_under_every_flip():
    chance = hs.best_of_n_chance(np.zeros((1, 5)), flips=every_flip(5))
    assert np.all(chance.best_scores == 0.5)


def test_the_draws_are_fixed_by_the_seed():
    outcomes = np.random.default_rng(0).uniform(-1, 1, size=(4, 10))
    a, b = hs.best_of_n_chance(outcomes, seed=3, draws=50), hs.best_of_n_chance(outcomes, seed=3, draws=50)
    np.testing.assert_array_equal(a.best_scores, b.best_scores)


@pytest.mark.parametrize("outcomes", [np.ones(4), np.full((2, 3), 2.0)])
def test_bad_outcomes_are_refused(outcomes):
    with pytest.raises(ValueError):
        hs.best_of_n_chance(outcomes, draws=10)


# ---------------------------------------------------------------- baselines


def test_rule_baselines_against_a_loop():
    candidates = [(1, 4), (2, 6), (0, 3), (5, 2)]
    answers = [1, 6, 3, 2]
    picks = hs.first_of(candidates)
    assert picks == [1, 2, 0, 2]
    assert hs.rule_baseline(picks, answers) == hs.Count(2, 4)
    assert hs.previous_word([3, 1, 7]) == [2, 0, 6]


def test_head_name():
    assert hs.head_name((2, 9)) == "L2H9" and hs.head_name((4,)) == "H4"


def test_mean_interval_is_the_textbook_t_interval():
    # 8 scores; t(0.975, 7) = 2.364624 from a printed table, the rest by hand with the statistics module
    import statistics

    values = [0.81, 0.92, 0.88, 0.90, 0.85, 0.95, 0.87, 0.89]
    mean, lo, hi = hs.mean_interval(values)
    half = 2.364624 * statistics.stdev(values) / math.sqrt(len(values))
    assert mean == pytest.approx(statistics.fmean(values))
    assert (lo, hi) == (pytest.approx(mean - half, abs=1e-6), pytest.approx(mean + half, abs=1e-6))
    assert hs.mean_interval([0.5]) == (0.5, 0.5, 0.5)
