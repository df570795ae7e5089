"""The RNN bottleneck: an Elman RNN in NumPy and its exact input Jacobians (the memory probe: rnn_probe).

The RNN reads x_1 .. x_T one after another, h_t = tanh(W_x x_t + W_h h_{t-1} + b), so the last
state h_T is all that is left of the sentence. Two measurements show what that costs:

- how strongly h_T still depends on each input, the norm of the Jacobian d h_T / d x_t, computed
  exactly by the chain rule, next to the same quantity for one attention layer (every input is one
  step away from the output): this module;
- how well the FIRST input can be read back from h_T by the best linear read-out (ridge regression
  fitted on training sentences, R^2 on held-out ones), against sentence length: attention_core.rnn_probe.

Vectors are rows: X is (T, d_in), states H are (T, hidden). Attention uses the conventions of
attention_core.attention (rows are tokens, Q = X W_q).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_core.attention import SeedLike, as_generator, random_projection, scaled_dot_product_attention, softmax
from attention_core.blas import single_blas_thread


@dataclass(frozen=True)
class ElmanWeights:
    """An Elman RNN's parameters: W_x (hidden, d_in), W_h (hidden, hidden), b (hidden,)."""

    W_x: np.ndarray
    W_h: np.ndarray
    b: np.ndarray

    @property
    def hidden(self) -> int:
        return self.W_h.shape[0]

    @property
    def d_in(self) -> int:
        return self.W_x.shape[1]


@dataclass(frozen=True)
class AttentionWeights:
    """One attention layer's projections, each (d_in, d_k): Q = X W_q, K = X W_k, V = X W_v."""

    W_q: np.ndarray
    W_k: np.ndarray
    W_v: np.ndarray


def spectral_radius(W) -> float:
    """W: (n, n) -> the largest absolute eigenvalue."""
    return float(np.max(np.abs(np.linalg.eigvals(np.asarray(W, dtype=np.float64)))))


def scale_to_spectral_radius(W, radius: float) -> np.ndarray:
    """W: (n, n) -> (n, n) W rescaled so that its spectral radius equals ``radius`` (> 0)."""
    if not np.isfinite(radius) or radius <= 0:
        raise ValueError(f"the spectral radius must be a positive finite number, got {radius!r}")
    W = np.asarray(W, dtype=np.float64)
    current = spectral_radius(W)
    if current == 0:
        raise ValueError("a matrix with spectral radius 0 (nilpotent) cannot be rescaled to another radius")
    return W * (radius / current)


def elman_weights(d_in: int, hidden: int, radius: float, seed: SeedLike, bias_std: float = 0.1) -> ElmanWeights:
    """-> ElmanWeights with W_x (hidden, d_in) ~ N(0, 1/d_in), W_h (hidden, hidden) Gaussian scaled to ``radius``, b ~ N(0, bias_std^2)."""
    if d_in < 1 or hidden < 1:
        raise ValueError(f"d_in and hidden must be >= 1, got {d_in} and {hidden}")
    rng = as_generator(seed)
    W_x = rng.normal(0.0, 1.0 / np.sqrt(d_in), size=(hidden, d_in))
    with single_blas_thread():  # LAPACK threads only wait for each other at these sizes
        W_h = scale_to_spectral_radius(rng.normal(0.0, 1.0 / np.sqrt(hidden), size=(hidden, hidden)), radius)
    b = rng.normal(0.0, bias_std, size=hidden)
    return ElmanWeights(W_x, W_h, b)


def rnn_states(X, weights: ElmanWeights, h0=None) -> np.ndarray:
    """X: (..., T, d_in) -> H: (..., T, hidden), H[..., t, :] = tanh(W_x x_t + W_h h_{t-1} + b), h_{-1} = h0 (zeros)."""
    X = np.asarray(X, dtype=np.float64)
    if X.shape[-1] != weights.d_in:
        raise ValueError(f"inputs have {X.shape[-1]} features but W_x expects {weights.d_in}")
    drive = X @ weights.W_x.T + weights.b  # the input part of every step at once: (..., T, hidden)
    h = np.zeros(X.shape[:-2] + (weights.hidden,)) if h0 is None else np.broadcast_to(h0, X.shape[:-2] + (weights.hidden,))
    H = np.empty(X.shape[:-1] + (weights.hidden,))
    for t in range(X.shape[-2]):  # the recurrence itself cannot be parallelised: step t needs h_{t-1}
        h = np.tanh(drive[..., t, :] + h @ weights.W_h.T)
        H[..., t, :] = h
    return H


