"""The causal mask: the same attention with and without the future, generation step by step, and a leak test.

Token vectors X are either GloVe vectors or seeded random ones (one fixed random vector per word, like an
untrained embedding table). Q, K and V are X times seeded random (untrained) projections W_Q, W_K, W_V, so the
scores are not dominated by each token's match with itself. The causal mask is
attention_core.attention.causal_mask (True = may attend); masked scores are -inf, so their weights are exactly 0.
"""

from __future__ import annotations

import csv
import io
import zlib
from dataclasses import dataclass

import numpy as np

from attention_core.attention import (
    SeedLike,
    as_generator,
    attention_scores,
    causal_mask,
    random_projection,
    softmax,
)

RANDOM_DIM = 16  # feature size of the seeded random word vectors
MODES = ("bidirectional", "causal")


def random_word_vectors(tokens, d: int, seed: int) -> np.ndarray:
    """tokens: list[str] (n) -> (n, d) standard-normal vectors; the same word always gets the same vector for one seed."""
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    rows = [np.random.default_rng([int(seed), zlib.crc32(str(tok).encode("utf-8"))]).normal(size=d) for tok in tokens]
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), d)


def replacement_vector(X, seed: int) -> np.ndarray:
    """X: (n, d) -> (d,) a seeded random vector whose entries have the root-mean-square size of X's entries."""
    X = np.asarray(X, dtype=np.float64)
    rms = float(np.sqrt(np.mean(X**2))) if X.size else 1.0
    rng = np.random.default_rng([int(seed), 104729])  # its own stream, apart from the word vectors
    return rng.normal(size=X.shape[-1]) * (rms if rms > 0 else 1.0)


