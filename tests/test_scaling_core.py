"""attention_core.scaling against independent references: loops over the formulas, finite differences, identities."""

import math
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.attention import attention_weights, softmax
from attention_core.scaling import (
    DIM_CHOICES,
    KEY_RANGE,
    TABLE_DRAWS,
    TEMPERATURE_CHOICES,
    density_histogram,
    draw_table_block,
    jacobian_frobenius,
    logit_variance,
    normal_curve,
    normal_density,
    prefix_weights,
    random_query_keys,
    row_summary,
    score_sample,
    softmax_inputs,
    sweep_table,
    table_standard_errors,
)
from tests.hypothesis_budget import examples


@pytest.fixture(scope="module")
def page_table():
    """The table exactly as the page computes it for the default seed (2,000 draws, 16 keys)."""
    return sweep_table(0)


# --- the claims of the lesson, at the page's draw count ---------------------------------------------

def test_variance_grows_as_d_within_five_percent(page_table):
    assert list(page_table["d"]) == list(DIM_CHOICES)
    ratio = page_table["var_qk"] / page_table["d"]
    np.testing.assert_allclose(page_table["var_ratio"], ratio)
    assert abs(page_table["var_ratio"][-1] - 1) < 0.05  # d = 1024
    assert np.all(np.abs(ratio - 1) < 0.05)


def test_scaled_largest_weight_stays_near_a_quarter(page_table):
    assert np.all((page_table["max_scaled"] > 0.20) & (page_table["max_scaled"] < 0.30))


def test_unscaled_largest_weight_goes_one_hot(page_table):
    assert page_table["max_unscaled"][-1] > 0.9
    assert np.all(np.diff(page_table["max_unscaled"]) > 0)
    assert page_table["entropy_unscaled"][-1] < 0.2 < 2.0 < page_table["entropy_scaled"][-1]


def test_gradient_dies_without_scaling(page_table):
    j_u, j_s = page_table["jacobian_unscaled"], page_table["jacobian_scaled"]
    assert j_u[-1] < 0.25 * j_u[0]
    assert j_s.min() > 0.25 and np.ptp(j_s) < 0.02


def test_draw_count_gives_two_stable_decimals(page_table):
    """The justification in the core's docstring: 2 SE below 0.01 for every averaged column."""
    se = table_standard_errors(page_table)
    assert TABLE_DRAWS == 2000
    assert se["weights"] < 0.0025
    assert se["entropy"] < 0.005
    assert se["var_ratio"] < 0.01


# --- the sweep against a naive loop on a tiny configuration --------------------------------------------

def naive_row(scores):
    top = max(scores)
    e = [math.exp(s - top) for s in scores]
    p = [x / sum(e) for x in e]
    h = -sum(x * math.log(x) for x in p if x > 0)
    n = len(p)
    fro = math.sqrt(sum(((p[i] if i == j else 0.0) - p[i] * p[j]) ** 2 for i in range(n) for j in range(n)))
    return max(p), h, fro


