"""attention_core.transformer against independent references: naive loops, the permutation identity, the closed
formula of the sinusoidal encoding, layer norm's mean 0 / variance 1 rows, and the feed-forward layer's locality."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.causal import RANDOM_DIM, random_word_vectors, replacement_vector
from attention_core.transformer import (
    FFN_FACTOR, LN_EPS, STEPS, block_weights, feed_forward, gelu, layer_norm, locality_check, permutation_check, relu,
    row_stats, seeded_permutation, self_attention, sinusoidal_encoding, transformer_block,
)
from tests.hypothesis_budget import examples

DEFAULT_TOKENS = "the cat sat on the warm mat".split()  # lessons/transformer.py DEFAULT_TEXT


def naive_attention(X, projections):
    """Loops over queries and keys, math.exp: an independent softmax(Q K^T / sqrt(d)) V."""
    W_q, W_k, W_v = (np.asarray(W) for W in projections)
    n, d = X.shape
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    out = np.zeros((n, V.shape[1]))
    for i in range(n):
        scores = [sum(Q[i, a] * K[j, a] for a in range(d)) / math.sqrt(d) for j in range(n)]
        top = max(scores)
        e = [math.exp(s - top) for s in scores]
        total = sum(e)
        for j in range(n):
            out[i] += e[j] / total * V[j]
    return out


def naive_layer_norm(row, eps=LN_EPS):
    m = sum(row) / len(row)
    v = sum((x - m) ** 2 for x in row) / len(row)
    return [(x - m) / math.sqrt(v + eps) for x in row]


def test_sinusoidal_encoding_matches_the_closed_formula():
    n, d = 9, 12
    pe = sinusoidal_encoding(n, d)
    assert pe.shape == (n, d)
    for pos in range(n):
        for i in range(d // 2):
            angle = pos / 10000 ** (2 * i / d)
            assert pe[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-14)
            assert pe[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-14)
    assert pe[1, 0] == pytest.approx(math.sin(1)) and pe[1, 1] == pytest.approx(math.cos(1))


def test_sinusoidal_encoding_odd_d_and_distinct_rows():
    pe = sinusoidal_encoding(40, 7)
    assert pe[3, 6] == pytest.approx(math.sin(3 / 10000 ** (6 / 7)))
    assert np.all(np.abs(pe) <= 1)
    distances = np.abs(pe[:, None, :] - pe[None, :, :]).max(axis=-1) + np.eye(40)
    assert distances.min() > 1e-3  # every position its own pattern


def test_self_attention_matches_naive_loops():
    X = random_word_vectors(DEFAULT_TOKENS, 6, 3)
    W = block_weights(6, 1).attention
    np.testing.assert_allclose(self_attention(X, W), naive_attention(X, W), atol=1e-12)


@settings(max_examples=examples(40), deadline=None, derandomize=True)
@given(n=st.integers(1, 12), d=st.integers(1, 10), seed=st.integers(0, 2**31 - 1), perm_seed=st.integers(0, 10**6))
def test_permutation_identity_without_pe(n, d, seed, perm_seed):
    """Attn(P X) == P Attn(X) up to float rounding, for any X, weights and permutation."""
    X = np.random.default_rng(seed).normal(size=(n, d))
    W = block_weights(d, seed).attention
    perm = seeded_permutation(n, perm_seed)
    np.testing.assert_allclose(self_attention(X[perm], W), self_attention(X, W)[perm], atol=1e-12)
    check = permutation_check(X, perm, W)
    assert check.max_difference["plain"] < 1e-12
    assert check.tokens_changed("plain") == 0


@settings(max_examples=examples(40), deadline=None, derandomize=True)
@given(n=st.integers(0, 50), seed=st.integers(0, 10**6))
def test_seeded_permutation_is_a_permutation_that_moves_something(n, seed):
    perm = seeded_permutation(n, seed)
    assert sorted(perm.tolist()) == list(range(n))
    if n > 1:
        assert not np.array_equal(perm, np.arange(n))
    np.testing.assert_array_equal(perm, seeded_permutation(n, seed))


def test_positional_encoding_breaks_the_identity_at_the_defaults():
    """The page's claims at its defaults (GloVe off here: seeded random vectors, seeds 0): without PE nothing but
    rounding; with PE every token's output changes."""
    X = random_word_vectors(DEFAULT_TOKENS, RANDOM_DIM, 0)
    check = permutation_check(X, seeded_permutation(len(X), 0), block_weights(RANDOM_DIM, 0).attention)
    assert check.max_difference["plain"] < 1e-12
    assert check.max_difference["positional"] > 0.05
    assert check.tokens_changed("positional") == len(X)


