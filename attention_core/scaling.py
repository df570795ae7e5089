"""Why attention divides by sqrt(d_k): dot products of random vectors, softmax saturation, dying gradients.

For q, k with independent unit-variance entries, q . k is a sum of d products of variance 1, so
Var(q . k) = d. Softmax turns large score gaps into a near one-hot row, whose Jacobian
diag(p) - p p^T is near zero: the gradient dies. Dividing by sqrt(d) keeps the variance at 1.
A temperature tau divides the softmax input once more: z = q . k (/ sqrt(d)) / tau.
"""

from __future__ import annotations

import math

import numpy as np

from attention_core.attention import SeedLike, as_generator, entropy, softmax

DIM_CHOICES = (4, 8, 16, 32, 64, 128, 256, 512, 1024)  # the page's d slider, the table rows and the animation frames
D_MAX = DIM_CHOICES[-1]
TEMPERATURE_CHOICES = (0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0)
KEY_RANGE = (2, 64)
HIST_SCORES = 4096  # scores in the page's histogram (at least; whole draws of one query and n keys)
SAMPLE_CHUNK = 1 << 19  # score_sample draws its keys this many numbers at a time (4 MB of float64)

# The table: TABLE_DRAWS independent draws of Q (16 x 1024) and K (16 x 1024); d uses the first d coordinates.
# Each figure is a mean over draws; its standard error is sd(per-draw means) / sqrt(TABLE_DRAWS). The noisiest
# column is the unscaled entropy at d = 4 (sd of the per-draw mean about 0.19 nats), so 2,000 draws give an SE
# of about 0.0043 (every other column below 0.002): a 95 % interval narrower than 0.01. Two seeds' tables differ by
# sqrt(2) times one table's error (a difference of two means). ``table_standard_errors`` reports the measured values.
TABLE_KEYS = 16
TABLE_QUERIES = 16
TABLE_DRAWS = 2000
TABLE_CHUNK = 250  # draws generated at once: 2 x 250 x 16 x 1024 float32 = 33 MB

STAT_NAMES = ("max", "entropy", "jacobian")


def logit_variance(d: int, scale: bool, temperature: float = 1.0) -> float:
    """d, scale, tau -> the theoretical variance of z = q . k (/ sqrt(d) if scale) / tau: d / tau^2 or 1 / tau^2."""
    return (1.0 if scale else float(d)) / float(temperature) ** 2


def normal_density(x, variance: float) -> np.ndarray:
    """x: (...) -> (...) the N(0, variance) probability density at x."""
    x = np.asarray(x, dtype=np.float64)
    if not variance > 0:
        raise ValueError(f"variance must be positive, got {variance!r}")
    return np.exp(-0.5 * x * x / variance) / math.sqrt(2.0 * math.pi * variance)


def normal_curve(lo: float, hi: float, variance: float, n_points: int = 241) -> tuple[np.ndarray, np.ndarray]:
    """lo, hi -> (x: (n_points,), density: (n_points,)) the N(0, variance) density on an even grid from lo to hi."""
    x = np.linspace(float(lo), float(hi), n_points)
    return x, normal_density(x, variance)


def jacobian_frobenius(p) -> np.ndarray:
    """p: (..., n) softmax rows -> (...) the Frobenius norm of diag(p) - p p^T, in closed form.

    ||diag(p) - p p^T||_F^2 = sum p_i^2 - 2 sum p_i^3 + (sum p_i^2)^2, which is 0 for a one-hot row.
    """
    p = np.asarray(p, dtype=np.float64)
    s2 = np.sum(p * p, axis=-1)
    s3 = np.sum(p * p * p, axis=-1)
    return np.sqrt(np.maximum(s2 - 2.0 * s3 + s2 * s2, 0.0))  # rounding can dip a hair below 0 at one-hot


def row_summary(p) -> dict[str, np.ndarray]:
    """p: (..., n) softmax rows -> {"max", "entropy", "jacobian"}: each (...), the largest weight, nats, ||J||_F."""
    p = np.asarray(p, dtype=np.float64)
    return {"max": np.max(p, axis=-1), "entropy": entropy(p), "jacobian": jacobian_frobenius(p)}


def random_query_keys(n_keys: int, seed: SeedLike, d: int = D_MAX) -> tuple[np.ndarray, np.ndarray]:
    """n_keys, d -> (q: (d,), K: (n_keys, d)) with independent N(0, 1) entries; prefixes give the smaller d."""
    rng = as_generator(seed)
    return rng.standard_normal(d), rng.standard_normal((n_keys, d))