def test_sweep_table_matches_naive_loops():
    seed, n_draws, n_q, n_k, dims, chunk = 5, 5, 2, 3, (2, 5), 2
    table = sweep_table(seed, dims=dims, n_draws=n_draws, n_queries=n_q, n_keys=n_k, chunk=chunk)
    rng = np.random.default_rng(seed)
    blocks = [draw_table_block(rng, min(chunk, n_draws - s), n_q, n_k, max(dims)) for s in range(0, n_draws, chunk)]
    # The table multiplies float32 draws in float32, hence rel=1e-5 below; everything else is float64.
    Q = np.concatenate([b[0] for b in blocks]).astype(np.float64)
    K = np.concatenate([b[1] for b in blocks]).astype(np.float64)
    for i, d in enumerate(dims):
        per_draw = {key: [] for key in ("max_u", "h_u", "j_u", "max_s", "h_s", "j_s")}
        all_scores = []
        for r in range(n_draws):
            rows = {key: [] for key in per_draw}
            for a in range(n_q):
                scores = [sum(float(Q[r, a, c]) * float(K[r, b, c]) for c in range(d)) for b in range(n_k)]
                all_scores += scores
                for tag, divisor in (("u", 1.0), ("s", math.sqrt(d))):
                    m, h, j = naive_row([s / divisor for s in scores])
                    rows[f"max_{tag}"].append(m)
                    rows[f"h_{tag}"].append(h)
                    rows[f"j_{tag}"].append(j)
            for key in per_draw:
                per_draw[key].append(sum(rows[key]) / n_q)
        mean = sum(all_scores) / len(all_scores)
        var = sum((s - mean) ** 2 for s in all_scores) / len(all_scores)
        assert table["var_qk"][i] == pytest.approx(var, rel=1e-5, abs=1e-9)
        for key, column in (("max_u", "max_unscaled"), ("h_u", "entropy_unscaled"), ("j_u", "jacobian_unscaled"),
                            ("max_s", "max_scaled"), ("h_s", "entropy_scaled"), ("j_s", "jacobian_scaled")):
            assert table[column][i] == pytest.approx(statistics.fmean(per_draw[key]), rel=1e-5, abs=1e-9)
            se = statistics.stdev(per_draw[key]) / math.sqrt(n_draws)
            assert table[f"{column}_se"][i] == pytest.approx(se, rel=1e-5, abs=1e-9)


# --- the softmax Jacobian ------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 5, 16])
def test_jacobian_frobenius_matches_finite_differences(n):
    z = np.random.default_rng(n).normal(0, 2, size=n)
    h = 1e-6
    numeric = np.empty((n, n))
    for j in range(n):
        step = np.zeros(n)
        step[j] = h
        numeric[:, j] = (softmax(z + step) - softmax(z - step)) / (2 * h)
    assert jacobian_frobenius(softmax(z)) == pytest.approx(np.linalg.norm(numeric), abs=1e-8)


