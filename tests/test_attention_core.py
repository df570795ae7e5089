"""The attention core against an independent reference: a naive loop over the formula, plus properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attention_core import (
    attention_scores,
    attention_weights,
    causal_mask,
    entropy,
    merge_heads,
    multi_head_attention,
    random_projection,
    ranks_in_rows,
    scaled_dot_product_attention,
    softmax,
    split_heads,
)
from tests.hypothesis_budget import examples


def naive_attention(Q, K, V, mask=None, scale=True, temperature=1.0):
    """Attention for one (n_q, d) / (n_k, d) slice with Python loops and math.exp: the formula as written."""
    n_q, d = Q.shape
    n_k = K.shape[0]
    weights = np.zeros((n_q, n_k))
    for i in range(n_q):
        scores = []
        for j in range(n_k):
            if mask is not None and not mask[i, j]:
                scores.append(None)
                continue
            s = sum(Q[i, c] * K[j, c] for c in range(d))
            if scale:
                s /= math.sqrt(d)
            scores.append(s / temperature)
        top = max(s for s in scores if s is not None)
        exps = [0.0 if s is None else math.exp(s - top) for s in scores]
        total = sum(exps)
        for j in range(n_k):
            weights[i, j] = exps[j] / total
    out = np.zeros((n_q, V.shape[1]))
    for i in range(n_q):
        for j in range(n_k):
            out[i] += weights[i, j] * V[j]
    return out, weights


@pytest.mark.parametrize("lead", [(), (3,), (2, 4)])
@pytest.mark.parametrize("use_mask", [False, True])
@pytest.mark.parametrize("scale", [True, False])
def test_matches_naive_loop(lead, use_mask, scale):
    rng = np.random.default_rng(hash((lead, use_mask, scale)) % 2**32)
    n_q, n_k, d, d_v = 5, 7, 6, 3
    Q = rng.normal(size=(*lead, n_q, d))
    K = rng.normal(size=(*lead, n_k, d))
    V = rng.normal(size=(*lead, n_k, d_v))
    mask = None
    if use_mask:
        mask = rng.random(size=(*lead, n_q, n_k)) < 0.6
        mask[..., 0] = True  # every query sees at least one key
    temperature = 0.7
    out, weights = scaled_dot_product_attention(Q, K, V, mask=mask, scale=scale, temperature=temperature)
    assert out.shape == (*lead, n_q, d_v) and weights.shape == (*lead, n_q, n_k)
    for idx in np.ndindex(*lead):
        m = None if mask is None else mask[idx]
        ref_out, ref_w = naive_attention(Q[idx], K[idx], V[idx], m, scale, temperature)
        np.testing.assert_allclose(weights[idx], ref_w, rtol=0, atol=1e-10)
        np.testing.assert_allclose(out[idx], ref_out, rtol=0, atol=1e-10)


def test_scores_scale_and_mask():
    Q = np.array([[1.0, 2.0, 3.0, 4.0]])
    K = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0]])
    np.testing.assert_allclose(attention_scores(Q, K, scale=False), [[1.0, 5.0]])
    np.testing.assert_allclose(attention_scores(Q, K), [[0.5, 2.5]])
    masked = attention_scores(Q, K, mask=np.array([[True, False]]))
    assert masked[0, 0] == 0.5 and np.isneginf(masked[0, 1])


def test_causal_mask_and_weights():
    m = causal_mask(4)
    assert m.dtype == bool and m.shape == (4, 4)
    assert (m == np.tril(np.ones((4, 4), bool))).all()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4, 8))
    W = attention_weights(X, X, mask=m)
    assert (W[np.triu_indices(4, 1)] == 0.0).all()
    assert W[0, 0] == 1.0 and (W[0, 1:] == 0.0).all()
    with pytest.raises(ValueError):
        causal_mask(0)


def test_softmax_rejects_fully_masked_and_bad_temperature():
    with pytest.raises(ValueError, match="all -inf"):
        softmax(np.array([[0.0, 1.0], [-np.inf, -np.inf]]))
    with pytest.raises(ValueError, match="NaN"):
        softmax(np.array([0.0, np.nan]))
    for bad in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="temperature"):
            softmax(np.array([0.0, 1.0]), temperature=bad)


def test_softmax_extreme_scores_are_finite():
    x = np.array([[1e6, -1e6, 0.0], [-1e6, -1e6 + 1, -1e6]])
    w = softmax(x)
    assert np.isfinite(w).all()
    np.testing.assert_allclose(w.sum(-1), 1.0)
    assert w[0, 0] == 1.0
    w_cold = softmax(np.array([1.0, 2.0, 3.0]), temperature=1e-300)
    assert np.isfinite(w_cold).all() and w_cold[2] == 1.0


def test_random_projection_is_seeded_glorot():
    a = random_projection(50, 16, seed=3)
    b = random_projection(50, 16, seed=np.random.default_rng(3))
    assert a.shape == (50, 16)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, random_projection(50, 16, seed=4))
    big = random_projection(400, 400, seed=0)
    assert abs(big.std() - math.sqrt(2 / 800)) < 0.002
    with pytest.raises(ValueError):
        random_projection(4, 4, seed=None)


def test_split_merge_heads_roundtrip_and_layout():
    X = np.arange(2 * 3 * 8).reshape(2, 3, 8).astype(float)
    H = split_heads(X, 4)
    assert H.shape == (2, 4, 3, 2)
    np.testing.assert_array_equal(H[1, 2, 0], X[1, 0, 4:6])  # head h takes features h*d_h..(h+1)*d_h
    np.testing.assert_array_equal(merge_heads(H), X)
    with pytest.raises(ValueError):
        split_heads(X, 3)


def test_multi_head_matches_per_head_loop():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 8))
    Wq, Wk, Wv = (rng.normal(size=(8, 8)) for _ in range(3))
    out, weights = multi_head_attention(X, Wq, Wk, Wv, n_heads=2)
    for h in range(2):
        cols = slice(4 * h, 4 * h + 4)
        ref_out, ref_w = naive_attention((X @ Wq)[:, cols], (X @ Wk)[:, cols], (X @ Wv)[:, cols])
        np.testing.assert_allclose(weights[h], ref_w, atol=1e-10)
        np.testing.assert_allclose(out[:, cols], ref_out, atol=1e-10)


def test_entropy_and_rank():
    assert entropy(np.array([1.0, 0.0, 0.0])) == 0.0
    np.testing.assert_allclose(entropy(np.full(4, 0.25)), math.log(4))
    row = np.array([0.1, 0.5, 0.2, 0.2])
    assert ranks_in_rows(row, [1, 2, 3, 0]).tolist() == [1, 2, 2, 4]
    assert ranks_in_rows(row, 1) == 1


score_rows = arrays(
    np.float64,
    st.tuples(st.integers(1, 4), st.integers(1, 9)),
    elements=st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=examples(200), deadline=None)
@given(score_rows, st.floats(1e-3, 1e3))
def test_property_rows_sum_to_one_and_finite(x, temperature):
    w = softmax(x, temperature=temperature)
    assert np.isfinite(w).all() and (w >= 0).all()
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)


@settings(max_examples=examples(200), deadline=None)
@given(score_rows, st.floats(-1e3, 1e3, allow_nan=False))
def test_property_shift_invariance(x, c):
    np.testing.assert_allclose(softmax(x + c), softmax(x), atol=1e-9)


@settings(max_examples=examples(200), deadline=None)
@given(score_rows, st.data())
def test_property_masked_entries_exactly_zero(x, data):
    mask = data.draw(arrays(bool, x.shape))
    mask[:, 0] = True
    w = softmax(np.where(mask, x, -np.inf))
    assert (w[~mask] == 0.0).all()
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)


@settings(max_examples=examples(200), deadline=None)
@given(arrays(np.float64, st.integers(2, 9), elements=st.floats(-100, 100), unique=True))
def test_property_cold_temperature_approaches_argmax(x):
    gap = np.sort(x)[-1] - np.sort(x)[-2]
    w = softmax(x, temperature=gap / 50)  # e^-50 ~ 2e-22 for every runner-up
    assert w[np.argmax(x)] > 1 - 1e-15 * len(x) - 1e-20


def test_the_core_has_one_softmax():
    """Every softmax in attention_core is attention.softmax (or its log_softmax): no other definition anywhere."""
    import re
    from pathlib import Path

    core = Path(__file__).resolve().parent.parent / "attention_core"
    found = {path.relative_to(core).as_posix(): re.findall(r"def (\w*softmax)\(", path.read_text(encoding="utf-8"))
             for path in sorted(core.rglob("*.py"))}
    assert found.pop("attention.py") == ["softmax", "log_softmax"]
    assert {name: defs for name, defs in found.items() if defs} == {}


def test_log_softmax_is_the_log_of_softmax_and_stays_finite_where_a_weight_underflows():
    from attention_core.attention import log_softmax, softmax

    x = np.array([[0.5, -1.0, 2.0, -np.inf], [3.0, 3.0, 3.0, 3.0]])
    with np.errstate(divide="ignore"):  # (log 0 = -inf for the masked entry, as wanted)
        expected = np.log(np.array([[np.exp(0.5), np.exp(-1.0), np.exp(2.0), 0.0], [1.0, 1.0, 1.0, 1.0]])
                          / np.array([[np.exp(0.5) + np.exp(-1.0) + np.exp(2.0)], [4.0]]))
        np.testing.assert_allclose(log_softmax(x), expected, rtol=1e-12)
        np.testing.assert_allclose(np.exp(log_softmax(x)), softmax(x), rtol=1e-12)
    far = log_softmax(np.array([0.0, -2000.0]))
    assert softmax(np.array([0.0, -2000.0]))[1] == 0.0 and far[1] == -2000.0  # exp(-2000) underflows; its log does not


def test_float32_scores_keep_their_dtype_and_others_become_float64():
    from attention_core.attention import softmax

    assert softmax(np.zeros(3, dtype=np.float32)).dtype == np.float32
    assert softmax(np.zeros(3, dtype=np.int64)).dtype == np.float64
    np.testing.assert_allclose(softmax(np.array([1, 2, 3])), np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum(), rtol=1e-12)
