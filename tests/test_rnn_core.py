"""The RNN-bottleneck core against independent references: naive loops, finite differences, scikit-learn, identities."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score as sk_r2_score

from attention_core.rnn import (
    ElmanWeights,
    attention_input_jacobians,
    attention_last_output,
    attention_weights_for,
    elman_weights,
    influence_profile,
    path_lengths,
    rnn_states,
    rnn_states_after,
    scale_to_spectral_radius,
    sequential_steps,
    spectral_norms,
    spectral_radius,
)
from attention_core.rnn_probe import first_word_recall_attention, memory_probe, r2_score, ridge_fit
from tests.hypothesis_budget import examples
from tests.reference_rnn import input_jacobians


def naive_rnn(X, w: ElmanWeights):
    """One sentence (T, d_in) through the recurrence with Python loops and math.tanh: the formula as written."""
    T, d_in = X.shape
    hidden = w.W_h.shape[0]
    h = [0.0] * hidden
    out = []
    for t in range(T):
        new = []
        for i in range(hidden):
            s = w.b[i]
            s += sum(w.W_x[i, j] * X[t, j] for j in range(d_in))
            s += sum(w.W_h[i, j] * h[j] for j in range(hidden))
            new.append(math.tanh(s))
        h = new
        out.append(h)
    return np.array(out)


def central_difference_jacobian(f, X, t, eps=1e-6):
    """d f(X) / d X[t] by central differences, one input coordinate at a time: (out_dim, d_in)."""
    cols = []
    for j in range(X.shape[1]):
        plus, minus = X.copy(), X.copy()
        plus[t, j] += eps
        minus[t, j] -= eps
        cols.append((f(plus) - f(minus)) / (2 * eps))
    return np.stack(cols, axis=1)


def rel_error(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


# --- forward pass -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("T, d_in, hidden, radius", [(1, 3, 1, 0.5), (5, 4, 6, 0.9), (8, 7, 3, 2.0)])
def test_forward_matches_naive_loop(T, d_in, hidden, radius):
    rng = np.random.default_rng(T * 100 + hidden)
    X = rng.normal(size=(T, d_in))
    w = elman_weights(d_in, hidden, radius, seed=3)
    np.testing.assert_allclose(rnn_states(X, w), naive_rnn(X, w), rtol=1e-12, atol=1e-14)


def test_forward_batches_are_independent_sentences():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2, 3, 6, 4))
    w = elman_weights(4, 5, 1.1, seed=2)
    H = rnn_states(X, w)
    assert H.shape == (2, 3, 6, 5)
    for a in range(2):
        for c in range(3):
            np.testing.assert_allclose(H[a, c], naive_rnn(X[a, c], w), rtol=1e-12, atol=1e-14)


def test_states_after_match_the_full_run():
    X = np.random.default_rng(9).normal(size=(7, 12, 3))
    w = elman_weights(3, 5, 0.9, seed=4)
    H = rnn_states(X, w)
    got = list(rnn_states_after(X, w, [1, 4, 12]))
    assert [L for L, _ in got] == [1, 4, 12]
    for L, h in got:
        np.testing.assert_allclose(h, H[:, L - 1], rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError):
        list(rnn_states_after(X, w, [4, 1]))
    with pytest.raises(ValueError):
        list(rnn_states_after(X, w, [13]))


def test_forward_rejects_wrong_width():
    w = elman_weights(4, 3, 0.9, seed=0)
    with pytest.raises(ValueError, match="features"):
        rnn_states(np.zeros((2, 5)), w)


# --- spectral radius ----------------------------------------------------------------------------------------------

@settings(max_examples=examples(40), deadline=None)
@given(n=st.integers(1, 40), radius=st.floats(0.05, 3.0), seed=st.integers(0, 2**31 - 1))
def test_spectral_radius_scaling_is_exact(n, radius, seed):
    W = np.random.default_rng(seed).normal(size=(n, n))
    scaled = scale_to_spectral_radius(W, radius)
    assert math.isclose(spectral_radius(scaled), radius, rel_tol=1e-10)
    # a pure rescaling: same direction, only the size changes
    np.testing.assert_allclose(scaled / radius, W / spectral_radius(W), rtol=1e-12, atol=1e-14)


def test_spectral_radius_of_a_2x2_against_the_closed_form():
    W = np.array([[0.0, -2.0], [1.0, 0.0]])  # eigenvalues +-i sqrt(2): radius sqrt(2), complex pair
    assert math.isclose(spectral_radius(W), math.sqrt(2.0), rel_tol=1e-14)
    a, b, c, d = 1.0, 2.0, 3.0, 4.0  # eigenvalues (5 +- sqrt(33)) / 2
    assert math.isclose(spectral_radius([[a, b], [c, d]]), (5 + math.sqrt(33)) / 2, rel_tol=1e-14)


@pytest.mark.parametrize("hidden, radius", [(1, 0.1), (16, 0.9), (256, 2.0)])
def test_elman_weights_have_the_requested_radius(hidden, radius):
    w = elman_weights(50, hidden, radius, seed=7)
    assert w.W_x.shape == (hidden, 50) and w.W_h.shape == (hidden, hidden) and w.b.shape == (hidden,)
    assert math.isclose(spectral_radius(w.W_h), radius, rel_tol=1e-10)


def test_scaling_rejects_impossible_requests():
    with pytest.raises(ValueError):
        scale_to_spectral_radius(np.eye(3), 0.0)
    with pytest.raises(ValueError):
        scale_to_spectral_radius(np.eye(3), float("nan"))
    with pytest.raises(ValueError, match="nilpotent"):
        scale_to_spectral_radius(np.array([[0.0, 1.0], [0.0, 0.0]]), 1.0)


def test_weights_are_seeded():
    a, b = elman_weights(5, 4, 0.9, seed=11), elman_weights(5, 4, 0.9, seed=11)
    c = elman_weights(5, 4, 0.9, seed=12)
    np.testing.assert_array_equal(a.W_h, b.W_h)
    assert not np.allclose(a.W_h, c.W_h)
    with pytest.raises(ValueError, match="seed"):
        elman_weights(5, 4, 0.9, seed=None)


# --- Jacobians ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("T, d_in, hidden, radius", [(1, 4, 3, 0.9), (2, 3, 1, 0.5), (7, 5, 6, 0.9), (9, 4, 8, 2.0)])
def test_rnn_jacobian_matches_central_differences(T, d_in, hidden, radius):
    rng = np.random.default_rng(T + 10 * hidden)
    X = 0.7 * rng.normal(size=(T, d_in))
    w = elman_weights(d_in, hidden, radius, seed=T)
    J = input_jacobians(X, w)  # the reference written out as in the formula
    assert J.shape == (T, hidden, d_in)
    last_state = lambda Z: rnn_states(Z, w)[-1]  # noqa: E731
    for t in range(T):
        numeric = central_difference_jacobian(last_state, X, t)
        if np.linalg.norm(numeric) > 1e-6:  # tiny entries are below what differences can resolve
            assert rel_error(J[t], numeric) < 1e-6, (t, rel_error(J[t], numeric))
        else:
            np.testing.assert_allclose(J[t], numeric, atol=1e-9)


@pytest.mark.parametrize("T, d_in, d_k", [(1, 4, 3), (2, 3, 2), (6, 5, 4)])
def test_attention_jacobian_matches_central_differences(T, d_in, d_k):
    rng = np.random.default_rng(T * 7 + d_k)
    X = rng.normal(size=(T, d_in))
    att = attention_weights_for(d_in, d_k, seed=T)
    J = attention_input_jacobians(X, att)
    assert J.shape == (T, d_k, d_in)
    for t in range(T):
        numeric = central_difference_jacobian(lambda Z: attention_last_output(Z, att), X, t)
        assert rel_error(J[t], numeric) < 1e-6, (t, rel_error(J[t], numeric))


def test_attention_reaches_every_copy_of_a_word_equally():
    """A sentence of one repeated word: uniform weights, so every earlier position gets the same Jacobian."""
    x = np.random.default_rng(3).normal(size=5)
    X = np.tile(x, (12, 1))
    norms = spectral_norms(attention_input_jacobians(X, attention_weights_for(5, 4, seed=1)))
    np.testing.assert_allclose(norms[:-1], norms[0], rtol=1e-12)


def test_spectral_norms_are_largest_singular_values():
    J = np.random.default_rng(2).normal(size=(4, 3, 5))
    expected = [np.linalg.svd(m, compute_uv=False)[0] for m in J]
    np.testing.assert_allclose(spectral_norms(J), expected, rtol=1e-12)


# --- profile, steps -----------------------------------------------------------------------------------------------

def test_path_lengths_and_sequential_steps():
    rnn, att = path_lengths(4)
    np.testing.assert_array_equal(rnn, [4, 3, 2, 1])
    np.testing.assert_array_equal(att, [1, 1, 1, 1])
    assert sequential_steps(7) == {"rnn": 7, "attention": 1, "pairs": 49}
    with pytest.raises(ValueError):
        path_lengths(0)


@pytest.mark.parametrize("hidden", [1, 256])
@pytest.mark.parametrize("radius", [0.1, 2.0])
@pytest.mark.parametrize("seed", [0, 2**31 - 1])
@pytest.mark.parametrize("T", [1, 40])
def test_profile_is_finite_at_the_extremes(hidden, radius, seed, T):
    X = 0.7 * np.random.default_rng(seed).normal(size=(T, 50))
    p = influence_profile(X, hidden, radius, seed)
    for values in (p.rnn_norm, p.attention_norm):
        assert values.shape == (T,)
        assert np.all(np.isfinite(values)) and np.all(values > 0)


def test_early_words_fade_for_the_rnn_but_not_for_attention(glove):
    from attention_core.glove import embed
    from attention_core.sentences import load_sentences
    from attention_core.text import tokenize

    text = next(s.text for s in load_sentences() if s.id == "long_memory")
    X, unknown = embed(tokenize(text), glove)
    assert not unknown
    X = X[:30]
    for hidden in (8, 32, 128):
        for seed in range(10):
            p = influence_profile(X, hidden, 0.9, seed)
            # the page's predict-then-reveal answer: "less than a hundredth as strongly"
            assert p.rnn_norm[0] / p.rnn_norm[-1] < 1e-2
            assert p.attention_norm[0] / p.attention_norm[-1] > 1e-2
            assert p.attention_norm.min() / p.attention_norm.max() > 1e-2


# --- ridge, R^2, memory probe -------------------------------------------------------------------------------------

def test_ridge_fit_matches_scikit_learn():
    rng = np.random.default_rng(4)
    F, Y = rng.normal(size=(60, 7)), rng.normal(size=(60, 3))
    W, c = ridge_fit(F, Y, alpha=2.5)
    ref = Ridge(alpha=2.5, fit_intercept=True, solver="cholesky").fit(F, Y)
    np.testing.assert_allclose(W, ref.coef_.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(c[0], ref.intercept_, rtol=1e-10, atol=1e-12)
    batched, _ = ridge_fit(np.stack([F, 2 * F]), np.stack([Y, Y]), alpha=2.5)
    np.testing.assert_allclose(batched[0], W, rtol=1e-12)


def test_r2_score_matches_scikit_learn():
    rng = np.random.default_rng(6)
    Y = rng.normal(size=(40, 5)) * [1, 2, 3, 4, 5]
    Y_hat = Y + rng.normal(size=Y.shape)
    expected = sk_r2_score(Y, Y_hat, multioutput="variance_weighted")
    assert math.isclose(float(r2_score(Y, Y_hat)), expected, rel_tol=1e-12)


def test_attention_recall_is_exact():
    X = np.random.default_rng(8).normal(size=(50, 40, 8))
    for T in (1, 2, 40):
        assert first_word_recall_attention(X[:, :T]) > 1 - 1e-12


@pytest.mark.parametrize("radius", [0.5, 0.9])
def test_probe_r2_falls_with_length(radius):
    probe = memory_probe(np.arange(1, 31), (8, 32), radius, seed=0, n_train=1500, n_test=300)
    r2 = probe.rnn_r2
    assert r2.shape == (2, 30)
    assert np.all(np.isfinite(r2))
    assert np.all(r2[:, 0] > 0.5), r2[:, 0]  # one word: the state still holds it
    assert np.all(r2[:, -1] < 0.05), r2[:, -1]  # thirty words: nothing is left
    # falls (allowing small noise around zero once the word is gone)
    assert np.all(np.diff(r2, axis=1) < 0.02)
    assert r2[1, 1] > r2[0, 1]  # a bigger state remembers longer
    np.testing.assert_allclose(probe.attention_r2, 1.0, atol=1e-12)


def test_probe_is_seeded():
    a = memory_probe([1, 3], (4,), 0.9, seed=1, n_train=200, n_test=50)
    b = memory_probe([1, 3], (4,), 0.9, seed=1, n_train=200, n_test=50)
    c = memory_probe([1, 3], (4,), 0.9, seed=2, n_train=200, n_test=50)
    np.testing.assert_array_equal(a.rnn_r2, b.rnn_r2)
    assert not np.allclose(a.rnn_r2, c.rnn_r2)
    with pytest.raises(ValueError):
        memory_probe([], (4,), 0.9, seed=1)
