"""Training one attention head to resolve a pronoun (lesson 6 d): full-batch Adam with analytic gradients.

The head scores every token j of a sentence against the pronoun p:

    s_j = (h_p W_Q) . (h_j W_K) / sqrt(d_k),   a = softmax(s),   loss = -log a_c   (c = the right noun)

averaged over the sentences, plus (lambda / 2) (|W_Q|^2 + |W_K|^2). The inputs h are either the raw
word vectors x, or, with ``context=True``, each word plus the mean of the words after it (a fixed
stand-in for the lower layers of a real model, which have already mixed context into every word).
Without context the query of "it" is the same vector in every sentence, so the head cannot tell
"tired" from "wide": in a pair that differs only in the adjective, animal and place get the same
score difference, and at most one of the two sentences can be right.

Gradients (g = a - onehot(c), divided by the number of sentences m):
    dL/dW_Q = sum_m h_p (K^T g)^T / sqrt(d_k) + lambda W_Q
    dL/dW_K = sum_m H^T g q^T / sqrt(d_k)     + lambda W_K
No Streamlit here: a page follows progress through ``callback(step, loss)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from attention_core.attention import SeedLike, as_generator, log_softmax, random_projection, softmax
from attention_core.blas import single_blas_thread

ADAM_BETA1 = 0.9
ADAM_BETA2 = 0.999
ADAM_EPS = 1e-8


@dataclass(frozen=True)
class SentenceBatch:
    """m sentences padded to n tokens: X (m, n, d), mask (m, n) True on real tokens, query (m,), answer (m,)."""

    X: np.ndarray
    mask: np.ndarray
    query: np.ndarray
    answer: np.ndarray

    @property
    def size(self) -> int:
        return int(self.X.shape[0])


@dataclass(frozen=True)
class TrainSetting:
    """Everything that decides a training run; the same setting gives the same weights."""

    d_k: int = 8
    learning_rate: float = 0.03
    steps: int = 300
    weight_decay: float = 1e-4
    seed: int = 0
    context: bool = True


@dataclass
class TrainResult:
    """W_q, W_k: (d, d_k) trained; W_q_init, W_k_init: the seeded start; losses: (steps + 1,) before each step and at the end."""

    setting: TrainSetting
    W_q: np.ndarray
    W_k: np.ndarray
    W_q_init: np.ndarray
    W_k_init: np.ndarray
    losses: np.ndarray = field(default_factory=lambda: np.zeros(0))


def projection_pair(d_in: int, d_k: int, seed: SeedLike) -> tuple[np.ndarray, np.ndarray]:
    """-> (W_Q, W_K), each (d_in, d_k) Glorot-normal, drawn in that order from one generator made from ``seed``."""
    rng = as_generator(seed)
    return random_projection(d_in, d_k, rng), random_projection(d_in, d_k, rng)


def pack_batch(vectors, query_indices, answer_indices=None) -> SentenceBatch:
    """vectors: m arrays (n_i, d) -> SentenceBatch padded with zeros to n = max n_i; answers default to 0."""
    vectors = [np.asarray(v, dtype=np.float64) for v in vectors]
    if not vectors or any(v.ndim != 2 or v.shape[0] == 0 for v in vectors):
        raise ValueError("pack_batch needs at least one sentence, each a non-empty (n_i, d) array")
    m, n, d = len(vectors), max(v.shape[0] for v in vectors), vectors[0].shape[1]
    X = np.zeros((m, n, d))
    mask = np.zeros((m, n), dtype=bool)
    for i, v in enumerate(vectors):
        X[i, : v.shape[0]] = v
        mask[i, : v.shape[0]] = True
    query = np.asarray(query_indices, dtype=np.int64)
    answer = np.zeros(m, dtype=np.int64) if answer_indices is None else np.asarray(answer_indices, dtype=np.int64)
    lengths = mask.sum(axis=1)
    if query.shape != (m,) or answer.shape != (m,) or (query >= lengths).any() or (answer >= lengths).any():
        raise ValueError("query and answer indices must be one per sentence and inside it")
    return SentenceBatch(X, mask, query, answer)


def right_context(X, mask=None) -> np.ndarray:
    """X: (..., n, d), mask: (..., n) bool -> H (..., n, d): h_i = x_i + mean of the real x_j with j > i (nothing if none)."""
    X = np.asarray(X, dtype=np.float64)
    mask = np.ones(X.shape[:-1], dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    Xm = X * mask[..., None]
    running = np.cumsum(Xm, axis=-2)
    after_sum = running[..., -1:, :] - running  # sum over j > i
    counts = np.cumsum(mask, axis=-1)
    after_count = (counts[..., -1:] - counts)[..., None]
    after_mean = np.where(after_count > 0, after_sum / np.maximum(after_count, 1), 0.0)
    return (X + after_mean) * mask[..., None]


def head_inputs(batch: SentenceBatch, context: bool) -> np.ndarray:
    """-> H (m, n, d): the word vectors, with the right context added when ``context``."""
    return right_context(batch.X, batch.mask) if context else batch.X * batch.mask[..., None]


def _scores(W_q, W_k, H, mask, query):
    """-> (q (m, d_k), scores (m, n) scaled, -inf on padding); s_j = h_j . (W_K q) / sqrt(d_k), K never formed."""
    q = H[np.arange(H.shape[0]), query] @ W_q  # (m, d_k)
    u = q @ W_k.T  # (m, d): the query pulled back to word-vector space
    scores = np.einsum("mnd,md->mn", H, u) / np.sqrt(W_q.shape[1])
    return q, np.where(mask, scores, -np.inf)


def query_weights(W_q, W_k, H, mask, query) -> np.ndarray:
    """W_q, W_k: (d, d_k), H: (m, n, d), mask: (m, n), query: (m,) -> each query's attention row (m, n), 0 on padding."""
    return softmax(_scores(np.asarray(W_q), np.asarray(W_k), H, mask, query)[1])