def test_positional_check_against_a_direct_computation():
    X = random_word_vectors(DEFAULT_TOKENS, 8, 2)
    W = block_weights(8, 5).attention
    perm = seeded_permutation(len(X), 4)
    pe = sinusoidal_encoding(*X.shape)
    direct = np.abs(naive_attention(X[perm] + pe, W) - naive_attention(X + pe, W)[perm]).max(axis=1)
    np.testing.assert_allclose(permutation_check(X, perm, W).row_change["positional"], direct, atol=1e-12)


def test_repeated_word_gets_the_same_output_without_pe_only():
    """The "what to try" claim: "the dog saw the dog" - the two copies match (up to rounding) without PE, not with it."""
    tokens = "the dog saw the dog".split()
    X = random_word_vectors(tokens, RANDOM_DIM, 0)
    W = block_weights(RANDOM_DIM, 0)
    plain = self_attention(X, W.attention)
    np.testing.assert_allclose(plain[1], plain[4], rtol=0, atol=1e-12)  # the same up to float rounding
    with_pe = transformer_block(X, W)
    assert np.abs(with_pe["attention"][1] - with_pe["attention"][4]).max() > 1e-3
    assert np.abs(with_pe["add_norm_2"][1] - with_pe["add_norm_2"][4]).max() > 1e-3


def test_repeated_word_rows_differ_in_the_output_with_glove(glove):
    from attention_core.glove import embed

    X, _ = embed("the dog saw the dog".split(), glove)
    W = block_weights(X.shape[1], 0)
    for act in ("relu", "gelu"):
        Y = transformer_block(X, W, act)["add_norm_2"]
        assert np.abs(Y[1] - Y[4]).max() > 1e-2
    plain = self_attention(X, W.attention)
    np.testing.assert_allclose(plain[1], plain[4], rtol=0, atol=1e-12)


@settings(max_examples=examples(40), deadline=None, derandomize=True)
@given(n=st.integers(1, 10), d=st.integers(2, 20), seed=st.integers(0, 10**6), shift=st.floats(-1e3, 1e3))
def test_layer_norm_rows_have_mean_0_and_variance_1(n, d, seed, shift):
    X = np.random.default_rng(seed).normal(size=(n, d)) * 3 + shift
    Y = layer_norm(X)
    np.testing.assert_allclose(Y.mean(axis=1), 0, atol=1e-9)
    var = X.var(axis=1)
    np.testing.assert_allclose(Y.var(axis=1), var / (var + LN_EPS), rtol=1e-9)
    assert np.all(np.abs(Y.var(axis=1) - 1) < 1e-3)
    for i in range(n):
        np.testing.assert_allclose(Y[i], naive_layer_norm(X[i].tolist()), atol=1e-9)


def test_activations_against_formulas():
    xs = np.linspace(-5, 5, 41)
    np.testing.assert_array_equal(relu(xs), [max(x, 0.0) for x in xs])
    tanh_form = [0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))) for x in xs]
    np.testing.assert_allclose(gelu(xs), tanh_form, atol=1e-14)
    exact = [0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in xs]  # the tanh form is a close approximation
    np.testing.assert_allclose(gelu(xs), exact, atol=1e-3)


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_feed_forward_matches_a_loop_over_positions(activation):
    d = 5
    W = block_weights(d, 7)
    assert W.W1.shape == (d, FFN_FACTOR * d) and W.W2.shape == (FFN_FACTOR * d, d)
    H = np.random.default_rng(1).normal(size=(6, d))
    act = {"relu": lambda v: max(v, 0.0),
           "gelu": lambda v: 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))}[activation]
    expected = np.zeros_like(H)
    for i in range(len(H)):  # one position at a time: nothing from other rows
        hidden = [act(sum(H[i, a] * W.W1[a, k] for a in range(d)) + W.b1[k]) for k in range(FFN_FACTOR * d)]
        expected[i] = [sum(hidden[k] * W.W2[k, b] for k in range(FFN_FACTOR * d)) + W.b2[b] for b in range(d)]
    np.testing.assert_allclose(feed_forward(H, W, activation), expected, atol=1e-12)


