"""The GPT lesson's head measurements against naive loops and hand-made causal weights with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.gpt_studies import heads
from tests.hypothesis_budget import examples


def causal_random(layers=2, n_heads=3, n=9, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(layers, n_heads, n, n))
    scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def one_hot_rows(n, target_of_row):
    w = np.zeros((n, n))
    for i in range(n):
        w[i, target_of_row(i)] = 1.0
    return w


# ---------------------------------------------------------------- against loops

def test_sink_share_against_a_loop():
    w = causal_random()
    naive = np.zeros(w.shape[:2])
    for l in range(w.shape[0]):
        for h in range(w.shape[1]):
            naive[l, h] = sum(w[l, h, i, 0] for i in range(1, w.shape[-1])) / (w.shape[-1] - 1)
    np.testing.assert_allclose(heads.sink_share(w), naive)


def test_previous_token_score_against_a_loop():
    w = causal_random(n=7, seed=1)
    naive = np.zeros(w.shape[:2])
    for l in range(w.shape[0]):
        for h in range(w.shape[1]):
            naive[l, h] = sum(w[l, h, i, i - 1] for i in range(1, 7)) / 6
    np.testing.assert_allclose(heads.previous_token_score(w), naive)


@pytest.mark.parametrize("period, offset", [(3, 0), (4, 1), (5, 2)])
def test_induction_score_against_a_loop_that_finds_earlier_occurrences(period, offset):
    rng = np.random.default_rng(period)
    first = rng.choice(100, size=period, replace=False) + 1000
    ids = [0] * offset + list(first) + list(first)
    w = causal_random(n=len(ids), seed=period)
    naive = np.zeros(w.shape[:2])
    rows = 0
    for q in range(offset + period, len(ids)):
        earlier = [p for p in range(q) if ids[p] == ids[q] and p >= offset]
        assert len(earlier) == 1
        naive += w[:, :, q, earlier[0] + 1]
        rows += 1
    np.testing.assert_allclose(heads.induction_score(w, period, offset), naive / rows)


# ---------------------------------------------------------------- heads with known answers

def test_hand_made_induction_previous_token_and_sink_heads():
    period = 4
    queries, targets = heads.induction_rows(period)
    induction = one_hot_rows(8, lambda i: dict(zip(queries, targets)).get(i, 0))
    previous = one_hot_rows(8, lambda i: max(i - 1, 0))
    sink = one_hot_rows(8, lambda i: 0)
    w = np.stack([induction, previous, sink])[None]
    np.testing.assert_allclose(heads.induction_score(w, period), [[1, 0, 0]])
    np.testing.assert_allclose(heads.previous_token_score(w), [[1 / 7, 1, 1 / 7]])  # row 1 -> 0 in all three
    np.testing.assert_allclose(heads.sink_share(w), [[3 / 7, 1 / 7, 1]])
    assert heads.heads_over(heads.sink_share(w)) == 1


def test_uniform_baselines_equal_the_scores_of_a_uniform_causal_head():
    n, period, offset = 11, 5, 1
    uniform = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    assert heads.sink_share(uniform) == pytest.approx(heads.uniform_sink_share(n))
    assert heads.previous_token_score(uniform) == pytest.approx(heads.uniform_previous_token_score(n))
    assert heads.induction_score(uniform, period, offset) == pytest.approx(
        heads.uniform_induction_score(period, offset))
    # the closed forms, written out: row i sees i + 1 positions
    assert heads.uniform_sink_share(n) == pytest.approx(sum(1 / (i + 1) for i in range(1, n)) / (n - 1))
    assert heads.uniform_induction_score(period, offset) == pytest.approx(
        sum(1 / (q + 1) for q in range(offset + period, offset + 2 * period)) / period)


@pytest.mark.parametrize("bad", [np.zeros((3, 4)), np.zeros((1, 1)), np.zeros(5)])
def test_non_square_or_too_small_attention_is_refused(bad):
    with pytest.raises(ValueError):
        heads.sink_share(bad)


def test_induction_score_refuses_a_sequence_too_short_for_two_copies():
    with pytest.raises(ValueError):
        heads.induction_score(causal_random(n=7), period=4)


# ---------------------------------------------------------------- losses

def test_token_losses_against_math_log():
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(6, 10)) * 3
    ids = rng.integers(0, 10, size=6)
    naive = []
    for i in range(5):
        z = sum(math.exp(x) for x in logits[i])
        naive.append(-math.log(math.exp(logits[i, ids[i + 1]]) / z))
    np.testing.assert_allclose(heads.token_losses(logits, ids), naive)


def test_token_losses_survive_huge_logits():
    logits = np.array([[1000.0, 0.0], [0.0, 1000.0], [0.0, 0.0]])
    np.testing.assert_allclose(heads.token_losses(logits, [0, 0, 0]), [0.0, 1000.0], atol=1e-9)


def test_copy_losses_take_tokens_two_to_r_of_each_copy():
    period, offset = 4, 1
    losses = np.arange(offset + 2 * period - 1, dtype=float)  # losses[i] predicts position i + 1
    first, second = heads.copy_losses(losses, period, offset)
    # first copy at positions 1..4 (offset 1): tokens 2..4 are positions 2, 3, 4, predicted by losses[1..3]
    assert first == pytest.approx(np.mean([1, 2, 3]))
    assert second == pytest.approx(np.mean([5, 6, 7]))


# ---------------------------------------------------------------- the sequences

@settings(max_examples=examples(50))
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 4), length=st.integers(2, 30))
def test_repeated_sequences_are_two_equal_copies_of_distinct_ordinary_ids(seed, count, length):
    seqs = heads.repeated_random_sequences(seed, count, length, high=1000)
    assert seqs.shape == (count, 2 * length)
    for row in seqs:
        assert list(row[:length]) == list(row[length:])
        assert len(set(row[:length])) == length
        assert min(row) >= heads.FIRST_ORDINARY_ID and max(row) < 1000


def test_sequences_are_seeded_and_the_two_sets_differ():
    a, b = heads.induction_sets(count=3, length=6), heads.induction_sets(count=3, length=6)
    np.testing.assert_array_equal(a.picking, b.picking)
    np.testing.assert_array_equal(a.scoring, b.scoring)
    assert not {tuple(r) for r in a.picking} & {tuple(r) for r in a.scoring}


def test_measure_sequences_stacks_each_sequences_measures():
    period, vocab = 3, 12
    seqs = heads.repeated_random_sequences(0, 2, period, low=0, high=vocab)
    queries, targets = heads.induction_rows(period)

    def forward(ids):  # a perfect induction head, and logits that know the repeat only in the second copy
        attention = one_hot_rows(len(ids), lambda i: dict(zip(queries, targets)).get(i, 0))[None, None]
        logits = np.zeros((len(ids), vocab))
        for i in range(period, len(ids) - 1):
            logits[i, ids[i + 1]] = 50.0
        return attention, logits

    m = heads.measure_sequences(forward, seqs, period)
    assert m.induction.shape == (2, 1, 1) and m.sink.shape == (2, 1, 1)
    np.testing.assert_allclose(m.induction, 1.0)
    np.testing.assert_allclose(m.first_copy_loss, math.log(vocab))
    np.testing.assert_allclose(m.second_copy_loss, 0.0, atol=1e-9)


def test_held_out_head_is_picked_on_one_set_and_scored_on_the_other():
    picking = np.zeros((3, 2, 2))
    scoring = np.zeros((2, 2, 2))
    picking[:, 1, 0] = 0.9  # L1H0 best where it is picked ...
    scoring[:, 1, 0] = [0.2, 0.4]  # ... and weaker held out; L0H1 is best held out but was not picked
    scoring[:, 0, 1] = 0.8
    held = heads.held_out_head(picking, scoring)
    assert held.name == "L1H0" and held.pick_mean == pytest.approx(0.9) and held.held_out_mean == pytest.approx(0.3)
    assert (held.pick_items, held.held_out_items) == (3, 2)


def test_head_study_reports_the_scoring_sets_means():
    sets = heads.induction_sets(count=2, length=3, high=30)
    rows = dict(zip(*heads.induction_rows(3)))

    def forward(ids):  # head 0 a perfect induction head, head 1 a sink
        induction = one_hot_rows(len(ids), lambda i: rows.get(i, 0))
        return np.stack([induction, one_hot_rows(len(ids), lambda i: 0)])[None], np.zeros((len(ids), 30))

    study = heads.head_study(forward, sets)
    assert study.induction.name == "L0H0" and study.induction.held_out_mean == pytest.approx(1.0)
    assert study.wrong_target.held_out_mean == 0.0  # neither head looks at the position after another token
    np.testing.assert_allclose(study.sink_means, [[2 / 5, 1.0]])  # rows 1, 2 of 5 look at 0 in the induction head
    assert study.first_copy_loss == pytest.approx(math.log(30)) and study.sequences == (2, 2)


@pytest.mark.parametrize("shift", [1, 2, 4])
def test_the_wrong_target_is_the_position_after_the_token_shift_places_on(shift):
    period, offset = 5, 1
    w = causal_random(n=offset + 2 * period, seed=shift)
    naive = np.zeros(w.shape[:2])
    for j in range(period):
        wrong = offset + (j + shift) % period + 1  # after the first copy's token j + shift (wrapping round)
        naive += w[:, :, offset + period + j, wrong]
    np.testing.assert_allclose(heads.induction_score(w, period, offset, shift=shift), naive / period)
    real = heads.induction_score(w, period, offset)
    assert not np.allclose(heads.induction_score(w, period, offset, shift=shift), real)


def test_head_study_gives_the_picked_heads_interval_from_the_scoring_sequences_and_takes_batched_passes():
    sets = heads.induction_sets(count=3, length=4, high=40)
    calls = []

    def forward(ids):
        return causal_random(n=len(ids), seed=int(ids[0])), np.zeros((len(ids), 40))

    def forward_many(many):
        calls.append(len(many))
        return [forward(ids) for ids in many]

    study = heads.head_study(forward, sets, forward_many)
    assert calls == [3, 3]  # each set in one batched call
    per_sequence = [heads.induction_score(forward(ids)[0], sets.period)[study.induction.head] for ids in sets.scoring]
    mean, lo, hi = study.induction_interval
    assert mean == pytest.approx(np.mean(per_sequence)) == pytest.approx(study.induction.held_out_mean)
    half = 4.302652729749464 * np.std(per_sequence, ddof=1) / math.sqrt(3)  # Student t, 2 degrees of freedom, 97.5 %
    assert (lo, hi) == pytest.approx((mean - half, mean + half))
    previous = [heads.previous_token_score(forward(ids)[0])[study.previous_token.head] for ids in sets.scoring]
    assert study.previous_token_interval[0] == pytest.approx(np.mean(previous))


# ---------------------------------------------------------------- the mask and the famous sentence

def test_above_diagonal_counts_the_cells_above_the_diagonal_and_their_exact_zeros_as_a_loop_does():
    attention = causal_random(layers=2, n_heads=3, n=6)
    attention[0, 1, 0, 4] = 0.25  # one weight above the diagonal that is not zero
    cells = [attention[l, h, i, j] for l in range(2) for h in range(3) for i in range(6) for j in range(6) if j > i]
    assert heads.above_diagonal(attention) == (len(cells), sum(1 for c in cells if c == 0.0)) == (90, 89)


def test_leak_differences_look_before_at_and_never_after_the_changed_position():
    a_att, b_att = causal_random(n=7, seed=1), causal_random(n=7, seed=1)
    a_logits = np.random.default_rng(2).normal(size=(7, 11))
    b_logits = a_logits.copy()
    b_att[..., 5:, :] += 0.5  # the changed row (5) and a later one change; nothing earlier
    b_logits[5:] += 3.0
    assert heads.leak_differences(a_att, a_logits, b_att, b_logits, 5) == (0.0, 0.0, pytest.approx(0.5))
    b_att[1, 2, 3, 0] += 0.125  # an earlier row changed: a leak
    b_logits[2, 4] -= 0.75
    assert heads.leak_differences(a_att, a_logits, b_att, b_logits, 5)[:2] == (pytest.approx(0.125), pytest.approx(0.75))


def test_minimal_pair_heads_count_the_heads_whose_preferred_noun_flips_as_a_loop_does():
    a, b = causal_random(layers=3, n_heads=4, n=8, seed=3), causal_random(layers=3, n_heads=4, n=8, seed=4)
    nouns, pronoun = (1, 4), 5
    pair = heads.minimal_pair_heads(a, b, pronoun, nouns)
    flips = sum(1 for l in range(3) for h in range(4)
                if (a[l, h, -1, 1] > a[l, h, -1, 4]) != (b[l, h, -1, 1] > b[l, h, -1, 4]))
    growth = {(l, h): b[l, h, -1, 4] - a[l, h, -1, 4] for l in range(3) for h in range(4)}
    assert (pair.flips, pair.heads, pair.best) == (flips, 12, max(growth, key=growth.get))
    assert pair.it_diff == pytest.approx(max(abs(a[l, h, 5, j] - b[l, h, 5, j])
                                             for l in range(3) for h in range(4) for j in range(8)))
    assert pair.last_rows.shape == (2, 3, 4, 2) and pair.last_rows[1, 2, 3, 0] == b[2, 3, -1, 1]
