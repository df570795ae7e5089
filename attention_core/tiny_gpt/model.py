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
    init_std: float = 0.15
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


def heads(x2d, B: int, H: int) -> np.ndarray:
    """x2d: (B*T, H*dh), the heads side by side -> (B, H, T, dh): a view, head h's columns as its own block."""
    BT, Hdh = x2d.shape
    return x2d.reshape(B, BT // B, H, Hdh // H).transpose(0, 2, 1, 3)


class Buffers:
    """Arrays kept from one call to the next, one per name: a training step then allocates nothing large (fresh
    arrays cost page faults, a third of a step; docs/performance.md). ``fresh`` (the default) allocates each time."""

    def __init__(self):
        self._arrays = {}

    def __call__(self, name: str, shape, dtype) -> np.ndarray:
        array = self._arrays.get(name)
        if array is None or array.shape != tuple(shape) or array.dtype != dtype:
            array = self._arrays[name] = np.empty(shape, dtype=dtype)
        return array


def fresh(name: str, shape, dtype) -> np.ndarray:
    return np.empty(shape, dtype=dtype)


def forward(params, tokens, knock_out=None, new=fresh) -> tuple[np.ndarray, list[np.ndarray], dict]:
    """params, tokens: (B, T) ints -> (logits (B, T, V), maps [L arrays (B, H, T, T)], what the backward pass needs).

    knock_out: (L, H) booleans, True where a head's output is replaced by zeros (the head switched off).
    new(name, shape, dtype): where each array is written (``Buffers()`` reuses them from one call to the next).
    """
    tokens = np.asarray(tokens)
    B, T = tokens.shape
    L, H, d, dh = params["W_Q"].shape
    dt = params["W_Q"].dtype
    x = new("x0", (B * T, d), dt)  # the residual stream: a row a position
    np.take(params["W_E"], tokens, axis=0, out=x.reshape(B, T, d))
    x.reshape(B, T, d)[:] += params["W_pos"][:T]
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    saved = {"tokens": tokens, "x": [x], "q": [], "k": [], "v": [], "a": [], "z": []}
    for l in range(L):
        for name in ("q", "k", "v"):  # q = x W_Q[l, h] for every head at once: (B*T, H*dh)
            W = side_by_side(params["W_" + name.upper()][l])
            saved[name].append(np.matmul(x, W, out=new(f"{name}{l}", (B * T, H * dh), dt)))
        q, k, v = (heads(saved[name][l], B, H) for name in ("q", "k", "v"))  # (B, H, T, dh) views
        scores = np.matmul(q, k.swapaxes(-1, -2), out=new(f"s{l}", (B, H, T, T), dt))
        scores *= 1 / np.sqrt(dh)
        scores[..., future] = -np.inf  # the causal mask: no query sees a later key
        a = softmax(scores)  # (B, H, T, T)
        z = new(f"z{l}", (B * T, H * dh), dt)
        np.matmul(a, v, out=heads(z, B, H))  # z = a v, each head's output in its own columns
        if knock_out is not None:
            heads(z, B, H)[:, np.asarray(knock_out[l], dtype=bool)] = 0
        x_next = np.matmul(z, params["W_O"][l].reshape(H * dh, d), out=new(f"x{l + 1}", (B * T, d), dt))
        x_next += x  # x_{l+1} = x_l + sum over heads of z_h W_O[l, h]
        x = x_next
        saved["a"].append(a)
        saved["z"].append(z)
        saved["x"].append(x)
    logits = np.matmul(x, params["W_U"], out=new("logits", (B * T, params["W_U"].shape[1]), dt))
    return logits.reshape(B, T, -1), saved["a"], saved


def token_losses(logits, tokens) -> np.ndarray:
    """logits: (B, T, V), tokens: (B, T) -> (B, T - 1): -log p(tokens[:, t + 1] | tokens[:, :t + 1]) in nats."""
    logp = log_softmax(logits[:, :-1], axis=-1)
    return -np.take_along_axis(logp, np.asarray(tokens)[:, 1:, None], axis=-1)[..., 0]


def loss(params, tokens) -> float:
    """params, tokens: (B, T) ints -> the mean next-token loss over every position (nats)."""
    logits, _, _ = forward(params, tokens)
    return float(token_losses(logits, tokens).mean(dtype=np.float64))


def grads(params, tokens, new=fresh) -> dict[str, np.ndarray]:
    """params, tokens: (B, T) ints -> {name: d loss / d params[name]}, the same keys and shapes as the weights."""
    logits, _, saved = forward(params, tokens, new=new)
    return _backward(params, logits, saved, new)


def _backward(params, logits, saved, new) -> dict[str, np.ndarray]:
    tokens = saved["tokens"]
    B, T = tokens.shape
    L, H, d, dh = params["W_Q"].shape
    dt = logits.dtype
    g = {name: np.empty_like(params[name]) for name in NAMES}
    # loss = mean of -log softmax(logits)[next token]: d/dlogits = (softmax - onehot) / count, 0 at the last position
    dlogits = softmax(logits)
    dlogits[:, -1] = 0
    b, t = np.indices((B, T - 1))
    dlogits[b, t, tokens[:, 1:]] -= 1
    dlogits = dlogits.reshape(B * T, -1)
    dlogits *= 1 / (B * (T - 1))
    np.matmul(saved["x"][L].T, dlogits, out=g["W_U"])
    dx = np.matmul(dlogits, params["W_U"].T, out=new("dx", (B * T, d), dt))  # the gradient down the residual stream
    dz, dq, dk, dv = (new(name, (B * T, H * dh), dt) for name in ("dz", "dq", "dk", "dv"))  # heads side by side
    da, ds = new("da", (B, H, T, T), dt), new("ds", (B, H, T, T), dt)
    back = new("back", (B * T, d), dt)
    for l in reversed(range(L)):
        x, a = saved["x"][l], saved["a"][l]
        q, k, v = (heads(saved[name][l], B, H) for name in ("q", "k", "v"))
        # x_{l+1} = x_l + z W_O: the gradient passes straight down the stream, and into the heads
        g["W_O"][l] = (saved["z"][l].T @ dx).reshape(H, dh, d)
        np.matmul(dx, params["W_O"][l].reshape(H * dh, d).T, out=dz)  # a knocked-out head's z is a constant 0
        # z = a v
        np.matmul(heads(dz, B, H), v.swapaxes(-1, -2), out=da)
        np.matmul(a.swapaxes(-1, -2), heads(dz, B, H), out=heads(dv, B, H))
        # a = softmax(s): ds = a * (da - sum_j a_j da_j) / sqrt(dh); a masked key has a = 0, so its ds is 0
        np.multiply(a, da, out=ds)
        np.subtract(da, ds.sum(axis=-1, keepdims=True), out=ds)
        ds *= a
        ds *= 1 / np.sqrt(dh)
        # s = q k^T
        np.matmul(ds, k, out=heads(dq, B, H))
        np.matmul(ds.swapaxes(-1, -2), q, out=heads(dk, B, H))
        # q = x W_Q (and k, v): each weight's gradient sums over the positions; x gets all three back, added to the
        # gradient that came straight down the stream
        for name, dy in (("W_Q", dq), ("W_K", dk), ("W_V", dv)):
            g[name][l] = (x.T @ dy).reshape(d, H, dh).transpose(1, 0, 2)
            dx += np.matmul(dy, side_by_side(params[name][l]).T, out=back)
    np.sum(dx.reshape(B, T, d), axis=0, out=g["W_pos"])
    onehot = np.eye(params["W_E"].shape[0], dtype=dt)[tokens.ravel()]  # (B*T, V): d x0 / d W_E picks rows
    np.matmul(onehot.T, dx, out=g["W_E"])
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
