"""The RNN's memory probe: can the FIRST word be read back from the last state, and the best case for any state.

memory_probe fits a ridge read-out of the first word from a seeded Elman RNN's state (attention_core.rnn) after
L words, R^2 on held-out sentences, next to one attention layer that looks the word up; best_case_memory computes
the same R^2 exactly for a norm-preserving linear RNN (orthogonal W_h), the most any recurrent state can hold.
Vectors are rows, as in attention_core.rnn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import SeedLike, as_generator, scaled_dot_product_attention
from attention_core.blas import single_blas_thread
from attention_core.rnn import elman_weights, rnn_states_after


@dataclass(frozen=True)
class ProbeResult:
    """The memory probe: lengths (L,), hidden_sizes (k,), rnn_r2 (k, L), attention_r2 (L,), all held-out R^2."""

    lengths: np.ndarray
    hidden_sizes: tuple[int, ...]
    rnn_r2: np.ndarray
    attention_r2: np.ndarray


def ridge_fit(F, Y, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """F: (..., N, p), Y: (..., N, m) -> (W (..., p, m), intercept (..., 1, m)) minimising |Y - F W - c|^2 + alpha |W|^2.

    The closed form W = (Fc^T Fc + alpha I)^-1 Fc^T Yc on centred data; leading axes are independent fits. The sums
    Fc^T Fc and Fc^T Yc are taken in F's dtype (float32 in the probe), the solve in float64.
    """
    F = np.asarray(F)
    if not np.issubdtype(F.dtype, np.floating):
        F = F.astype(np.float64)
    Y = np.asarray(Y, dtype=F.dtype)
    f_mean, y_mean = F.mean(axis=-2, keepdims=True), Y.mean(axis=-2, keepdims=True)
    Fc, Yc = F - f_mean, Y - y_mean
    Ft = np.swapaxes(Fc, -1, -2)
    gram = (Ft @ Fc).astype(np.float64) + alpha * np.eye(F.shape[-1])
    W = np.linalg.solve(gram, (Ft @ Yc).astype(np.float64))
    return W, y_mean.astype(np.float64) - f_mean.astype(np.float64) @ W


def r2_score(Y, Y_hat) -> np.ndarray:
    """Y, Y_hat: (..., N, m) -> (...) 1 - sum (Y - Y_hat)^2 / sum (Y - mean Y)^2, pooled over the m outputs."""
    Y = np.asarray(Y, dtype=np.float64)
    Y_hat = np.asarray(Y_hat, dtype=np.float64)
    total = np.sum((Y - Y.mean(axis=-2, keepdims=True)) ** 2, axis=(-2, -1))
    return 1.0 - np.sum((Y - Y_hat) ** 2, axis=(-2, -1)) / total


def first_word_recall_rnn(H_train, H_test, x0_train, x0_test, alpha: float) -> np.ndarray:
    """H_*: (..., N_*, hidden) final states, x0_*: (N_*, d_in) first words -> (...) held-out R^2 of a ridge read-out."""
    H_train = np.asarray(H_train)
    targets = np.broadcast_to(np.asarray(x0_train, dtype=H_train.dtype), H_train.shape[:-1] + (np.shape(x0_train)[-1],))
    W, c = ridge_fit(H_train, targets, alpha)
    return r2_score(x0_test, np.asarray(H_test, dtype=np.float64) @ W + c)


def first_word_recall_attention(X) -> float:
    """X: (N, T, d_in) -> R^2 of x_0 read off one attention output whose query looks for position 1.

    Keys are one-hot positions, the query is 50 times the first one, values are the words themselves:
    the weight on the first word is e^50 / (e^50 + T - 1), so the output is x_0 up to ~1e-20. No read-out is fitted.
    """
    X = np.asarray(X, dtype=np.float64)
    T = X.shape[-2]
    keys = np.eye(T)
    query = 50.0 * keys[:1]
    out, _ = scaled_dot_product_attention(query, keys, X, scale=False)  # (N, 1, d_in)
    return float(r2_score(X[:, 0, :], out[:, 0, :]))


def probe_sentences(n: int, length: int, seed: SeedLike, d_in: int = 8, word_std: float = 0.7) -> np.ndarray:
    """-> (n, length, d_in) float32 random word vectors N(0, word_std^2 I) (0.7: the typical size of a GloVe entry)."""
    rng = as_generator(seed)
    X = rng.standard_normal(size=(n, length, d_in), dtype=np.float32)
    X *= np.float32(word_std)
    return X


def memory_probe(
    lengths,
    hidden_sizes,
    radius: float,
    seed: SeedLike,
    d_in: int = 8,
    word_std: float = 0.7,
    n_train: int = 1000,
    n_test: int = 250,
    alpha: float = 10.0,
) -> ProbeResult:
    """lengths: (L,) increasing ints >= 1, hidden_sizes: (k,) -> ProbeResult: can the FIRST word be read back from the last state?

    Sentences are random word vectors (probe_sentences), a fresh set per seed; the read-out is fitted on n_train
    sentences and scored on n_test others. Each RNN runs once over sentences of the largest length (in float32): its
    state after L words is the final state of the first L words, and the read-out for length L is fitted as soon as
    the RNN gets there (only the current state is kept). The page's sizes (1000 / 250) keep a cache miss cheap and
    the curves' shape: doubling them moves no R^2 by more than ~0.1 and no 'lost' length by more than 2
    (tests/test_rnn_claims.py), at twice the cost.
    """
    lengths = np.asarray(lengths, dtype=int)
    if lengths.ndim != 1 or lengths.size == 0 or lengths.min() < 1 or np.any(np.diff(lengths) <= 0):
        raise ValueError("lengths must be a non-empty, strictly increasing list of integers >= 1")
    rng = as_generator(seed)
    X = probe_sentences(n_train + n_test, int(lengths.max()), rng, d_in, word_std)
    x0_train, x0_test = X[:n_train, 0], X[n_train:, 0]
    rnn_r2 = np.empty((len(hidden_sizes), lengths.size))
    # Single-threaded BLAS: the products are small, and on a shared CPU two OpenBLAS threads mostly wait for each other.
    with single_blas_thread():
        for i, hidden in enumerate(hidden_sizes):
            weights = elman_weights(d_in, int(hidden), radius, rng)
            H = np.stack([h.copy() for _, h in rnn_states_after(X, weights, lengths)])  # (L, N, hidden): one fit per length
            rnn_r2[i] = first_word_recall_rnn(H[:, :n_train], H[:, n_train:], x0_train, x0_test, alpha)
    return ProbeResult(lengths, tuple(int(h) for h in hidden_sizes), rnn_r2, attention_recall(X[n_train:], lengths))


def attention_recall(X, lengths) -> np.ndarray:
    """X: (N, T, d_in), lengths: (L,) -> (L,) first_word_recall_attention of the first L words, for each L."""
    X = np.asarray(X, dtype=np.float64)
    return np.array([first_word_recall_attention(X[:, : int(L)]) for L in lengths])


@dataclass(frozen=True)
class BestCase:
    """The best case for a recurrent state: lengths (L,), hidden_sizes (k,), d_in, first_r2 (k, L), words_held (k, L)."""

    lengths: np.ndarray
    hidden_sizes: tuple[int, ...]
    d_in: int
    first_r2: np.ndarray
    words_held: np.ndarray

    @property
    def capacity(self) -> np.ndarray:
        """(k,) hidden / d_in: how many d_in-number words a state of ``hidden`` numbers can hold at most."""
        return np.asarray(self.hidden_sizes, dtype=np.float64) / self.d_in


def orthogonal_matrix(n: int, seed: SeedLike) -> np.ndarray:
    """-> (n, n) a random orthogonal matrix (Haar: QR of a Gaussian matrix with the signs of R's diagonal fixed)."""
    q, r = np.linalg.qr(as_generator(seed).normal(size=(n, n)))
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


def linear_recall(W_x, W_h, lengths, ridge: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """W_x: (N, d), W_h: (N, N), lengths: (L,) -> (first_r2 (L,), words_held (L,)) of the linear RNN h_t = W_h h_{t-1} + W_x x_t.

    Exact, with no sampling: for words x_t ~ N(0, s^2 I) the best linear read-out of x_1 from h_T (unlimited data)
    has R^2 = tr(M_1^T G^-1 M_1) / d with M_1 = W_h^(T-1) W_x and G = sum_t M_t M_t^T the state's covariance / s^2.
    words_held = sum over every position t of that R^2 = tr(G^-1 G) / d = rank(G) / d <= N / d: a state of N numbers
    holds at most N / d word vectors of d numbers. ``ridge`` (times G's mean diagonal) keeps the solve stable
    when T d < N (then G is singular, every word can be read back and R^2 is 1 up to ~1e-7).
    """
    W_x, W_h = np.asarray(W_x, dtype=np.float64), np.asarray(W_h, dtype=np.float64)
    N, d = W_x.shape
    wanted = [int(L) for L in lengths]
    if wanted != sorted(set(wanted)) or not wanted or wanted[0] < 1:
        raise ValueError("lengths must be a non-empty, strictly increasing list of integers >= 1")
    drive = W_x @ W_x.T
    M, G = W_x, drive
    first, held = [], []
    for T in range(1, wanted[-1] + 1):
        if T > 1:
            M = W_h @ M
            G = W_h @ G @ W_h.T + drive
        if T in wanted:
            reg = G + ridge * np.trace(G) / N * np.eye(N)
            solved = np.linalg.solve(reg, np.concatenate([M, G], axis=1))
            first.append(np.sum(M * solved[:, :d]) / d)
            held.append(np.trace(solved[:, d:]) / d)
    return np.array(first), np.array(held)


def best_case_memory(lengths, hidden_sizes, seed: SeedLike, d_in: int = 8) -> BestCase:
    """lengths: (L,), hidden_sizes: (k,) -> BestCase: the first-word R^2 of a norm-preserving linear RNN per size.

    The most a recurrent state can do: no tanh to squash, an orthogonal W_h (nothing fades, nothing explodes),
    W_x ~ N(0, 1/d_in), and the best linear read-out computed exactly (linear_recall). Independent of the spectral
    radius; the seed draws W_x and W_h (its own stream, apart from memory_probe's).
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng([as_generator(seed) and int(seed), 1])
    lengths = np.asarray(lengths, dtype=int)
    first, held = [], []
    with single_blas_thread():
        for hidden in hidden_sizes:
            W_x = rng.normal(0.0, 1.0 / np.sqrt(d_in), size=(int(hidden), d_in))
            f, w = linear_recall(W_x, orthogonal_matrix(int(hidden), rng), lengths)
            first.append(f)
            held.append(w)
    return BestCase(lengths, tuple(int(h) for h in hidden_sizes), int(d_in), np.array(first), np.array(held))


def first_length_below(lengths, r2, level: float) -> int | None:
    """lengths: (L,), r2: (L,) -> the first length whose R^2 is below ``level`` (None if none is)."""
    below = np.flatnonzero(np.asarray(r2) < level)
    return int(np.asarray(lengths)[below[0]]) if below.size else None


def last_length_at_least(lengths, r2, level: float) -> int | None:
    """lengths: (L,), r2: (L,) -> the last length of the leading run with R^2 >= ``level`` (None if the first is below)."""
    below = np.flatnonzero(np.asarray(r2) < level)
    stop = below[0] if below.size else len(r2)
    return int(np.asarray(lengths)[stop - 1]) if stop > 0 else None
