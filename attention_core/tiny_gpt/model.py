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
    steps: int = 1200
    init_std: float = 0.02
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
    """-> every parameter's shape. Weights are (in, out), y = x @ W; W_Q, W_K, W_V, W_O hold one matrix a head."""
    L, H, d, dh, V, T = config.n_layer, config.n_head, config.d_model, config.d_head, config.vocab, config.seq_len
    return {"W_E": (V, d), "W_pos": (T, d), "W_Q": (L, H, d, dh), "W_K": (L, H, d, dh), "W_V": (L, H, d, dh),
            "W_O": (L, H, dh, d), "W_U": (d, V)}


def init(config: Config, seed) -> dict[str, np.ndarray]:
    """seed -> params {name: array of shapes(config)[name]}, every entry N(0, init_std), drawn in NAMES order."""
    rng = as_generator(seed)
    return {name: rng.normal(0.0, config.init_std, size=shape).astype(config.dtype)
            for name, shape in shapes(config).items()}


def forward(params, tokens, knock_out=None) -> tuple[np.ndarray, list[np.ndarray], dict]:
    """params, tokens: (B, T) ints -> (logits (B, T, V), maps [L arrays (B, H, T, T)], what the backward pass needs).

    knock_out: (L, H) booleans, True where a head's output is replaced by zeros (the head switched off).
    """
    tokens = np.asarray(tokens)
    T = tokens.shape[1]
    L, H, d, dh = params["W_Q"].shape
    x = params["W_E"][tokens] + params["W_pos"][:T]
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    saved = {"tokens": tokens, "x": [], "q": [], "k": [], "v": [], "a": [], "z": []}
    for l in range(L):
        xh = x[:, None]  # (B, 1, T, d): every head reads the whole stream
        q, k, v = xh @ params["W_Q"][l], xh @ params["W_K"][l], xh @ params["W_V"][l]  # (B, H, T, dh)
        scores = (q @ k.swapaxes(-1, -2)) / np.sqrt(dh)
        scores[..., future] = -np.inf  # the causal mask: no query sees a later key
        a = softmax(scores)  # (B, H, T, T)
        z = a @ v  # (B, H, T, dh)
        if knock_out is not None:
            z[:, np.asarray(knock_out[l], dtype=bool)] = 0
        for name, value in (("x", x), ("q", q), ("k", k), ("v", v), ("a", a), ("z", z)):
            saved[name].append(value)
        x = x + np.einsum("bhtd,hde->bte", z, params["W_O"][l])
    saved["x"].append(x)
    return x @ params["W_U"], saved["a"], saved


def token_losses(logits, tokens) -> np.ndarray:
    """logits: (B, T, V), tokens: (B, T) -> (B, T - 1): -log p(tokens[:, t + 1] | tokens[:, :t + 1]) in nats."""
    logp = log_softmax(logits[:, :-1], axis=-1)
    return -np.take_along_axis(logp, np.asarray(tokens)[:, 1:, None], axis=-1)[..., 0]


def loss(params, tokens) -> float:
    """params, tokens: (B, T) ints -> the mean next-token loss over every position (nats)."""
    logits, _, _ = forward(params, tokens)
    return float(token_losses(logits, tokens).mean(dtype=np.float64))


def grads(params, tokens) -> dict[str, np.ndarray]:
    """params, tokens: (B, T) ints -> {name: d loss / d params[name]}, the same keys and shapes as params."""
    logits, _, saved = forward(params, tokens)
    return _backward(params, logits, saved)


def _backward(params, logits, saved) -> dict[str, np.ndarray]:
    tokens = saved["tokens"]
    B, T = tokens.shape
    L, H, d, dh = params["W_Q"].shape
    g = {}
    # loss = mean of -log softmax(logits)[target]: d/dlogits = (softmax - onehot) / count, 0 at the last position
    dlogits = softmax(logits)
    dlogits[:, -1] = 0
    np.put_along_axis(dlogits[:, :-1], tokens[:, 1:, None], np.take_along_axis(
        dlogits[:, :-1], tokens[:, 1:, None], axis=-1) - 1, axis=-1)
    dlogits /= B * (T - 1)
    x = saved["x"][L]
    g["W_U"] = x.reshape(B * T, d).T @ dlogits.reshape(B * T, -1)
    dx = dlogits @ params["W_U"].T  # (B, T, d): the gradient flowing down the residual stream
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        g[name] = np.empty_like(params[name])
    for l in reversed(range(L)):
        x, q, k, v, a, z = (saved[name][l] for name in ("x", "q", "k", "v", "a", "z"))
        # x_{l+1} = x_l + sum_h z_h W_O[l, h]: the stream's gradient passes straight through, and into each head
        g["W_O"][l] = np.einsum("bhtd,bte->hde", z, dx)
        dz = np.einsum("bte,hde->bhtd", dx, params["W_O"][l])  # a knocked-out z is a constant 0: dz never used
        # z = a v
        da = dz @ v.swapaxes(-1, -2)
        dv = a.swapaxes(-1, -2) @ dz
        # a = softmax(s): ds = a * (da - sum_j a_j da_j); masked keys have a = 0, so ds = 0 there
        ds = a * (da - np.sum(a * da, axis=-1, keepdims=True)) / np.sqrt(dh)
        # s = q k^T / sqrt(dh)
        dq = ds @ k
        dk = ds.swapaxes(-1, -2) @ q
        # q = x W_Q[l, h] (and k, v): each weight's gradient sums over batch and positions; x gets all three back
        for name, dy in (("W_Q", dq), ("W_K", dk), ("W_V", dv)):
            g[name][l] = np.einsum("btd,bhte->hde", x, dy)
            dx = dx + np.einsum("bhte,hde->btd", dy, params[name][l])
    g["W_pos"] = np.zeros_like(params["W_pos"])
    g["W_pos"][:T] = dx.sum(axis=0)
    g["W_E"] = np.zeros_like(params["W_E"])
    np.add.at(g["W_E"], tokens, dx)
    return g


class Adam:
    """Adam (Kingma & Ba 2015) over a params dict: step(params, grads) updates params in place."""

    def __init__(self, params, learning_rate: float, betas=(0.9, 0.999), eps: float = 1e-8):
        self.lr, (self.b1, self.b2), self.eps, self.t = learning_rate, betas, eps, 0
        self.m = {name: np.zeros_like(p) for name, p in params.items()}
        self.v = {name: np.zeros_like(p) for name, p in params.items()}

    def step(self, params, grads) -> None:
        self.t += 1
        for name, p in params.items():
            m, v, g = self.m[name], self.v[name], grads[name]
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            m_hat, v_hat = m / (1 - self.b1 ** self.t), v / (1 - self.b2 ** self.t)  # the bias corrections
            p -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
