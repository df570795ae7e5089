"""The tiny GPT itself: an attention-only transformer, its forward pass, its backward pass written by hand, and Adam.

    x_0     = W_E[tokens] + W_pos                          (B, T, d)   token + learned position
    layer l, head h:
      q, k, v = x_l W_Q[l, h], x_l W_K[l, h], x_l W_V[l, h]  (B, T, d_head) each, d_head = d / H
      a       = softmax(q k^T / sqrt(d_head) + causal mask)  (B, T, T): the head's attention map, kept
      x_{l+1} = x_l + sum_h (a v) W_O[l, h]                  no MLP, no layer norm: each head adds to the stream
    logits  = x_L W_U                                      (B, T, V)
    loss    = mean over every position t < T - 1 of -log softmax(logits_t)[tokens_{t+1}]

``grads`` runs the same forward pass keeping what the backward pass needs, then walks back through it: each line of
``_backward`` is the derivative of one line of ``forward``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import as_generator, log_softmax, softmax

NAMES = ("W_E", "W_pos", "W_Q", "W_K", "W_V", "W_O", "W_U")


@dataclass(frozen=True)
class Config:
    """Every size and training setting; the defaults are the page's default run (2 layers x 2 heads)."""

    n_layer: int = 2
    n_head: int = 2
    d_model: int = 32
    vocab: int = 32
    seq_len: int = 24
    segment_min: int = 3  # the repeated segment's length is drawn from segment_min..segment_max
    segment_max: int = 12
    learning_rate: float = 0.01
    batch_size: int = 64
    steps: int = 1500
    init_std: float = 0.1
    dtype: str = "float32"
    eval_size: int = 256  # the fixed evaluation set the scores are measured on,
    eval_seed: int = 20220308  # drawn from its own seed: every run of a configuration is scored on the same sequences

    def __post_init__(self):
        if self.n_layer < 1 or self.n_head < 1 or self.d_model % self.n_head:
            raise ValueError(f"need n_layer >= 1 and n_head dividing d_model, got {self.n_layer}, {self.n_head}, "
                             f"{self.d_model}")
        if not 1 <= self.segment_min <= self.segment_max or 2 * self.segment_max > self.seq_len:
            raise ValueError(f"segments of {self.segment_min}-{self.segment_max} tokens, twice, must fit in "
                             f"{self.seq_len} tokens")
        if self.segment_max > self.vocab:
            raise ValueError(f"a segment of {self.segment_max} distinct tokens needs a vocabulary that large")
        if not (self.learning_rate > 0 and self.batch_size >= 1 and self.steps >= 0 and self.eval_size >= 1):
            raise ValueError("learning_rate must be > 0, batch_size and eval_size >= 1, steps >= 0")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_head


def shapes(config: Config) -> dict[str, tuple[int, ...]]:
    """-> every parameter's shape. Weights are (in, out), y = x @ W; W_Q[l, h] is layer l's head h's query matrix."""
    L, H, d, dh, V, T = config.n_layer, config.n_head, config.d_model, config.d_head, config.vocab, config.seq_len
    return {"W_E": (V, d), "W_pos": (T, d), "W_Q": (L, H, d, dh), "W_K": (L, H, d, dh), "W_V": (L, H, d, dh),
            "W_O": (L, H, dh, d), "W_U": (d, V)}


def init(config: Config, seed) -> dict[str, np.ndarray]:
    """seed -> params {name: array of shapes(config)[name]}, every entry N(0, init_std), drawn in NAMES order."""
    rng = as_generator(seed)
    return {name: rng.normal(0.0, config.init_std, size=shape).astype(config.dtype)
            for name, shape in shapes(config).items()}


def side_by_side(W) -> np.ndarray:
    """W: (H, d, dh), one matrix a head -> (d, H*dh): the heads' columns side by side, so one product serves all."""
    H, d, dh = W.shape
    return W.transpose(1, 0, 2).reshape(d, H * dh)


