"""The core never turns a reachable input into inf or NaN: property tests over the extremes the pages allow.

Every setting a page offers is covered at its ends and in between (d up to 1024 unscaled with temperature 0.05,
spectral radius 2 with 256 hidden units, query sliders at +-3 with temperature 0.05, the largest training
setting), plus inputs far beyond them (scores up to +-1e6, vectors a thousand times GloVe's size).
Where an input has no meaningful answer (a fully masked row, NaN scores) the core raises a ValueError that
says so; it never returns NaN.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_core.attention import (
    MAX_SEED, attention_weights, causal_mask, entropy, scaled_dot_product_attention, softmax,
)
from attention_core.causal import (
    causal_vs_bidirectional, generation_frames, leak_test, mask_facts, random_word_vectors, replacement_vector,
)
from attention_core.glove.rows import direction_ranks, projected_row, rank_counts, rank_summary, raw_row
from attention_core.qkv import lookup, output_path, temperature_sweep, zero_temperature_output
from attention_core.pca import pca_3d
from attention_core.rnn import influence_profile
from attention_core.scaling import (
    DIM_CHOICES, KEY_RANGE, TEMPERATURE_CHOICES, density_histogram, logit_variance, normal_curve, prefix_weights,
    random_query_keys, row_summary, score_sample,
)
from attention_core.self_attention import lines_to_keep
from attention_core.text import tokenize
from attention_core.glove.training import TrainSetting, pack_batch, sentence_row, train_head
from tests.hypothesis_budget import examples

SETTINGS = settings(max_examples=examples(60), deadline=None, derandomize=True)
SLOW = settings(max_examples=examples(15), deadline=None, derandomize=True)

seeds = st.integers(0, MAX_SEED)  # every seed a page accepts
finite_scores = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
temperatures = st.floats(1e-3, 1e3)


def assert_probability_rows(w, axis: int = -1) -> None:
    w = np.asarray(w)
    assert np.isfinite(w).all()
    assert (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=axis), 1.0, atol=1e-9)


# --- softmax and attention ------------------------------------------------------------------------------------


@SETTINGS
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 40)), elements=finite_scores), temperatures)
def test_softmax_of_any_finite_scores_is_a_probability_row(x, tau):
    assert_probability_rows(softmax(x, temperature=tau))


@SETTINGS
@given(arrays(np.float64, st.integers(2, 40), elements=finite_scores), st.data())
def test_masked_entries_get_exactly_zero_and_a_fully_masked_row_is_an_error(x, data):
    masked = data.draw(arrays(bool, x.shape))
    masked[data.draw(st.integers(0, x.size - 1))] = False  # at least one key stays visible
    w = softmax(np.where(masked, -np.inf, x))
    assert_probability_rows(w)
    assert (w[masked] == 0.0).all()
    with pytest.raises(ValueError, match="all -inf"):
        softmax(np.full_like(x, -np.inf))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_plus_inf_scores_are_an_error_not_nan(bad):
    with pytest.raises(ValueError):
        softmax(np.array([0.0, bad, 1.0]))


@pytest.mark.parametrize("tau", [0.0, -1.0, np.inf, np.nan])
def test_a_temperature_outside_the_positive_numbers_is_an_error(tau):
    with pytest.raises(ValueError):
        softmax(np.zeros(3), temperature=tau)


@SETTINGS
@given(seeds, st.sampled_from(DIM_CHOICES), st.integers(*KEY_RANGE), st.sampled_from(TEMPERATURE_CHOICES),
       st.booleans(), st.floats(1e-3, 1e3))
def test_attention_at_every_d_temperature_and_size(seed, d, n, tau, scale, size):
    """d = 1024 unscaled at temperature 0.05 gives logits of sd ~ 640 (x size): still finite weights."""
    rng = np.random.default_rng(seed)
    Q, K, V = (size * rng.standard_normal((n, d)) for _ in range(3))
    out, w = scaled_dot_product_attention(Q, K, V, scale=scale, temperature=tau)
    assert_probability_rows(w)
    assert np.isfinite(out).all()
    assert np.isfinite(entropy(w)).all() and (entropy(w) >= -1e-12).all()


@SETTINGS
@given(seeds, st.integers(1, 40), st.integers(1, 64), st.floats(1e-3, 1e3))
def test_causal_attention_of_any_length_and_size(seed, n, d, size):
    rng = np.random.default_rng(seed)
    Q, K = size * rng.standard_normal((2, n, d))
    w = attention_weights(Q, K, mask=causal_mask(n))
    assert_probability_rows(w)
    assert (np.triu(w, k=1) == 0).all()


# --- lesson 4: scaling ------------------------------------------------------------------------------------------


@SETTINGS
@given(seeds, st.sampled_from(DIM_CHOICES), st.integers(*KEY_RANGE), st.sampled_from(TEMPERATURE_CHOICES), st.booleans())
def test_scaling_page_numbers_are_finite_everywhere(seed, d, n_keys, tau, scale):
    z = score_sample(d, n_keys, seed, scale, tau, n_scores=256)
    assert np.isfinite(z).all()
    edges, density, counts = density_histogram(z)
    assert np.isfinite(edges).all() and np.isfinite(density).all() and counts.sum() == z.size
    x, y = normal_curve(edges[0], edges[-1], logit_variance(d, scale, tau))
    assert np.isfinite(x).all() and np.isfinite(y).all()
    q, K = random_query_keys(n_keys, seed)
    weights = prefix_weights(q, K, DIM_CHOICES, scale, tau)
    assert_probability_rows(weights)
    for name, values in row_summary(weights).items():
        assert np.isfinite(values).all() and (values >= 0).all(), name


def test_one_hot_rows_have_zero_jacobian_not_nan():
    summary = row_summary(np.eye(5))
    assert (summary["jacobian"] == 0).all() and (summary["entropy"] == 0).all()


# --- lesson 2: the library --------------------------------------------------------------------------------------


@SETTINGS
@given(arrays(np.float64, 4, elements=st.floats(-3, 3)), st.floats(0.05, 20.0), st.data())
def test_library_lookup_at_every_slider_and_temperature(query, tau, data):
    keys = data.draw(arrays(np.float64, (4, 4), elements=st.floats(-3, 3)))
    values = data.draw(arrays(np.float64, (4, 3), elements=st.floats(0, 255)))
    found = lookup(query, keys, values, tau)
    assert_probability_rows(found.weights)
    assert np.isfinite(found.output).all() and np.isfinite(found.scores).all()
    path = output_path(query, keys, values, temperature_sweep(0.05, 20.0))
    assert np.isfinite(path).all()
    assert np.isfinite(zero_temperature_output(query, keys, values)).all()


# --- lesson 1: the RNN ---------------------------------------------------------------------------------------------


@SLOW
@given(seeds, st.integers(1, 40), st.sampled_from([1, 2, 32, 256]), st.floats(0.1, 2.0), st.floats(1e-2, 1e2))
def test_rnn_influence_is_finite_at_every_radius_and_size(seed, n, hidden, radius, size):
    X = size * np.random.default_rng(seed).standard_normal((n, 50))
    profile = influence_profile(X, hidden, radius, seed)
    for values in (profile.rnn_norm, profile.attention_norm):
        assert np.isfinite(values).all() and (values >= 0).all()


# --- lesson 5: the causal mask -------------------------------------------------------------------------------------


@SETTINGS
@given(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=40), seeds, st.floats(1e-3, 1e3), st.data())
def test_causal_lesson_numbers_are_finite(tokens, seed, size, data):
    X = size * random_word_vectors(tokens, 16, seed)
    res = causal_vs_bidirectional(X, seed)
    for mode in res.values():
        assert_probability_rows(mode.weights)
        assert np.isfinite(mode.output).all()
    facts = mask_facts(res)
    assert all(v is None or np.isfinite(v) for v in facts.values())
    frames = generation_frames(res["causal"].weights)
    assert np.isfinite(frames[-1][np.tril(np.ones((len(tokens),) * 2, dtype=bool))]).all()
    j = data.draw(st.integers(0, len(tokens) - 1))
    result = leak_test(X, j, replacement_vector(X, seed), seed)
    for change in result.row_change.values():
        assert np.isfinite(change).all()


# --- lesson 6: GloVe-sized vectors ---------------------------------------------------------------------------


@SETTINGS
@given(seeds, st.integers(2, 40), st.sampled_from([2, 4, 8, 16, 50, 64]), st.floats(1e-3, 1e3))
def test_glove_rows_are_finite_for_any_vectors(seed, n, d_k, size):
    X = size * np.random.default_rng(seed).standard_normal((n, 50))
    qi = seed % n
    assert_probability_rows(raw_row(X, qi))
    assert_probability_rows(projected_row(X, qi, d_k, seed))
    summary = rank_summary(rank_counts(direction_ranks(X, qi, 5, seed), n))
    assert all(np.isfinite(v) for v in summary.values())
    coords, explained = pca_3d(X)
    assert np.isfinite(coords).all() and np.isfinite(explained).all()


@pytest.mark.parametrize("n", [1, 2, 5])
def test_pca_of_repeated_words_is_zero_not_nan(n):
    coords, explained = pca_3d(np.ones((n, 50)))
    assert (coords == 0).all() and (explained == 0).all()


@SETTINGS
@given(arrays(np.float64, st.integers(1, 40), elements=st.floats(0, 1)), st.floats(0.05, 1.0))
def test_lines_to_keep_handles_zero_and_tied_weights(row, mass):
    keep = lines_to_keep(row, mass)
    assert keep.dtype == bool and keep.shape == row.shape and keep.any()


# --- lesson 6: training at its extremes ------------------------------------------------------------------------------


@SLOW
@given(seeds, st.sampled_from([2, 64]), st.sampled_from([0.003, 0.3]), st.sampled_from([0.0, 0.01]), st.booleans(),
       st.floats(1e-2, 1e2))
def test_training_stays_finite_at_the_extreme_settings(seed, d_k, lr, wd, context, size):
    rng = np.random.default_rng(seed)
    sentences = [size * rng.standard_normal((int(n), 50)) for n in rng.integers(2, 14, size=12)]
    batch = pack_batch(sentences, [0] * 12, [len(s) - 1 for s in sentences])
    result = train_head(batch, TrainSetting(d_k=d_k, learning_rate=lr, steps=40, weight_decay=wd, seed=seed,
                                            context=context))
    assert np.isfinite(result.losses).all() and (result.losses >= 0).all()
    assert np.isfinite(result.W_q).all() and np.isfinite(result.W_k).all()
    assert_probability_rows(sentence_row(result.W_q, result.W_k, sentences[0], 0, context))


def test_the_largest_training_setting_is_finite():
    rng = np.random.default_rng(0)
    sentences = [rng.standard_normal((13, 50)) for _ in range(24)]
    batch = pack_batch(sentences, [0] * 24, [5] * 24)
    result = train_head(batch, TrainSetting(d_k=64, learning_rate=0.3, steps=800, weight_decay=0.0, seed=MAX_SEED))
    assert np.isfinite(result.losses).all()


# --- text ------------------------------------------------------------------------------------------------------------


@SETTINGS
@given(st.text(max_size=300))
def test_tokenize_never_yields_blank_or_control_tokens(text):
    for token in tokenize(text):
        assert token and token.strip() == token
        assert not any(ord(ch) < 32 or ch == "\x7f" for ch in token)