def qkv_projections(d: int, seed: SeedLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """d -> (W_Q, W_K, W_V), each (d, d), Glorot-normal from one seeded generator (an untrained layer)."""
    rng = as_generator(seed)
    return tuple(random_projection(d, d, rng) for _ in range(3))


@dataclass(frozen=True)
class MaskedAttention:
    """One attention pass. scores (n, n) hold -inf where masked; weights (n, n); output (n, d)."""

    mask: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    output: np.ndarray


def attend(X, projections, causal: bool) -> MaskedAttention:
    """X: (n, d), projections: 3 x (d, d) -> MaskedAttention of softmax(Q K^T / sqrt(d) + M) V, M from the mask."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(f"X must be (n, d) with n >= 1, got shape {X.shape}")
    W_q, W_k, W_v = projections
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    n = X.shape[0]
    mask = causal_mask(n) if causal else np.ones((n, n), dtype=bool)
    scores = attention_scores(Q, K, mask=mask)
    weights = softmax(scores, axis=-1)
    return MaskedAttention(mask, scores, weights, weights @ V)


def causal_vs_bidirectional(X, seed: SeedLike) -> dict[str, MaskedAttention]:
    """X: (n, d) -> {"bidirectional": ..., "causal": ...}, both with the same seeded projections."""
    projections = qkv_projections(np.asarray(X).shape[-1], seed)
    return {mode: attend(X, projections, causal=(mode == "causal")) for mode in MODES}


def generation_frames(weights) -> np.ndarray:
    """weights: (n, n) causal weights -> (n, n, n); frame k-1 shows the first k rows, NaN where masked or not yet generated."""
    W = np.asarray(weights, dtype=np.float64)
    n = W.shape[0]
    rows = np.arange(n)[:, None]
    cols = np.arange(n)[None, :]
    frames = np.empty((n, n, n))
    for k in range(1, n + 1):
        frames[k - 1] = np.where((cols <= rows) & (rows < k), W, np.nan)
    return frames


def mask_facts(results: dict[str, MaskedAttention]) -> dict[str, float | int | None]:
    """results of causal_vs_bidirectional (n tokens) -> the numbers the page quotes about the two weight matrices.

    masked: cells above the diagonal, n (n - 1) / 2; causal_max_above / bidirectional_min_above: the largest causal
    and smallest bidirectional weight above the diagonal (None when n = 1); first_self: the first row's own weight
    under the causal mask; row_sum_error: the largest |row sum - 1| of either matrix.
    """
    causal, bi = results["causal"].weights, results["bidirectional"].weights
    n = causal.shape[0]
    above = np.triu(np.ones((n, n), dtype=bool), k=1)
    return {
        "masked": int(above.sum()),
        "causal_max_above": float(causal[above].max()) if n > 1 else None,
        "bidirectional_min_above": float(bi[above].min()) if n > 1 else None,
        "first_self": float(causal[0, 0]),
        "row_sum_error": float(max(np.abs(causal.sum(axis=1) - 1).max(), np.abs(bi.sum(axis=1) - 1).max())),
    }


def repeated_word(words, results: dict[str, MaskedAttention]) -> dict | None:
    """words: (n) with results of causal_vs_bidirectional -> a word that occurs more than once, or None.

    The word whose last occurrence comes last (in "... the bank ... the river bank", "bank"): {"word", "first",
    "last" (positions of its first and last occurrence), "bidirectional" / "causal": the largest |difference| of
    those two output rows}. One word has one vector, so without the mask its outputs are the same; the mask lets the
    later occurrence see more words than the first.
    """
    first: dict[str, int] = {}
    found = None
    for j, word in enumerate(words):
        if word in first:
            found = (word, first[word], j)
        first.setdefault(word, j)
    if found is None:
        return None
    word, i, j = found
    gaps = {mode: float(np.max(np.abs(results[mode].output[j] - results[mode].output[i]))) for mode in MODES}
    return {"word": word, "first": i, "last": j, **gaps}


@dataclass(frozen=True)
class LeakResult:
    """Changing token j: delta[mode] (n, d) = output after - output before; row_change[mode] (n,) = max |delta| per row."""

    position: int
    delta: dict[str, np.ndarray]
    row_change: dict[str, np.ndarray]

    def unchanged_before(self, mode: str = "causal") -> bool:
        """True when every output row before position j is bit-for-bit identical (compared with ==)."""
        return bool(np.all(self.delta[mode][: self.position] == 0.0))

    def rows_unchanged(self, mode: str) -> np.ndarray:
        """-> (n,) bool, True for each output row that is bit-for-bit identical after the change."""
        return np.all(self.delta[mode] == 0.0, axis=1)

    def rows_changed(self, mode: str, start: int = 0) -> int:
        """-> how many output rows from ``start`` on changed at all."""
        return int(np.count_nonzero(self.row_change[mode][start:]))

    def max_change_before(self, mode: str = "causal") -> float | None:
        """-> the largest |delta| over the rows before position j (None when j is the first position)."""
        return float(np.max(self.row_change[mode][: self.position])) if self.position > 0 else None


def leak_test(X, position: int, new_vector, seed: SeedLike) -> LeakResult:
    """X: (n, d), new_vector: (d,) -> LeakResult of replacing X[position] by new_vector, causal vs bidirectional."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    if not 0 <= position < n:
        raise ValueError(f"position must be in 0..{n - 1}, got {position}")
    changed = X.copy()
    changed[position] = np.asarray(new_vector, dtype=np.float64).reshape(d)
    projections = qkv_projections(d, seed)
    delta, row_change = {}, {}
    for mode in MODES:
        before = attend(X, projections, causal=(mode == "causal")).output
        after = attend(changed, projections, causal=(mode == "causal")).output
        delta[mode] = after - before
        row_change[mode] = np.max(np.abs(delta[mode]), axis=1)
    return LeakResult(position, delta, row_change)


def _csv_cell(text: str) -> str:
    """A token as a CSV cell that spreadsheets will not run as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def matrices_csv(tokens, results: dict[str, MaskedAttention]) -> str:
    """tokens (n), results of causal_vs_bidirectional -> long-format CSV: matrix, query/key position and token, value."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["matrix", "query_position", "query_token", "key_position", "key_token", "value"])
    for mode in MODES:
        for kind in ("scores", "weights"):
            M = getattr(results[mode], kind)
            for i, q in enumerate(tokens):
                for j, k in enumerate(tokens):
                    writer.writerow([f"{kind}_{mode}", i + 1, _csv_cell(q), j + 1, _csv_cell(k), repr(float(M[i, j]))])
    return out.getvalue()