def loss_and_gradients(W_q, W_k, H, mask, query, answer, weight_decay: float = 0.0):
    """W_q, W_k: (d, d_k), H: (m, n, d), mask: (m, n), query, answer: (m,) -> (loss, dL/dW_q (d, d_k), dL/dW_k (d, d_k))."""
    W_q = np.asarray(W_q, dtype=np.float64)
    W_k = np.asarray(W_k, dtype=np.float64)
    m, rows = H.shape[0], np.arange(H.shape[0])
    root = np.sqrt(W_q.shape[1])
    q, scores = _scores(W_q, W_k, H, mask, query)
    log_a = log_softmax(scores)
    loss = -np.mean(log_a[rows, answer]) + 0.5 * weight_decay * (np.sum(W_q**2) + np.sum(W_k**2))
    g = np.exp(log_a)
    g[rows, answer] -= 1.0
    g /= m  # dL/ds, (m, n); zero on padding
    Hg = np.einsum("mnd,mn->md", H, g)  # (m, d): H^T g per sentence
    dq = Hg @ W_k / root  # dL/dq = K^T g / sqrt(d_k) = W_K^T H^T g / sqrt(d_k), (m, d_k)
    grad_q = H[rows, query].T @ dq + weight_decay * W_q
    grad_k = Hg.T @ q / root + weight_decay * W_k
    return float(loss), grad_q, grad_k


def _adam(W, grad, moments, step: int, learning_rate: float) -> np.ndarray:
    """One Adam update of W; ``moments`` = [first, second] is updated in place."""
    moments[0] = ADAM_BETA1 * moments[0] + (1 - ADAM_BETA1) * grad
    moments[1] = ADAM_BETA2 * moments[1] + (1 - ADAM_BETA2) * grad**2
    first = moments[0] / (1 - ADAM_BETA1**step)
    second = moments[1] / (1 - ADAM_BETA2**step)
    return W - learning_rate * first / (np.sqrt(second) + ADAM_EPS)


def train_head(batch: SentenceBatch, setting: TrainSetting,
               callback: Callable[[int, float], None] | None = None) -> TrainResult:
    """batch: m sentences (m, n, d) -> TrainResult with W_q, W_k (d, d_k); ``callback(step, loss)`` after each step."""
    if setting.d_k < 1 or setting.steps < 0 or setting.learning_rate <= 0 or setting.weight_decay < 0:
        raise ValueError(f"invalid training setting {setting}")
    # Single-threaded BLAS: these products are small, and on a shared CPU OpenBLAS threads only wait on each other.
    with single_blas_thread():
        return _train(batch, setting, callback)


def _train(batch: SentenceBatch, setting: TrainSetting, callback) -> TrainResult:
    H = head_inputs(batch, setting.context)
    W_q0, W_k0 = projection_pair(H.shape[-1], setting.d_k, setting.seed)
    W_q, W_k = W_q0.copy(), W_k0.copy()
    moments_q, moments_k = [np.zeros_like(W_q), np.zeros_like(W_q)], [np.zeros_like(W_k), np.zeros_like(W_k)]
    losses = np.zeros(setting.steps + 1)
    for step in range(1, setting.steps + 1):
        loss, grad_q, grad_k = loss_and_gradients(W_q, W_k, H, batch.mask, batch.query, batch.answer, setting.weight_decay)
        losses[step - 1] = loss
        W_q = _adam(W_q, grad_q, moments_q, step, setting.learning_rate)
        W_k = _adam(W_k, grad_k, moments_k, step, setting.learning_rate)
        if callback is not None:
            callback(step, loss)
    losses[-1] = loss_and_gradients(W_q, W_k, H, batch.mask, batch.query, batch.answer, setting.weight_decay)[0]
    return TrainResult(setting, W_q, W_k, W_q0, W_k0, losses)


def head_rows(W_q, W_k, batch: SentenceBatch, context: bool) -> np.ndarray:
    """W_q, W_k: (d, d_k), batch: (m, n, d) -> each sentence's query row (m, n), 0 on padding."""
    return query_weights(W_q, W_k, head_inputs(batch, context), batch.mask, batch.query)


def accuracy(weights, answer) -> float:
    """weights: (m, n), answer: (m,) -> share of rows whose answer ranks first (no tie with another token)."""
    weights = np.asarray(weights, dtype=np.float64)
    picked = weights[np.arange(weights.shape[0]), np.asarray(answer)]
    ties = np.sum(weights >= picked[:, None], axis=-1)
    return float(np.mean(ties == 1))


def sentence_row(W_q, W_k, X, query_index: int, context: bool) -> np.ndarray:
    """W_q, W_k: (d, d_k), X: (n, d) one sentence -> the attention row (n,) of token ``query_index``."""
    return head_rows(W_q, W_k, pack_batch([X], [query_index]), context)[0]