def rnn_states_after(X, weights: ElmanWeights, lengths):
    """X: (N, T, d_in), lengths: increasing ints in 1..T -> yields (L, h (N, hidden)), the state after the first L words.

    The same recurrence as rnn_states, but it keeps only the current state, so memory stays O(N * hidden). It computes
    in X's floating dtype (float32 in the memory probe: half the time of float64, the same R^2 to ~1e-6).
    """
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.floating):
        X = X.astype(np.float64)
    wanted = [int(L) for L in lengths]
    if wanted != sorted(set(wanted)) or not wanted or wanted[0] < 1 or wanted[-1] > X.shape[-2]:
        raise ValueError(f"lengths must increase strictly within 1..{X.shape[-2]}, got {wanted[:5]}...")
    W_x_t, W_h_t = weights.W_x.T.astype(X.dtype), weights.W_h.T.astype(X.dtype)
    h = np.zeros(X.shape[:-2] + (weights.hidden,), dtype=X.dtype)
    steps = np.ascontiguousarray(np.moveaxis(X[..., : wanted[-1], :], -2, 0))  # time-major: each x_t is contiguous
    drive = steps @ W_x_t  # every step's input part at once: (T, N, hidden)
    drive += weights.b.astype(X.dtype)
    want = set(wanted)
    for t in range(wanted[-1]):
        z = drive[t]  # the same sums as tanh(x_t W_x^T + b + h W_h^T), written into the drive buffer (no copies)
        z += h @ W_h_t
        h = np.tanh(z, out=z)
        if t + 1 in want:
            yield t + 1, h


def attention_weights_for(d_in: int, d_k: int, seed: SeedLike) -> AttentionWeights:
    """-> AttentionWeights with three Glorot-normal (d_in, d_k) projections, drawn in the order q, k, v."""
    rng = as_generator(seed)
    return AttentionWeights(*(random_projection(d_in, d_k, rng) for _ in range(3)))


def attention_last_output(X, weights: AttentionWeights) -> np.ndarray:
    """X: (T, d_in) -> y: (d_k,), the attention output at the last position (its query reads every position)."""
    X = np.asarray(X, dtype=np.float64)
    out, _ = scaled_dot_product_attention(X[-1:] @ weights.W_q, X @ weights.W_k, X @ weights.W_v)
    return out[0]


def attention_input_jacobians(X, weights: AttentionWeights) -> np.ndarray:
    """X: (T, d_in) -> J: (T, d_k, d_in), J[t] = d y / d x_t for y = attention_last_output(X) (analytic).

    y = sum_j a_j v_j with a = softmax(q k_j / sqrt(d_k)), q = x_T W_q, k_j = x_j W_k, v_j = x_j W_v.
    x_t reaches y in one step: through its value (a_t W_v^T), its key (a_t (v_t - y) (W_k q)^T / sqrt(d_k)),
    and, for the last position only, through the query.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"attention_input_jacobians takes one sentence (T, d_in), got shape {X.shape}")
    d_k = weights.W_q.shape[1]
    q = X[-1] @ weights.W_q
    K, V = X @ weights.W_k, X @ weights.W_v
    a = softmax(K @ q / np.sqrt(d_k))
    y = a @ V
    spread = a[:, None] * (V - y)  # (T, d_k): d y / d score_j = a_j (v_j - y)
    J = a[:, None, None] * weights.W_v.T[None] + spread[:, :, None] * (weights.W_k @ q / np.sqrt(d_k))[None, None, :]
    J[-1] += spread.T @ (K @ weights.W_q.T) / np.sqrt(d_k)  # the query path: d score_j / d x_T = W_q k_j / sqrt(d_k)
    return J


def spectral_norms(J) -> np.ndarray:
    """J: (T, m, n) -> (T,) the largest singular value of each J[t] (the biggest gain from x_t to the output).

    sqrt of the largest eigenvalue of the smaller Gram matrix (J^T J or J J^T): the same value as an SVD to ~1e-15
    relative, several times faster for the page's (40, 256, 50) Jacobians.
    """
    J = np.asarray(J, dtype=np.float64)
    Jt = np.swapaxes(J, -1, -2)
    gram = Jt @ J if J.shape[-1] <= J.shape[-2] else J @ Jt
    return np.sqrt(np.maximum(np.linalg.eigvalsh(gram)[..., -1], 0.0))


def rnn_jacobian_norms(X, weights: ElmanWeights, dtype=np.float32) -> np.ndarray:
    """X: (T, d_in) -> (T,) the spectral norms of d h_T / d x_t, the RNN's last state by each input.

    The backward chain d h_T / d h_t runs in ``dtype`` (float32: half the time of float64) and is renormalised at
    every step, its scale kept as a float64 logarithm, so nothing underflows even at radius 0.1 (norms ~1e-44).
    Agrees with the float64 Jacobians (tests/reference_rnn.py) to ~1e-6 relative (tests/test_rnn_claims.py).
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"rnn_jacobian_norms takes one sentence (T, d_in), got shape {X.shape}")
    slopes = 1.0 - rnn_states(X, weights) ** 2  # (T, hidden): D_t, in float64
    W_x, W_h = weights.W_x.astype(dtype), weights.W_h.astype(dtype)
    T = X.shape[0]
    J = np.empty((T, weights.hidden, weights.d_in), dtype=dtype)
    log_scale = np.zeros(T)
    back, log_back = np.eye(weights.hidden), 0.0  # d h_T / d h_t = exp(log_back) * back
    for t in range(T - 1, -1, -1):
        through = back * slopes[t]  # (d h_T / d h_t) D_t, before scaling
        size = float(np.max(np.abs(through)))
        if size == 0.0 or not math.isfinite(size):  # a saturated tanh (slope exactly 0): nothing earlier gets through
            J[: t + 1] = 0.0
            log_scale[: t + 1] = 0.0
            break
        through = (through / size).astype(dtype)
        log_scale[t] = log_back + math.log(size)
        J[t] = through @ W_x
        back, log_back = through @ W_h, log_scale[t]
    return spectral_norms(J) * np.exp(log_scale)