def test_jacobian_frobenius_closed_form_matches_the_matrix_and_a_loop():
    P = softmax(np.random.default_rng(3).normal(0, 3, size=(7, 9)))
    for p in P:
        n = len(p)
        J = [[p[i] * ((1.0 if i == j else 0.0) - p[j]) for j in range(n)] for i in range(n)]  # diag(p) - p p^T
        assert jacobian_frobenius(p) == pytest.approx(np.linalg.norm(J), rel=1e-9, abs=1e-12)
        assert jacobian_frobenius(p) == pytest.approx(naive_row(list(np.log(p)))[2], rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(jacobian_frobenius(P), [jacobian_frobenius(p) for p in P], rtol=1e-12)


def test_jacobian_vanishes_at_one_hot_and_is_known_at_uniform():
    assert jacobian_frobenius(np.eye(6)[2]) == 0.0
    for n in (2, 8, 64):
        assert jacobian_frobenius(np.full(n, 1.0 / n)) == pytest.approx(math.sqrt((n - 1) / n**2), rel=1e-12)


def test_entropy_and_largest_weight_match_a_naive_loop():
    P = softmax(np.random.default_rng(4).normal(0, 4, size=(6, 10)))
    P[0] = np.eye(10)[3]  # a one-hot row: 0 log 0 counts as 0
    summary = row_summary(P)
    for k, p in enumerate(P):
        assert summary["entropy"][k] == pytest.approx(-sum(x * math.log(x) for x in p if x > 0), abs=1e-12)
        assert summary["max"][k] == max(p)
    assert summary["entropy"][0] == 0.0


# --- the page's single-query pieces ----------------------------------------------------------------------

def test_logit_variance_and_softmax_inputs():
    assert logit_variance(1024, scale=False) == 1024
    assert logit_variance(1024, scale=True) == 1
    assert logit_variance(64, scale=False, temperature=0.5) == 256
    assert logit_variance(64, scale=True, temperature=2.0) == 0.25
    np.testing.assert_allclose(softmax_inputs([8.0, -4.0], 16, scale=True, temperature=0.5), [4.0, -2.0])


def test_score_sample_is_the_same_draws_scaled():
    raw = score_sample(256, 8, seed=3, scale=False)
    assert raw.shape == (512, 8)
    np.testing.assert_allclose(score_sample(256, 8, seed=3, scale=True, temperature=0.5), raw / 16 / 0.5)
    assert raw.var() == pytest.approx(256, rel=0.1)
    assert score_sample(4, 3, seed=0, scale=True).size >= 4096


def test_prefix_weights_match_attention_weights_on_truncated_vectors():
    q, K = random_query_keys(5, seed=11)
    assert q.shape == (1024,) and K.shape == (5, 1024)
    for scale in (False, True):
        W = prefix_weights(q, K, DIM_CHOICES, scale, temperature=0.7)
        for i, d in enumerate(DIM_CHOICES):
            ref = attention_weights(q[None, :d], K[:, :d], scale=scale, temperature=0.7)[0]
            np.testing.assert_allclose(W[i], ref, rtol=1e-12, atol=1e-300)


def test_density_histogram_and_normal_curve_integrate_to_one():
    z = score_sample(16, 8, seed=1, scale=True)
    edges, density, counts = density_histogram(z)
    assert counts.sum() == z.size
    assert np.sum(density * np.diff(edges)) == pytest.approx(1.0)
    assert edges[0] == pytest.approx(-edges[-1])
    x, y = normal_curve(-40, 40, variance=9.0, n_points=4001)
    assert np.trapezoid(y, x) == pytest.approx(1.0, rel=1e-9)
    assert np.trapezoid(x * x * y, x) == pytest.approx(9.0, rel=1e-9)
    assert normal_density(0.0, 1.0) == pytest.approx(1 / math.sqrt(2 * math.pi))


def test_extreme_setting_stays_finite():
    """d = 1024, no scaling, tau = 0.05: softmax inputs of several hundred to thousands."""
    z = score_sample(1024, 64, seed=0, scale=False, temperature=0.05)
    assert np.abs(z).max() > 600
    edges, density, counts = density_histogram(z)
    x, y = normal_curve(edges[0], edges[-1], logit_variance(1024, False, 0.05))
    q, K = random_query_keys(64, seed=0)
    W = prefix_weights(q, K, DIM_CHOICES, scale=False, temperature=0.05)
    summary = row_summary(W)
    for arr in (z, edges, density, x, y, W, *summary.values()):
        assert np.all(np.isfinite(arr))
    assert summary["max"][-1] == pytest.approx(1.0)
    assert np.all(summary["entropy"] >= 0) and np.all(summary["jacobian"] >= 0)


@settings(max_examples=examples(60), deadline=None)
@given(
    d=st.integers(4, 1024),
    n_keys=st.integers(*KEY_RANGE),
    tau=st.one_of(st.sampled_from(TEMPERATURE_CHOICES), st.floats(0.05, 20.0)),
    scale=st.booleans(),
    seed=st.integers(0, 2**31 - 1),
)
def test_no_nan_or_inf_for_any_setting_in_range(d, n_keys, tau, scale, seed):
    z = score_sample(d, n_keys, seed, scale, tau, n_scores=64)
    edges, density, counts = density_histogram(z)
    x, y = normal_curve(edges[0], edges[-1], logit_variance(d, scale, tau))
    q, K = random_query_keys(n_keys, seed, d=d)
    W = prefix_weights(q, K, [d], scale, tau)
    summary = row_summary(W)
    for arr in (z, edges, density, x, y, W, *summary.values()):
        assert np.all(np.isfinite(arr))
    np.testing.assert_allclose(W.sum(axis=-1), 1.0)
    assert np.all(summary["jacobian"] <= 1.0) and np.all(summary["entropy"] <= math.log(n_keys) + 1e-9)
