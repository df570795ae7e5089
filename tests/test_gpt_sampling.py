"""Sampling from logits (temperature, top-k, top-p, seeded draws, entropy) against a naive loop written here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.gpt.sampling import entropy_nats, sample_token, sampling_probs
from tests.hypothesis_budget import examples


def naive_probs(logits, temperature, top_k, top_p):
    """The same rule, one Python step at a time: softmax with math.exp, sort by (-p, id), keep k, keep until p."""
    scaled = [x / temperature for x in logits]
    peak = max(scaled)
    weights = [math.exp(x - peak) for x in scaled]
    total = sum(weights)
    probs = [w / total for w in weights]
    ranked = sorted(range(len(probs)), key=lambda i: (-probs[i], i))
    kept = ranked[:top_k] if top_k is not None else ranked
    if top_p is not None:
        mass = sum(probs[i] for i in kept)
        running, nucleus = 0.0, []
        for i in kept:
            nucleus.append(i)
            running += probs[i] / mass
            if running >= top_p - 1e-12:
                break
        kept = nucleus
    out = [0.0] * len(probs)
    mass = sum(probs[i] for i in kept)
    for i in kept:
        out[i] = probs[i] / mass
    return out


# at least 0.01 apart: which token a cut keeps is then defined without ties, after any temperature up to 5
logit_rows = st.lists(st.integers(-2000, 2000), min_size=2, max_size=60, unique=True).map(
    lambda xs: [x / 100 for x in xs])


@settings(max_examples=examples(300), deadline=None)
@given(logit_rows, st.floats(0.05, 5), st.none() | st.integers(1, 70), st.none() | st.floats(0.01, 1.0))
def test_probabilities_match_the_naive_rule(logits, temperature, top_k, top_p):
    expected = naive_probs(logits, temperature, top_k, top_p)
    got = sampling_probs(np.array(logits), temperature, top_k, top_p)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    assert got.sum() == pytest.approx(1.0)


@settings(max_examples=examples(200), deadline=None)
@given(logit_rows, st.integers(1, 60))
def test_top_k_keeps_exactly_k(logits, k):
    probs = sampling_probs(np.array(logits), 1.0, top_k=k)
    kept = np.flatnonzero(probs)
    assert len(kept) == min(k, len(logits))
    assert set(kept) == set(np.argsort(logits)[::-1][:k])


@settings(max_examples=examples(200), deadline=None)
@given(logit_rows, st.floats(0.01, 0.99))
def test_top_p_keeps_the_smallest_set_reaching_p(logits, p):
    full = sampling_probs(np.array(logits), 1.0)
    kept = sampling_probs(np.array(logits), 1.0, top_p=p) > 0
    assert full[kept].sum() >= p - 1e-9
    assert full[kept].sum() - full[kept].min() < p + 1e-9  # without its least likely token it falls short
    assert full[kept].min() >= full[~kept].max(initial=0)  # the most likely ones


def test_temperature_zero_is_the_argmax():
    logits = np.array([0.1, 3.0, 2.9, -1.0])
    for temperature in (0.0, 1e-9):
        probs = sampling_probs(logits, temperature)
        assert probs.tolist() == [0.0, 1.0, 0.0, 0.0]
        assert {sample_token(logits, temperature=temperature, seed=s) for s in range(20)} == {1}
    assert sampling_probs(logits, 1e-3)[1] == pytest.approx(1.0)  # the limit is continuous


def test_draws_are_seeded_and_follow_the_probabilities():
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    assert [sample_token(logits, seed=s) for s in range(50)] == [sample_token(logits, seed=s) for s in range(50)]
    draws = np.array([sample_token(logits, seed=s) for s in range(4000)])
    counts = np.bincount(draws, minlength=4) / 4000
    np.testing.assert_allclose(counts, [0.5, 0.3, 0.15, 0.05], atol=0.03)  # 4 sigma at n = 4000
    assert set(draws[:200]) == {0, 1, 2, 3}
    assert {sample_token(logits, top_k=2, seed=s) for s in range(200)} == {0, 1}


def test_entropy_in_nats():
    assert entropy_nats(np.eye(5)[2]) == 0.0
    assert entropy_nats(np.full(8, 1 / 8)) == pytest.approx(math.log(8))
    assert entropy_nats([0.5, 0.5, 0.0]) == pytest.approx(math.log(2))


def test_higher_temperature_spreads_the_distribution():
    logits = np.array([2.0, 1.0, 0.5, -1.0, -3.0])
    entropies = [entropy_nats(sampling_probs(logits, t)) for t in (0.25, 0.5, 1.0, 2.0, 8.0)]
    assert entropies == sorted(entropies) and entropies[-1] < math.log(5)


@pytest.mark.parametrize("bad", [{"temperature": -1}, {"temperature": float("nan")}, {"top_k": 0},
                                 {"top_p": 0.0}, {"top_p": 1.5}])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ValueError):
        sampling_probs(np.array([1.0, 2.0]), **bad)
