"""Scaled dot-product attention and its parts, in plain NumPy.

Conventions: the last two axes are (tokens, features); any leading axes are batch or
head axes and broadcast. A boolean ``mask`` is True where a query *may* attend to a
key (the convention of torch.nn.functional.scaled_dot_product_attention).
"""

from __future__ import annotations

import numpy as np

SeedLike = int | np.random.Generator | None
# The largest seed the pages offer: a signed 32-bit int, which every browser's number input keeps exact.
MAX_SEED = 2**31 - 1


def as_generator(seed: SeedLike) -> np.random.Generator:
    """A NumPy Generator from an int seed (or the Generator itself); None is not allowed."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        raise ValueError("a seed (int) or numpy.random.Generator is required: nothing here is hidden-random")
    return np.random.default_rng(int(seed))


def softmax(x, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    """x: (...) -> same shape, non-negative, summing to 1 along ``axis``: the core's one softmax.

    Stable for scores up to +-1e6 (the maximum is subtracted before dividing by the
    temperature, so nothing overflows); entries at -inf get weight exactly 0. float32 scores
    (lesson 8's model) stay float32; anything else is computed in float64.
    """
    e = np.exp(_shifted(x, axis, temperature))
    e /= np.sum(e, axis=axis, keepdims=True)
    return e


def log_softmax(x, axis: int = -1, temperature: float = 1.0) -> np.ndarray:
    """x: (...) -> same shape, log(softmax(x)) computed as shifted - log-sum-exp: finite where a weight underflows."""
    shifted = _shifted(x, axis, temperature)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _shifted(x, axis: int, temperature: float) -> np.ndarray:
    """x: (...) -> a new array of its shape, (x - max along axis) / temperature, <= 0 everywhere (input checked)."""
    x = np.asarray(x)
    x = x if x.dtype in (np.float32, np.float64) else x.astype(np.float64)
    if not np.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature must be a positive finite number, got {temperature!r}")
    peak = np.max(x, axis=axis, keepdims=True)  # NaN and +inf reach the maximum of their slice
    if np.isnan(peak).any() or np.isposinf(peak).any():
        raise ValueError("softmax scores must be finite numbers or -inf (found NaN or +inf)")
    if np.isneginf(peak).any():
        raise ValueError("softmax got a slice whose scores are all -inf: every key is masked for some query")
    shifted = x - peak  # <= 0 everywhere, so exp never overflows
    if temperature != 1:
        shifted /= temperature
    return shifted


def attention_scores(Q, K, mask=None, scale: bool = True) -> np.ndarray:
    """Q: (..., n_q, d_k), K: (..., n_k, d_k) -> scores (..., n_q, n_k); masked entries are -inf."""
    Q = np.asarray(Q, dtype=np.float64)
    K = np.asarray(K, dtype=np.float64)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K need the same feature size d_k, got {Q.shape[-1]} and {K.shape[-1]}")
    scores = Q @ np.swapaxes(K, -1, -2)
    if scale:
        scores = scores / np.sqrt(Q.shape[-1])
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != bool:
            raise ValueError("mask must be boolean (True = may attend)")
        scores = np.where(mask, scores, -np.inf)
    return scores


def attention_weights(Q, K, mask=None, scale: bool = True, temperature: float = 1.0) -> np.ndarray:
    """Q: (..., n_q, d_k), K: (..., n_k, d_k) -> weights (..., n_q, n_k), rows summing to 1."""
    return softmax(attention_scores(Q, K, mask=mask, scale=scale), axis=-1, temperature=temperature)


def scaled_dot_product_attention(Q, K, V, mask=None, scale: bool = True, temperature: float = 1.0):
    """Q: (..., n_q, d_k), K: (..., n_k, d_k), V: (..., n_k, d_v) -> (output (..., n_q, d_v), weights (..., n_q, n_k))."""
    weights = attention_weights(Q, K, mask=mask, scale=scale, temperature=temperature)
    return weights @ np.asarray(V, dtype=np.float64), weights


def causal_mask(n: int) -> np.ndarray:
    """n -> (n, n) boolean, True on and below the diagonal (query i may see keys 0..i)."""
    if n < 1:
        raise ValueError(f"causal_mask needs n >= 1, got {n}")
    return np.tril(np.ones((n, n), dtype=bool))


def random_projection(d_in: int, d_out: int, seed: SeedLike) -> np.ndarray:
    """-> (d_in, d_out) Glorot-normal matrix (std sqrt(2 / (d_in + d_out))), as a freshly initialised layer."""
    rng = as_generator(seed)
    return rng.normal(0.0, np.sqrt(2.0 / (d_in + d_out)), size=(d_in, d_out))


def split_heads(X, n_heads: int) -> np.ndarray:
    """X: (..., n, d) -> (..., n_heads, n, d // n_heads)."""
    X = np.asarray(X)
    *lead, n, d = X.shape
    if n_heads < 1 or d % n_heads:
        raise ValueError(f"d = {d} does not split into {n_heads} heads")
    return np.swapaxes(X.reshape(*lead, n, n_heads, d // n_heads), -3, -2)


def merge_heads(X) -> np.ndarray:
    """X: (..., n_heads, n, d_head) -> (..., n, n_heads * d_head); the inverse of split_heads."""
    X = np.asarray(X)
    *lead, h, n, dh = X.shape
    return np.swapaxes(X, -3, -2).reshape(*lead, n, h * dh)


def multi_head_attention(X, W_q, W_k, W_v, n_heads: int, mask=None, scale: bool = True):
    """X: (..., n, d_model), W_*: (d_model, d_model) -> (output (..., n, d_model), weights (..., n_heads, n, n))."""
    heads = [split_heads(np.asarray(X, dtype=np.float64) @ W, n_heads) for W in (W_q, W_k, W_v)]
    out, weights = scaled_dot_product_attention(*heads, mask=mask, scale=scale)
    return merge_heads(out), weights


def concat_heads_output(head_outputs, W_O):
    """head_outputs: (..., h, n, d_v), W_O: (h * d_v, d_model) -> (concat (..., n, h * d_v), output (..., n, d_model)).

    Multi-head attention's last step: the heads' outputs side by side (head 0's d_v columns first), mixed by W_O.
    """
    concat = merge_heads(np.asarray(head_outputs, dtype=np.float64))
    W_O = np.asarray(W_O, dtype=np.float64)
    if W_O.shape[0] != concat.shape[-1]:
        raise ValueError(f"W_O needs {concat.shape[-1]} rows (h * d_v), got {W_O.shape[0]}")
    return concat, concat @ W_O


def entropy(weights, axis: int = -1) -> np.ndarray:
    """weights: (..., n) probability rows -> (...) entropy in nats (0 log 0 = 0)."""
    w = np.asarray(weights, dtype=np.float64)
    logs = np.log(np.where(w > 0, w, 1.0))
    return -np.sum(w * logs, axis=axis)


def ranks_in_rows(rows, index) -> np.ndarray:
    """rows: (..., n), index: int or (...) ints -> (...) 1-based rank of entry ``index`` in each row.

    1 = the largest weight; ties share the best rank. ``index`` broadcasts against the rows, so a (k,) index on one
    (n,) row gives k ranks (``np.arange(n)``: every entry's rank) and an (m,) index on (m, n) rows one per row.
    """
    rows = np.asarray(rows, dtype=np.float64)
    index = np.asarray(index, dtype=np.intp)
    shape = np.broadcast_shapes(rows.shape[:-1], index.shape)
    rows = np.broadcast_to(rows, (*shape, rows.shape[-1]))
    picked = np.take_along_axis(rows, np.broadcast_to(index, shape)[..., None], axis=-1)
    return 1 + np.sum(rows > picked, axis=-1)