def path_lengths(n: int) -> tuple[np.ndarray, np.ndarray]:
    """n -> (rnn (n,), attention (n,)): how many layers the signal of word t passes to reach the last output.

    For the RNN, word t (1-based) passes h_t, h_{t+1}, ..., h_n: n - t + 1 steps; for attention always 1.
    """
    if n < 1:
        raise ValueError(f"path_lengths needs n >= 1, got {n}")
    return np.arange(n, 0, -1), np.ones(n, dtype=int)


def sequential_steps(n: int) -> dict[str, int]:
    """n -> {"rnn": steps that must run one after another, "attention": 1, "pairs": n * n scored at once}."""
    if n < 1:
        raise ValueError(f"sequential_steps needs n >= 1, got {n}")
    return {"rnn": n, "attention": 1, "pairs": n * n}


@dataclass(frozen=True)
class Profile:
    """Per position t: rnn_norm, attention_norm (T,) spectral norms of the Jacobians; rnn_steps, attention_steps (T,)."""

    rnn_norm: np.ndarray
    attention_norm: np.ndarray
    rnn_steps: np.ndarray
    attention_steps: np.ndarray


def _profile_draws(d_in: int, hidden: int, seed: int) -> tuple[ElmanWeights, float, AttentionWeights]:
    """-> (the RNN with its W_h as drawn, that W_h's spectral radius, the attention layer), read-only.

    The caller rescales W_h to the spectral radius it wants (ui/rnn.py caches whole profiles, per setting).
    """
    rng = as_generator(seed)
    W_x = rng.normal(0.0, 1.0 / np.sqrt(d_in), size=(hidden, d_in))
    W_h = rng.normal(0.0, 1.0 / np.sqrt(hidden), size=(hidden, hidden))
    b = rng.normal(0.0, 0.1, size=hidden)
    att = attention_weights_for(d_in, hidden, rng)
    for a in (W_x, W_h, b, att.W_q, att.W_k, att.W_v):
        a.flags.writeable = False
    return ElmanWeights(W_x, W_h, b), spectral_radius(W_h), att


def influence_profile(X, hidden: int, radius: float, seed: SeedLike) -> Profile:
    """X: (T, d_in) -> Profile: how much the last output depends on each x_t, for a seeded RNN and attention layer.

    The RNN (hidden units, recurrent spectral radius ``radius``) and the attention layer (d_k = hidden)
    are drawn from one generator, RNN first (the same weights as elman_weights then attention_weights_for).
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(f"influence_profile needs at least one input vector (T, d_in), got shape {X.shape}")
    if hidden < 1:
        raise ValueError(f"d_in and hidden must be >= 1, got {X.shape[1]} and {hidden}")
    if not np.isfinite(radius) or radius <= 0:
        raise ValueError(f"the spectral radius must be a positive finite number, got {radius!r}")
    rnn_steps, attention_steps = path_lengths(X.shape[0])
    with single_blas_thread():  # small products: see rnn_probe.memory_probe
        if isinstance(seed, np.random.Generator):
            rng = seed
            rnn = elman_weights(X.shape[1], hidden, radius, rng)
            att = attention_weights_for(X.shape[1], hidden, rng)
        else:
            drawn, current, att = _profile_draws(X.shape[1], int(hidden), int(as_generator(seed) and seed))
            if current == 0:
                raise ValueError("a matrix with spectral radius 0 (nilpotent) cannot be rescaled to another radius")
            rnn = ElmanWeights(drawn.W_x, drawn.W_h * (radius / current), drawn.b)  # = scale_to_spectral_radius
        rnn_norm = rnn_jacobian_norms(X, rnn)
        attention_norm = spectral_norms(attention_input_jacobians(X, att))
    return Profile(rnn_norm, attention_norm, rnn_steps, attention_steps)