def split(x2d, B: int, H: int) -> np.ndarray:
    """x2d: (B*T, H*dh) -> (B, H, T, dh), contiguous: one block per head."""
    BT, Hdh = x2d.shape
    return np.ascontiguousarray(x2d.reshape(B, BT // B, H, Hdh // H).transpose(0, 2, 1, 3))


def merge(x) -> np.ndarray:
    """x: (B, H, T, dh) -> (B*T, H*dh): the heads side by side again (the inverse of split)."""
    B, H, T, dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B * T, H * dh)


def forward(params, tokens, knock_out=None) -> tuple[np.ndarray, list[np.ndarray], dict]:
    """params, tokens: (B, T) ints -> (logits (B, T, V), maps [L arrays (B, H, T, T)], what the backward pass needs).

    knock_out: (L, H) booleans, True where a head's output is replaced by zeros (the head switched off).
    """
    tokens = np.asarray(tokens)
    B, T = tokens.shape
    L, H, d, dh = params["W_Q"].shape
    x = (params["W_E"][tokens] + params["W_pos"][:T]).reshape(B * T, d)  # the residual stream, a row a position
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    saved = {"tokens": tokens, "x": [], "q": [], "k": [], "v": [], "a": [], "z": []}
    for l in range(L):
        q, k, v = (split(x @ side_by_side(params[name][l]), B, H) for name in ("W_Q", "W_K", "W_V"))  # (B, H, T, dh)
        scores = q @ k.swapaxes(-1, -2)
        scores *= 1 / np.sqrt(dh)
        scores[..., future] = -np.inf  # the causal mask: no query sees a later key
        a = softmax(scores)  # (B, H, T, T)
        z = a @ v  # (B, H, T, dh)
        if knock_out is not None:
            z[:, np.asarray(knock_out[l], dtype=bool)] = 0
        for name, value in (("x", x), ("q", q), ("k", k), ("v", v), ("a", a), ("z", z)):
            saved[name].append(value)
        x = x + merge(z) @ params["W_O"][l].reshape(H * dh, d)  # = sum over heads of z_h W_O[l, h]
    saved["x"].append(x)
    return (x @ params["W_U"]).reshape(B, T, -1), saved["a"], saved


def token_losses(logits, tokens) -> np.ndarray:
    """logits: (B, T, V), tokens: (B, T) -> (B, T - 1): -log p(tokens[:, t + 1] | tokens[:, :t + 1]) in nats."""
    logp = log_softmax(logits[:, :-1], axis=-1)
    return -np.take_along_axis(logp, np.asarray(tokens)[:, 1:, None], axis=-1)[..., 0]


def loss(params, tokens) -> float:
    """params, tokens: (B, T) ints -> the mean next-token loss over every position (nats)."""
    logits, _, _ = forward(params, tokens)
    return float(token_losses(logits, tokens).mean(dtype=np.float64))


def grads(params, tokens) -> dict[str, np.ndarray]:
    """params, tokens: (B, T) ints -> {name: d loss / d params[name]}, the same keys and shapes as the weights."""
    logits, _, saved = forward(params, tokens)
    return _backward(params, logits, saved)


def _backward(params, logits, saved) -> dict[str, np.ndarray]:
    tokens = saved["tokens"]
    B, T = tokens.shape
    L, H, d, dh = params["W_Q"].shape
    g = {name: np.empty_like(params[name]) for name in ("W_Q", "W_K", "W_V", "W_O")}
    # loss = mean of -log softmax(logits)[next token]: d/dlogits = (softmax - onehot) / count, 0 at the last position
    dlogits = softmax(logits)
    dlogits[:, -1] = 0
    b, t = np.indices((B, T - 1))
    dlogits[b, t, tokens[:, 1:]] -= 1
    dlogits = dlogits.reshape(B * T, -1) / (B * (T - 1))
    g["W_U"] = saved["x"][L].T @ dlogits
    dx = dlogits @ params["W_U"].T  # (B*T, d): the gradient flowing down the residual stream
    for l in reversed(range(L)):
        x, q, k, v, a, z = (saved[name][l] for name in ("x", "q", "k", "v", "a", "z"))
        # x_{l+1} = x_l + merge(z) W_O: the gradient passes straight down the stream, and into the heads
        g["W_O"][l] = (merge(z).T @ dx).reshape(H, dh, d)
        dz = split(dx @ params["W_O"][l].reshape(H * dh, d).T, B, H)  # a knocked-out head's z is a constant: its dz is never used
        # z = a v
        da = dz @ v.swapaxes(-1, -2)
        dv = a.swapaxes(-1, -2) @ dz
        # a = softmax(s): ds = a * (da - sum_j a_j da_j); a masked key has a = 0, so its ds is 0
        ds = da - np.sum(a * da, axis=-1, keepdims=True)
        ds *= a
        ds *= 1 / np.sqrt(dh)
        # s = q k^T / sqrt(dh)
        dq, dk = ds @ k, ds.swapaxes(-1, -2) @ q
        # q = x W_Q (and k, v): each weight's gradient sums over the positions; x gets all three back
        for name, dy in (("W_Q", dq), ("W_K", dk), ("W_V", dv)):
            dy = merge(dy)
            g[name][l] = (x.T @ dy).reshape(d, H, dh).transpose(1, 0, 2)
            dx = dx + dy @ side_by_side(params[name][l]).T
    g["W_pos"] = dx.reshape(B, T, d).sum(axis=0)
    onehot = np.eye(params["W_E"].shape[0], dtype=dx.dtype)[tokens.ravel()]  # (B*T, V)
    g["W_E"] = onehot.T @ dx
    return g


class Adam:
    """Adam (Kingma & Ba 2015) over a params dict: step(params, grads) updates params in place."""

    def __init__(self, params, learning_rate: float, betas=(0.9, 0.999), eps: float = 1e-8):
        self.lr, (self.b1, self.b2), self.eps, self.t = learning_rate, betas, eps, 0
        self.m = {name: np.zeros_like(p) for name, p in params.items()}
        self.v = {name: np.zeros_like(m) for name, m in self.m.items()}

    def step(self, params, grads) -> None:
        self.t += 1
        for name, m in self.m.items():
            p, v, g = params[name], self.v[name], grads[name]
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            m_hat, v_hat = m / (1 - self.b1 ** self.t), v / (1 - self.b2 ** self.t)  # the bias corrections
            p -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
