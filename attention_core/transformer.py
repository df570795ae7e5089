"""From attention to a Transformer block: order-blindness, sinusoidal positional encoding, the position-wise
feed-forward layer, residual connections and layer norm (Vaswani et al. 2017, "Attention is all you need").

Every weight here is seeded and untrained (Glorot-normal, biases 0, layer-norm gain 1 and bias 0: their values at
initialisation). The block is the paper's post-norm form: H = LayerNorm(X + Attn(X)), Y = LayerNorm(H + FFN(H)).
One attention head; a permutation is an index array ``perm`` with (P X)[k] = X[perm[k]].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import SeedLike, as_generator, random_projection, scaled_dot_product_attention

FFN_FACTOR = 4  # the hidden layer of the feed-forward network is 4 x d_model wide (2048 = 4 x 512 in the paper)
LN_EPS = 1e-5
PE_BASE = 10000.0


def seeded_permutation(n: int, seed: int) -> np.ndarray:
    """n -> (n,) a seeded permutation of 0..n-1 that moves at least one token when n > 1."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    perm = np.random.default_rng([int(seed), 7919]).permutation(n)
    if n > 1 and np.array_equal(perm, np.arange(n)):
        perm = np.roll(perm, 1)  # the identity would show nothing
    return perm


def sinusoidal_encoding(n: int, d: int) -> np.ndarray:
    """(n, d) PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)); positions from 0."""
    if n < 0 or d < 1:
        raise ValueError(f"need n >= 0 and d >= 1, got n={n}, d={d}")
    pos = np.arange(n, dtype=np.float64)[:, None]
    pair = np.arange(d) // 2  # i of columns 2i and 2i+1
    angle = pos / PE_BASE ** (2.0 * pair / d)
    return np.where(np.arange(d) % 2 == 0, np.sin(angle), np.cos(angle))


def self_attention(X, projections) -> np.ndarray:
    """X: (n, d), projections: 3 x (d, d) -> (n, d) softmax(Q K^T / sqrt(d)) V with Q, K, V = X W_Q, X W_K, X W_V."""
    X = np.asarray(X, dtype=np.float64)
    W_q, W_k, W_v = projections
    return scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v)[0]


def layer_norm(X, eps: float = LN_EPS) -> np.ndarray:
    """X: (..., d) -> same shape, each row shifted to mean 0 and scaled to variance 1 (gain 1, bias 0)."""
    X = np.asarray(X, dtype=np.float64)
    mean = X.mean(axis=-1, keepdims=True)
    var = X.var(axis=-1, keepdims=True)
    return (X - mean) / np.sqrt(var + eps)


def relu(x) -> np.ndarray:
    """x: (...) -> same shape, max(x, 0)."""
    return np.maximum(np.asarray(x, dtype=np.float64), 0.0)


def gelu(x) -> np.ndarray:
    """x: (...) -> same shape, GELU in the tanh form of BERT/GPT-2: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


ACTIVATIONS = {"relu": relu, "gelu": gelu}


@dataclass(frozen=True)
class BlockWeights:
    """One untrained block: attention (W_Q, W_K, W_V: (d, d)), FFN W1 (d, 4d), b1 (4d,), W2 (4d, d), b2 (d,)."""

    attention: tuple
    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray

    @property
    def d_model(self) -> int:
        return self.W1.shape[0]


def block_weights(d: int, seed: SeedLike) -> BlockWeights:
    """d -> BlockWeights, Glorot-normal matrices from one seeded generator, biases 0 (a freshly initialised block)."""
    rng = as_generator(seed)
    attention = tuple(random_projection(d, d, rng) for _ in range(3))
    hidden = FFN_FACTOR * d
    return BlockWeights(attention, random_projection(d, hidden, rng), np.zeros(hidden),
                        random_projection(hidden, d, rng), np.zeros(d))


def feed_forward(X, weights: BlockWeights, activation: str = "relu") -> np.ndarray:
    """X: (n, d) -> (n, d) act(X W1 + b1) W2 + b2, the same two-layer network applied to each row on its own."""
    X = np.asarray(X, dtype=np.float64)
    return ACTIVATIONS[activation](X @ weights.W1 + weights.b1) @ weights.W2 + weights.b2


def ffn_hidden(X, weights: BlockWeights, activation: str = "relu") -> np.ndarray:
    """X: (n, d) -> (n, 4d) the hidden layer act(X W1 + b1) of the feed-forward network."""
    return ACTIVATIONS[activation](np.asarray(X, dtype=np.float64) @ weights.W1 + weights.b1)


STEPS = ("input", "with_pe", "attention", "add_norm_1", "ffn_hidden", "ffn", "add_norm_2")


def transformer_block(X, weights: BlockWeights, activation: str = "relu", positional: bool = True) -> dict:
    """X: (n, d) -> {step: array} for STEPS; every step is (n, d) except "ffn_hidden" (n, 4d); "add_norm_2" is the output.

    with_pe = X + PE (or X), attention = Attn(with_pe), add_norm_1 = LayerNorm(with_pe + attention),
    ffn = FFN(add_norm_1), add_norm_2 = LayerNorm(add_norm_1 + ffn).
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    Z = X + sinusoidal_encoding(n, d) if positional else X.copy()
    A = self_attention(Z, weights.attention)
    H = layer_norm(Z + A)
    F = feed_forward(H, weights, activation)
    return {"input": X, "with_pe": Z, "attention": A, "add_norm_1": H,
            "ffn_hidden": ffn_hidden(H, weights, activation), "ffn": F, "add_norm_2": layer_norm(H + F)}


