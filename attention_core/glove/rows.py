"""Lesson 6 (a)-(b): one query's attention row over a sentence of GloVe vectors, and where a target word ranks.

(a) raw:       Q = K = X (the 50-d word vectors), scores / sqrt(50).
(b) projected: Q = X W_Q, K = X W_K with fresh Glorot matrices (training.projection_pair(seed)), / sqrt(d_k).
Ranks are 1-based (1 = the largest weight); tokens with equal weight share the best rank.
"""

from __future__ import annotations

import numpy as np

from attention_core.attention import SeedLike, as_generator, attention_weights, ranks_in_rows
from attention_core.glove.training import projection_pair


def raw_row(X, query_index: int) -> np.ndarray:
    """X: (n, d) -> (n,) attention weights of token ``query_index`` with Q = K = X, scaled by sqrt(d)."""
    X = np.asarray(X, dtype=np.float64)
    return attention_weights(X[query_index : query_index + 1], X)[0]


def projected_row(X, query_index: int, d_k: int, seed: int) -> np.ndarray:
    """X: (n, d) -> (n,) weights of ``query_index`` with Q = X W_Q, K = X W_K from projection_pair(d, d_k, seed)."""
    X = np.asarray(X, dtype=np.float64)
    W_q, W_k = projection_pair(X.shape[1], d_k, seed)
    return attention_weights(X[query_index : query_index + 1] @ W_q, X @ W_k)[0]


def direction_ranks(X, target_index: int, n_draws: int, seed: SeedLike) -> np.ndarray:
    """X: (n, d) -> (n_draws,) rank of ``target_index`` in X g for n_draws Gaussian directions g (one generator).

    The same distribution as the target's rank in projected_row over seeds, for every query word and every d_k:
    the row is softmax(X u / sqrt(d_k)) with u = W_K W_Q^T x_query, and for Gaussian (Glorot) W_Q, W_K the vector
    u given q = W_Q^T x_query is N(0, sigma^2 |q|^2 I): its direction is uniform on the sphere, whatever the query
    and d_k, and the softmax keeps the order of the scores. So d numbers per draw suffice, not 2 d d_k.
    """
    X = np.asarray(X, dtype=np.float64)
    G = as_generator(seed).standard_normal((int(n_draws), X.shape[1]))
    return ranks_in_rows(G @ X.T, target_index)


def rank_counts(ranks, n: int) -> np.ndarray:
    """ranks: (S,) in 1..n -> (n,) how many times each rank 1..n occurs (sums to S)."""
    ranks = np.asarray(ranks, dtype=np.int64).reshape(-1)
    if ranks.size and (ranks.min() < 1 or ranks.max() > n):
        raise ValueError(f"ranks must lie in 1..{n}")
    return np.bincount(ranks - 1, minlength=n)[:n]


def rank_summary(counts) -> dict:
    """counts: (n,) of ranks 1..n -> mean rank, top and bottom shares, the halves and (odd n) the middle rank, and what
    a uniform draw would give."""
    counts = np.asarray(counts, dtype=np.float64)
    n, total = counts.size, counts.sum()
    if n == 0 or total == 0:
        raise ValueError("rank_summary needs at least one rank")
    shares = counts / total
    return {
        "seeds": int(total),
        "n": n,
        "mean_rank": float(np.sum(shares * np.arange(1, n + 1))),
        "uniform_mean_rank": (n + 1) / 2,
        "top_share": float(shares[0]),
        "bottom_share": float(shares[-1]),
        "uniform_share": 1.0 / n,
        "top_half_share": float(shares[: n // 2].sum()),
        "bottom_half_share": float(shares[n - n // 2 :].sum()),
        "middle_rank": (n + 1) // 2 if n % 2 else 0,  # an odd n has a middle rank in neither half (0: none)
        "middle_share": float(shares[n // 2]) if n % 2 else 0.0,
    }


def rank_band(rank: int, n: int) -> int:
    """A rank 1..n -> the lesson's answer to "where does it rank?": 1 first, 2 second, 3 below the middle of the row
    (rank > (n + 1) / 2), 4 third or lower but not below the middle (the four answers split every rank)."""
    if not 1 <= rank <= n:
        raise ValueError(f"rank {rank} is not in 1..{n}")
    if rank <= 2:
        return rank
    return 3 if rank > (n + 1) / 2 else 4
