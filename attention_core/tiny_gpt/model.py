"""The tiny GPT itself: an attention-only transformer, its forward pass, its backward pass written by hand, and Adam.

    x_0     = W_E[tokens] + W_pos                          (B, T, d)   token + learned position
    layer l, head h (d_head = d / H):
      q, k, v = x_l W_Q[l], x_l W_K[l], x_l W_V[l]           split into H heads of d_head columns
      a_h     = softmax(q k^T / sqrt(d_head) + causal mask)  (B, H, T, T)  every attention map is kept
      x_{l+1} = x_l + concat_h(a_h v_h) W_O[l]               no MLP, no layer norm: the residual stream only adds
    logits  = x_L W_U                                      (B, T, V)
    loss    = mean over every position t < T - 1 of -log softmax(logits_t)[tokens_{t+1}]

``grads`` runs the same forward pass keeping what the backward pass needs, then walks back through it: each line of
``_backward`` is the derivative of one line of ``_forward``. The arrays of one shape are allocated once per
``Workspace`` and reused every step (fresh arrays cost a page fault per page on every step).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import as_generator, log_softmax, softmax

NAMES = ("W_E", "W_pos", "W_Q", "W_K", "W_V", "W_O", "W_U")
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8


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
    eval_size: int = 256  # the fixed evaluation set the scores are measured on
    eval_seed: int = 20220308  # (its own seed: every run of a configuration is scored on the same sequences)

    def __post_init__(self):
        if self.n_layer < 1 or self.n_head < 1 or self.d_model % self.n_head:
            raise ValueError(f"need n_layer >= 1 and n_head dividing d_model, got {self.n_layer}, {self.n_head}, "
                             f"{self.d_model}")
        if not 1 <= self.segment_min <= self.segment_max or 2 * self.segment_max > self.seq_len:
            raise ValueError(f"segments of {self.segment_min}-{self.segment_max} tokens twice must fit in "
                             f"{self.seq_len} tokens")
        if self.segment_max > self.vocab:
            raise ValueError(f"a segment of {self.segment_max} distinct tokens needs a vocabulary of at least that")
        if not (self.learning_rate > 0 and self.batch_size >= 1 and self.steps >= 0):
            raise ValueError("learning_rate must be > 0, batch_size >= 1, steps >= 0")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_head


def shapes(config: Config) -> dict[str, tuple[int, ...]]:
    """-> every parameter's shape (weights are (in, out): y = x @ W; a layer's heads are side by side in columns)."""
    L, d, V, T = config.n_layer, config.d_model, config.vocab, config.seq_len
    return {"W_E": (V, d), "W_pos": (T, d), "W_Q": (L, d, d), "W_K": (L, d, d), "W_V": (L, d, d),
            "W_O": (L, d, d), "W_U": (d, V)}


def init(config: Config, seed) -> dict[str, np.ndarray]:
    """seed -> params: {name: array of shapes(config)[name]}, each entry N(0, init_std), drawn in NAMES order."""
    rng = as_generator(seed)
    return {name: rng.normal(0.0, config.init_std, size=shape).astype(config.dtype)
            for name, shape in shapes(config).items()}


class Workspace:
    """Arrays reused from one call to the next, one per (name, shape, dtype): the step allocates nothing large."""

    def __init__(self):
        self._arrays = {}

    def __call__(self, name: str, shape, dtype) -> np.ndarray:
        key = (name, tuple(shape), np.dtype(dtype))
        if key not in self._arrays:
            self._arrays[key] = np.empty(shape, dtype=dtype)
        return self._arrays[key]


def _heads(x2d: np.ndarray, W: np.ndarray, B: int, T: int, H: int, out: np.ndarray) -> np.ndarray:
    """x2d: (B*T, d), W: (d, H*dh) -> (B, H, T, dh): the product split into heads (written into out)."""
    np.matmul(x2d.reshape(B, T, -1), W.reshape(W.shape[0], H, -1).transpose(1, 0, 2)[:, None], out=out)
    return out


def forward(params, tokens, knock_out=None, ws: Workspace | None = None) -> tuple[np.ndarray, list, dict]:
    """params, tokens: (B, T) ints -> (logits (B, T, V), attention maps [L arrays (B, H, T, T)], cache for backward).

    knock_out: (L, H) booleans, True where a head's output is replaced by zeros (the head is switched off).
    """
    ws = ws or Workspace()
    tokens = np.asarray(tokens)
    W_E = params["W_E"]
    L, d, _ = params["W_Q"].shape
    B, T = tokens.shape
    H = _n_head(params, knock_out)
    dt = W_E.dtype
    x = ws("x0", (B, T, d), dt)
    np.add(W_E[tokens], params["W_pos"][:T], out=x)
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    cache = {"tokens": tokens, "xs": [x], "q": [], "k": [], "v": [], "z": [], "H": H}
    maps = []
    for l in range(L):
        x2d = x.reshape(B * T, d)
        q, k, v = (_heads(x2d, params[n][l], B, T, H, ws(n + str(l), (H, B, T, d // H), dt).transpose(1, 0, 2, 3))
                   for n in ("W_Q", "W_K", "W_V"))
        scores = ws(f"s{l}", (B, H, T, T), dt)
        np.matmul(q, k.swapaxes(-1, -2), out=scores)
        scores *= dt.type(1 / np.sqrt(d // H))
        scores[..., future] = -np.inf  # the causal mask: no query sees a later key
        a = softmax(scores)
        z = ws(f"z{l}", (B, T, H, d // H), dt)
        np.matmul(a, v, out=z.transpose(0, 2, 1, 3))
        if knock_out is not None:
            z[:, :, np.asarray(knock_out[l], dtype=bool)] = 0
        x_next = ws(f"x{l + 1}", (B, T, d), dt)
        np.matmul(z.reshape(B * T, d), params["W_O"][l], out=x_next.reshape(B * T, d))
        x_next += x
        x = x_next
        for name, value in (("q", q), ("k", k), ("v", v), ("z", z), ("xs", x)):
            cache[name].append(value)
        maps.append(a)
    logits = ws("logits", (B, T, params["W_U"].shape[1]), dt)
    np.matmul(x.reshape(B * T, d), params["W_U"], out=logits.reshape(B * T, -1))
    cache["maps"] = maps
    return logits, maps, cache


def _n_head(params, knock_out) -> int:
    if "n_head" in params:
        return int(params["n_head"])
    if knock_out is not None:
        return int(np.shape(knock_out)[1])
    raise ValueError("params need their 'n_head' entry")  # pragma: no cover - init() always stores it


def token_losses(logits: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """logits: (B, T, V), tokens: (B, T) -> (B, T - 1): -log p(tokens[:, t + 1] | tokens[:, :t + 1])."""
    logp = log_softmax(logits[:, :-1], axis=-1)
    return -np.take_along_axis(logp, np.asarray(tokens)[:, 1:, None], axis=-1)[..., 0]


def loss(params, tokens) -> float:
    """params, tokens: (B, T) ints -> the mean next-token loss over every position (nats)."""
    logits, _, _ = forward(params, tokens)
    return float(token_losses(logits, tokens).astype(np.float64).mean())