def softmax_inputs(scores, d: int, scale: bool, temperature: float = 1.0) -> np.ndarray:
    """scores q . k: (...) -> (...) z = scores (/ sqrt(d) if scale) / tau, the numbers softmax exponentiates."""
    z = np.asarray(scores, dtype=np.float64)
    if scale:
        z = z / math.sqrt(d)
    return z / float(temperature)


def prefix_weights(q, K, dims, scale: bool, temperature: float = 1.0) -> np.ndarray:
    """q: (D,), K: (n, D), dims: (m,) each <= D -> (m, n) softmax weights of q over K using the first d coordinates."""
    q = np.asarray(q, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    rows = []
    for d in dims:
        scores = K[:, :d] @ q[:d]
        rows.append(softmax(softmax_inputs(scores, d, scale, temperature)))
    return np.stack(rows)


def score_sample(d: int, n_keys: int, seed: SeedLike, scale: bool, temperature: float = 1.0,
                 n_scores: int = HIST_SCORES) -> np.ndarray:
    """d, n_keys -> (n_draws, n_keys) softmax inputs z of independent draws of one query and n_keys keys.

    n_draws = ceil(n_scores / n_keys); every entry of q and K is N(0, 1).
    """
    rng = as_generator(seed)
    n_draws = -(-int(n_scores) // int(n_keys))
    q = rng.standard_normal((n_draws, 1, d))
    scores = np.empty((n_draws, n_keys))
    step = max(1, SAMPLE_CHUNK // (n_keys * d))
    for start in range(0, n_draws, step):  # K in blocks: the same numbers in the same order, ~4 MB at a time, not 67
        K = rng.standard_normal((min(step, n_draws - start), n_keys, d))
        scores[start : start + len(K)] = np.sum(q[start : start + len(K)] * K, axis=-1)
    return softmax_inputs(scores, d, scale, temperature)


def density_histogram(values, n_bins: int = 41) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """values: (...) -> (edges (n_bins + 1,), density (n_bins,), counts (n_bins,)), bins symmetric about 0.

    The density integrates to 1, so it can be drawn under a probability density curve.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    reach = float(np.max(np.abs(v))) if v.size else 1.0
    reach = reach * 1.0001 if reach > 0 else 1.0
    edges = np.linspace(-reach, reach, n_bins + 1)
    counts, edges = np.histogram(v, bins=edges)
    density = counts / (max(v.size, 1) * np.diff(edges))
    return edges, density, counts


def draw_table_block(rng: np.random.Generator, n_draws: int, n_queries: int = TABLE_QUERIES,
                     n_keys: int = TABLE_KEYS, d_max: int = D_MAX) -> tuple[np.ndarray, np.ndarray]:
    """-> (Q: (n_draws, n_queries, d_max), K: (n_draws, n_keys, d_max)) float32 N(0, 1) entries, Q drawn first."""
    Q = rng.standard_normal((n_draws, n_queries, d_max), dtype=np.float32)
    K = rng.standard_normal((n_draws, n_keys, d_max), dtype=np.float32)
    return Q, K


def _block_stats(S: np.ndarray, d: int) -> dict[str, np.ndarray]:
    """S: (draws, n_q, n_k) raw scores at dimension d -> per-draw means, each (draws,)."""
    out = {"mean_score": S.mean(axis=(-1, -2)), "mean_square": (S * S).mean(axis=(-1, -2))}
    for tag, scale in (("unscaled", False), ("scaled", True)):
        for name, value in row_summary(softmax(softmax_inputs(S, d, scale))).items():
            out[f"{name}_{tag}"] = value.mean(axis=-1)
    return out


def sweep_table(seed: SeedLike, dims=DIM_CHOICES, n_draws: int = TABLE_DRAWS, n_queries: int = TABLE_QUERIES,
                n_keys: int = TABLE_KEYS, chunk: int = TABLE_CHUNK) -> dict[str, np.ndarray]:
    """seed -> columns, each (len(dims),): d, var_qk, var_ratio (= var/d, the variance after dividing by sqrt(d)),
    and the means of max / entropy / jacobian, unscaled and scaled (tau = 1), each with a ``<name>_se`` column.

    Each draw is Q: (n_queries, D), K: (n_keys, D) with N(0, 1) entries (D = max(dims)); dimension d uses the
    first d coordinates, so QK^T at d is a prefix sum. Standard errors come from the per-draw means (draws are
    independent; the rows of one draw share K, so they are not).
    """
    rng = as_generator(seed)
    dims = [int(d) for d in dims]
    d_max = max(dims)
    if dims != sorted(set(dims)) or dims[0] < 1:
        raise ValueError(f"dims must be increasing positive integers, got {dims}")
    per_draw: dict[int, list[dict[str, np.ndarray]]] = {d: [] for d in dims}
    for start in range(0, n_draws, chunk):
        Q, K = draw_table_block(rng, min(chunk, n_draws - start), n_queries, n_keys, d_max)
        S = np.zeros((Q.shape[0], n_queries, n_keys))
        done = 0
        for d in dims:
            S += np.matmul(Q[..., done:d], np.swapaxes(K[..., done:d], -1, -2)).astype(np.float64)
            done = d
            per_draw[d].append(_block_stats(S, d))
    columns: dict[str, list[float]] = {}
    for d in dims:
        stats = {name: np.concatenate([b[name] for b in per_draw[d]]) for name in per_draw[d][0]}
        se = {name: float(np.std(v, ddof=1) / math.sqrt(v.size)) if v.size > 1 else float("nan")
              for name, v in stats.items()}
        var = float(stats["mean_square"].mean() - stats["mean_score"].mean() ** 2)
        row = {"d": float(d), "var_qk": var, "var_qk_se": se["mean_square"],
               "var_ratio": var / d, "var_ratio_se": se["mean_square"] / d}
        for tag in ("unscaled", "scaled"):
            for name in STAT_NAMES:
                row[f"{name}_{tag}"] = float(stats[f"{name}_{tag}"].mean())
                row[f"{name}_{tag}_se"] = se[f"{name}_{tag}"]
        for key, value in row.items():
            columns.setdefault(key, []).append(value)
    table = {key: np.asarray(values) for key, values in columns.items()}
    table["d"] = table["d"].astype(int)
    return table


def table_standard_errors(table: dict[str, np.ndarray]) -> dict[str, float]:
    """sweep_table columns -> the largest standard error of the weights (max, Jacobian), of entropy, and of var/d."""
    def worst(names):
        return float(max(np.max(table[n]) for n in names))

    tags = ("unscaled", "scaled")
    return {
        "weights": worst([f"{s}_{t}_se" for s in ("max", "jacobian") for t in tags]),
        "entropy": worst([f"entropy_{t}_se" for t in tags]),
        "var_ratio": worst(["var_ratio_se"]),
    }


# The same knob in a language model: the sampling temperature. Hand-designed next-word scores (logits) for one
# prompt; the page names the words (locales) and says plainly that the scores are made up for the example.
NEXT_WORD_SCORES = (3.0, 2.2, 1.6, 0.9, -0.3, -1.5)
SAMPLE_COUNT = 12  # next words drawn per temperature (the same uniform numbers at every temperature)


def temperature_probabilities(scores, temperatures) -> np.ndarray:
    """scores: (n,), temperatures: (t,) -> (t, n) softmax(scores / tau) for each tau (rows sum to 1)."""
    s = np.asarray(scores, dtype=np.float64)
    taus = np.asarray(temperatures, dtype=np.float64).reshape(-1, 1)
    if np.any(~(taus > 0)):
        raise ValueError(f"temperatures must be positive, got {temperatures!r}")
    return softmax(s[None, :] / taus)


def sample_from_uniforms(p, u) -> np.ndarray:
    """p: (..., n) probability rows, u: (m,) numbers in [0, 1) -> (..., m) indices drawn by the inverse CDF.

    The same u at every row (common random numbers): a sharper row changes a draw only where it must.
    """
    cdf = np.cumsum(np.asarray(p, dtype=np.float64), axis=-1)
    u = np.asarray(u, dtype=np.float64)
    flat = cdf.reshape(-1, cdf.shape[-1])
    idx = np.stack([np.searchsorted(row, u * row[-1], side="right") for row in flat])
    return np.minimum(idx, cdf.shape[-1] - 1).reshape(*cdf.shape[:-1], u.size)


def sampling_sweep(scores, temperatures, n_samples: int, seed: SeedLike) -> dict[str, np.ndarray]:
    """scores: (n,), temperatures: (t,) -> {"probs": (t, n), "entropy": (t,), "samples": (t, n_samples) indices}."""
    probs = temperature_probabilities(scores, temperatures)
    u = as_generator(seed).random(int(n_samples))
    return {"probs": probs, "entropy": entropy(probs), "samples": sample_from_uniforms(probs, u)}