@dataclass(frozen=True)
class PermutationCheck:
    """Shuffling the tokens by ``perm`` (n,): row_change[mode] (n,) = max |output of token perm[k] after - before|
    at its new position k, mode "plain" (attention of X) or "positional" (attention of X + PE);
    max_difference[mode] = max over all entries of |P Attn(Z) - Attn(P X (+ PE))|."""

    perm: np.ndarray
    row_change: dict
    max_difference: dict

    def tokens_changed(self, mode: str, tol: float = 1e-9) -> int:
        return int(np.sum(self.row_change[mode] > tol))


def permutation_check(X, perm, projections) -> PermutationCheck:
    """X: (n, d), perm: (n,) -> PermutationCheck: without PE the shuffled outputs are the old rows reordered (up to
    rounding); with PE added after shuffling (position k gets PE[k]) they are new numbers."""
    X = np.asarray(X, dtype=np.float64)
    perm = np.asarray(perm, dtype=int)
    n, d = X.shape
    pe = sinusoidal_encoding(n, d)
    change, biggest = {}, {}
    for mode, add in (("plain", 0.0), ("positional", pe)):
        before = self_attention(X + add, projections)
        after = self_attention(X[perm] + add, projections)
        diff = np.abs(after - before[perm])
        change[mode] = diff.max(axis=1) if n else np.zeros(0)
        biggest[mode] = float(diff.max()) if diff.size else 0.0
    return PermutationCheck(perm, change, biggest)


@dataclass(frozen=True)
class LocalityCheck:
    """Replacing input row j: row_change[mode] (n,) = max |output row after - before|, mode "ffn" or "attention"."""

    position: int
    row_change: dict

    def rows_changed(self, mode: str, tol: float = 1e-12) -> int:
        return int(np.sum(self.row_change[mode] > tol))

    def others_max(self, mode: str) -> float:
        """The largest change in any row other than the replaced one (exactly 0.0 for the FFN)."""
        rest = np.delete(self.row_change[mode], self.position)
        return float(rest.max()) if rest.size else 0.0


def locality_check(H, position: int, new_vector, weights: BlockWeights, activation: str = "relu") -> LocalityCheck:
    """H: (n, d), new_vector: (d,) -> LocalityCheck of putting new_vector in row ``position`` of the input of the
    feed-forward layer and of the attention layer (same input, same weights)."""
    H = np.asarray(H, dtype=np.float64)
    if not 0 <= position < len(H):
        raise ValueError(f"position must be in 0..{len(H) - 1}, got {position}")
    H2 = H.copy()
    H2[position] = new_vector
    change = {
        "ffn": np.abs(feed_forward(H2, weights, activation) - feed_forward(H, weights, activation)).max(axis=1),
        "attention": np.abs(self_attention(H2, weights.attention) - self_attention(H, weights.attention)).max(axis=1),
    }
    return LocalityCheck(position, change)


def row_stats(X) -> dict:
    """X: (n, d) -> {"max_abs_mean": max_i |mean of row i|, "var_min", "var_max": the extreme row variances}."""
    X = np.asarray(X, dtype=np.float64)
    var = X.var(axis=-1)
    return {"max_abs_mean": float(np.abs(X.mean(axis=-1)).max()), "var_min": float(var.min()),
            "var_max": float(var.max())}