@settings(max_examples=examples(30), deadline=None, derandomize=True)
@given(n=st.integers(1, 10), j=st.integers(0, 9), seed=st.integers(0, 10**6), act=st.sampled_from(["relu", "gelu"]))
def test_changing_token_j_changes_only_ffn_row_j(n, j, seed, act):
    j = j % n
    d = 8
    W = block_weights(d, seed)
    H = np.random.default_rng(seed).normal(size=(n, d))
    check = locality_check(H, j, replacement_vector(H, seed), W, act)
    others = np.delete(check.row_change["ffn"], j)
    assert np.all(others == 0.0)  # exactly, not just nearly
    assert check.others_max("ffn") == 0.0


def test_page_claims_at_the_defaults_with_glove(glove):
    """The page's default: GloVe on, seed 0, shuffle seed 0, token (n + 1) // 2."""
    from attention_core.glove import embed

    X, unknown = embed(DEFAULT_TOKENS, glove)
    assert unknown == []
    W = block_weights(X.shape[1], 0)
    check = permutation_check(X, seeded_permutation(len(X), 0), W.attention)
    assert check.max_difference["plain"] < 1e-12 and check.tokens_changed("plain") == 0
    assert check.max_difference["positional"] > 0.05 and check.tokens_changed("positional") == len(X)
    j = (len(X) + 1) // 2 - 1
    for act in ("relu", "gelu"):
        steps = transformer_block(X, W, act)
        local = locality_check(steps["add_norm_1"], j, replacement_vector(steps["add_norm_1"], 0), W, act)
        assert local.rows_changed("ffn") == 1 and local.others_max("ffn") == 0.0
        assert local.rows_changed("attention") == len(X)
        for step in ("add_norm_1", "add_norm_2"):
            stats = row_stats(steps[step])
            assert stats["max_abs_mean"] < 1e-12 and 1 - 1e-3 < stats["var_min"] <= stats["var_max"] < 1


def test_locality_at_the_defaults():
    """The page's sentence at its defaults: the FFN changes 1 row of n, attention all n rows."""
    X = random_word_vectors(DEFAULT_TOKENS, RANDOM_DIM, 0)
    W = block_weights(RANDOM_DIM, 0)
    n = len(X)
    j = (n + 1) // 2 - 1
    for act in ("relu", "gelu"):
        H = transformer_block(X, W, act)["add_norm_1"]
        check = locality_check(H, j, replacement_vector(H, 0), W, act)
        assert check.rows_changed("ffn") == 1
        assert check.rows_changed("attention") == n


def test_block_steps_shapes_and_composition():
    X = random_word_vectors(DEFAULT_TOKENS, RANDOM_DIM, 0)
    n, d = X.shape
    W = block_weights(d, 0)
    steps = transformer_block(X, W, "gelu")
    assert list(steps) == list(STEPS)
    assert {k: v.shape for k, v in steps.items()} == {**{k: (n, d) for k in STEPS}, "ffn_hidden": (n, FFN_FACTOR * d)}
    Z = X + sinusoidal_encoding(n, d)
    np.testing.assert_allclose(steps["with_pe"], Z)
    A = naive_attention(Z, W.attention)
    np.testing.assert_allclose(steps["attention"], A, atol=1e-12)
    H = np.array([naive_layer_norm(r) for r in (Z + A).tolist()])
    np.testing.assert_allclose(steps["add_norm_1"], H, atol=1e-9)
    Y = np.array([naive_layer_norm(r) for r in (H + feed_forward(H, W, "gelu")).tolist()])
    np.testing.assert_allclose(steps["add_norm_2"], Y, atol=1e-9)
    stats = row_stats(steps["add_norm_2"])
    assert stats["max_abs_mean"] < 1e-12 and 1 - 1e-3 < stats["var_min"] <= stats["var_max"] < 1
    np.testing.assert_allclose(transformer_block(X, W, positional=False)["with_pe"], X)


def test_weights_are_seeded():
    a, b, c = block_weights(6, 3), block_weights(6, 3), block_weights(6, 4)
    np.testing.assert_array_equal(a.W1, b.W1)
    assert not np.allclose(a.W1, c.W1)
    assert np.all(a.b1 == 0) and np.all(a.b2 == 0)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        sinusoidal_encoding(3, 0)
    with pytest.raises(ValueError):
        locality_check(np.zeros((3, 4)), 3, np.zeros(4), block_weights(4, 0))


@pytest.mark.parametrize("d", [RANDOM_DIM, 50])
def test_last_columns_change_slowly(d):
    """pe_caption: the last columns have very long wavelengths and change slowly (over the page's 40 tokens)."""
    pe = sinusoidal_encoding(40, d)
    spread = pe.max(axis=0) - pe.min(axis=0)
    assert spread[-1] < 0.1 < 1.5 < spread[0]
