"""Testing what heads do: model.py's forward pass with places to intervene, over B sequences of one length at once.

    x = embedding[ids]                              resid[0]                                    (B, n, d)
    for each layer l (a run may start at layer l from a stored run's resid[l]: the layers before are unchanged):
        x = x with residual writes at l             <- patch the residual stream at (layer, position)
        z = heads(rms_norm(x))                      every head's output before W_O             (B, H, n, hd)
        z = z with head writes at l                 <- zero-ablation, mean-ablation, patching at (layer, head, pos)
        x = x + merge(z) @ W_O[l]
        x = x + swiglu(rms_norm(x))                 resid[l + 1]
    logits = rms_norm(x[rows]) @ embedding.T        only the rows (or the tokens) a caller scores

Query head h reads key/value head h // 3 (model.py's grouping). A write replaces a head's output (or the residual)
at some positions of some sequences by a value: 0 (zero-ablation), the head's mean over a reference set
(mean-ablation, the gentler control: zero is far from anything the model saw), or another run's value (patching).
Plus the readings: the residual stream entering every layer (the logit lens: the final RMSNorm with each residual's
own RMS, then the tied unembedding) and direct logit attribution (each head's output through W_O, the final norm
with its scale frozen from the run, and the unembedding).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import softmax
from attention_core.smollm2.model import _ids, default_model, lm_head, rms_norm, rope, rope_angles, swiglu
from attention_core.smollm2.weights import GPTWeights

MAX_TOKENS = 512  # a run keeps (B, H, n, n) scores per layer and, recorded, (L + 1, B, n, d) residuals


@dataclass(frozen=True)
class HeadWrite:
    """At `layer`, head `head`'s output before W_O on `positions` of sequence(s) `batch` becomes `value` (broadcast
    to (n_sel, hd) per sequence): 0.0 switches it off, a mean or another run's output replaces it."""

    layer: int
    head: int
    value: np.ndarray | float = 0.0
    positions: slice | int | tuple | None = None  # None: every position
    batch: slice | int | None = None  # None: every sequence


@dataclass(frozen=True)
class ResidWrite:
    """The residual stream entering `layer` (n_layer: after the last layer) on `positions` of sequence(s) `batch`
    becomes `value` (broadcast to (n_sel, d) per sequence)."""

    layer: int
    value: np.ndarray
    positions: slice | int | tuple | None = None  # None: every position
    batch: slice | int | None = None  # None: every sequence


@dataclass(frozen=True)
class Trace:
    """What a recorded run holds (B sequences of n tokens): resid (L + 1, B, n, d) the residual stream entering each
    layer, the last after the last layer; heads (L, B, H, n, hd) every head's output before W_O; mlp (L, B, n, d)
    every MLP's output. float32."""

    ids: np.ndarray  # (B, n)
    resid: np.ndarray
    heads: np.ndarray
    mlp: np.ndarray


@dataclass(frozen=True)
class Run:
    """A run's results: logits (B, rows, V) or (B, rows, tokens) for the rows/tokens asked; final (B, n, d) the
    residual after the last layer; maps {(layer, head): (B, n, n)} asked for; trace when recorded."""

    logits: np.ndarray | None
    final: np.ndarray
    maps: dict
    trace: Trace | None


# ---------------------------------------------------------------- the layer, with its places to intervene

def _positions(positions) -> slice | int | np.ndarray:
    if positions is None:
        return slice(None)
    if isinstance(positions, (slice, int, np.integer)):
        return positions
    return np.asarray(positions, dtype=np.int64)


def visible_keys(n: int, hidden: tuple = ()) -> np.ndarray:
    """n, hidden key positions -> (n, n) bool: query i sees key j when j <= i, except a hidden j (still seen by
    row j itself, so every row sees at least one key)."""
    visible = np.tril(np.ones((n, n), dtype=bool))
    for j in hidden:
        visible[j + 1:, j] = False
    return visible


def attend(q: np.ndarray, k: np.ndarray, v: np.ndarray, visible: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """q: (B, H, n, hd), k/v: (B, KV, n, hd), visible: (n, n) -> out (B, H, n, hd), weights (B, H, n, n).

    Grouped-query: query head h reads key/value head h // (H / KV). Scores divided by sqrt(hd); a key not visible
    gets weight exactly 0."""
    B, H, n, hd = q.shape
    kv_heads = k.shape[1]
    grouped = q.reshape(B, kv_heads, H // kv_heads, n, hd)  # (B, KV, group, n, hd)
    scores = grouped @ k[:, :, None].swapaxes(-1, -2) / np.float32(np.sqrt(hd))  # (B, KV, group, n, n)
    weights = softmax(np.where(visible, scores, -np.inf), axis=-1).astype(np.float32)
    return (weights @ v[:, :, None]).reshape(B, H, n, hd), weights.reshape(B, H, n, n)


def head_outputs(x: np.ndarray, weights: GPTWeights, layer: int, rotation: tuple,
                 visible: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x: (B, n, d) normed -> z (B, H, n, hd) every head's output before W_O, weights (B, H, n, n)."""
    c = weights.config
    B, n, d = x.shape
    flat = x.reshape(B * n, d)

    def heads_of(w, count):  # (B * n, count * hd) -> (B, count, n, hd)
        return (flat @ w[layer]).reshape(B, n, count, c.head_dim).transpose(0, 2, 1, 3)

    q = rope(heads_of(weights.attn_q, c.n_head), *rotation)
    k = rope(heads_of(weights.attn_k, c.n_kv_head), *rotation)
    return attend(q, k, heads_of(weights.attn_v, c.n_kv_head), visible)


def merge_heads(z: np.ndarray, weights: GPTWeights, layer: int) -> np.ndarray:
    """z: (B, H, n, hd) -> (B, n, d) = concat(heads) @ W_O."""
    B, H, n, hd = z.shape
    return (z.transpose(0, 2, 1, 3).reshape(B * n, H * hd) @ weights.attn_output[layer]).reshape(B, n, -1)


def _apply(array: np.ndarray, writes, at_head: bool) -> np.ndarray:
    """array: (B, H, n, hd) or (B, n, d) -> a copy with the writes done (the array itself when there are none)."""
    if not writes:
        return array
    array = array.copy()
    for w in writes:
        batch = slice(None) if w.batch is None else w.batch
        index = (batch, w.head, _positions(w.positions)) if at_head else (batch, _positions(w.positions))
        array[index] = w.value
    return array


def _check(weights: GPTWeights, ids: np.ndarray, head_writes, resid_writes, hidden) -> None:
    c = weights.config
    if ids.ndim != 2 or ids.shape[1] < 1:
        raise ValueError(f"ids must be (B, n) with n >= 1, got shape {ids.shape}")
    if ids.shape[1] > MAX_TOKENS:
        raise ValueError(f"{ids.shape[1]} tokens: an intervention run takes at most {MAX_TOKENS}")
    if ids.min() < 0 or ids.max() >= c.vocab:
        raise ValueError(f"token ids must lie in [0, {c.vocab})")
    for w in head_writes:
        if not (0 <= w.layer < c.n_layer and 0 <= w.head < c.n_head):
            raise ValueError(f"no head L{w.layer}H{w.head}: layers 0-{c.n_layer - 1}, heads 0-{c.n_head - 1}")
    for w in resid_writes:
        if not 0 <= w.layer <= c.n_layer:
            raise ValueError(f"no residual stream entering layer {w.layer}: 0-{c.n_layer}")
    if any(not 0 <= j < ids.shape[1] for j in hidden):
        raise ValueError(f"hidden positions must lie in 0..{ids.shape[1] - 1}")


def run(weights: GPTWeights, ids, head_writes=(), resid_writes=(), *, start: Trace | None = None,
        rows=None, tokens=None, maps=(), hidden: tuple = (), record: bool = False, until: int | None = None) -> Run:
    """ids: (B, n) (or (n,)) -> Run: the forward pass with the writes done.

    start: a recorded run of the same ids without writes; the pass then begins at the first layer a write touches,
    from its resid there (the layers before would compute exactly the same). rows: the positions whose logits to
    return (default: every position; () for none); tokens: only these tokens' logits (default: all V). maps: the
    (layer, head) whose attention weights to keep. hidden: key positions hidden from every later row, in every
    head of every layer. record: keep the Trace (for patching from this run, the lens, DLA). until: stop after
    that layer (for its maps only: no logits, no trace)."""
    c = weights.config
    ids = np.atleast_2d(np.asarray(ids, dtype=np.int64))
    _check(weights, ids, head_writes, resid_writes, hidden)
    B, n = ids.shape
    touched = [w.layer for w in (*head_writes, *resid_writes)]
    first = min(touched, default=c.n_layer) if start is not None and not hidden else 0
    if start is not None and not np.array_equal(start.ids, ids):
        raise ValueError("start must be a recorded run of the same ids")
    first = min(first, c.n_layer)
    rotation = rope_angles(np.arange(n), c.head_dim, c.rope_base)
    visible = visible_keys(n, tuple(hidden))
    kept, resid, heads, mlp = {}, [], [], []

    x = start.resid[first] if first > 0 else np.asarray(weights.embedding[ids], dtype=np.float32)  # (B, n, d)
    for layer in range(first, c.n_layer if until is None else until + 1):
        x = _apply(x, [w for w in resid_writes if w.layer == layer], at_head=False)
        z, attention = head_outputs(rms_norm(x, weights.attn_norm[layer], c.norm_eps), weights, layer, rotation,
                                    visible)
        z = _apply(z, [w for w in head_writes if w.layer == layer], at_head=True)
        kept.update({(layer, h): attention[:, h] for (l, h) in maps if l == layer})
        attended = x + merge_heads(z, weights, layer)
        out = swiglu(rms_norm(attended, weights.ffn_norm[layer], c.norm_eps).reshape(B * n, -1),
                     weights.ffn_gate[layer], weights.ffn_up[layer], weights.ffn_down[layer]).reshape(B, n, -1)
        if record:
            resid.append(x)
            heads.append(z)
            mlp.append(out)
        x = attended + out
    if until is not None:
        return Run(None, x, kept, None)
    x = _apply(x, [w for w in resid_writes if w.layer == c.n_layer], at_head=False)

    trace = None
    if record:
        earlier = range(first) if start is not None else range(0)
        trace = Trace(ids, np.stack([start.resid[l] for l in earlier] + resid + [x]),
                      np.stack([start.heads[l] for l in earlier] + heads),
                      np.stack([start.mlp[l] for l in earlier] + mlp))
    return Run(_logits(weights, x, rows, tokens), x, kept, trace)


def _logits(weights: GPTWeights, final: np.ndarray, rows, tokens) -> np.ndarray | None:
    """final: (B, n, d) -> (B, rows, V or tokens) the logits of the rows asked for (None when none is)."""
    chosen = final if rows is None else final[:, _positions(rows)]
    if chosen.shape[1] == 0:
        return None
    B, r, d = chosen.shape
    normed = rms_norm(chosen.reshape(B * r, d), weights.output_norm, weights.config.norm_eps)
    if tokens is None:
        return np.ascontiguousarray(lm_head(normed, weights.embedding)).reshape(B, r, -1)
    return (normed @ weights.embedding[np.asarray(tokens, dtype=np.int64)].T).reshape(B, r, -1)


# ---------------------------------------------------------------- the writes, by name

def zero_ablation(heads) -> tuple[HeadWrite, ...]:
    """[(layer, head), ...] -> their outputs set to 0 at every position of every sequence."""
    return tuple(HeadWrite(int(l), int(h)) for l, h in heads)


def head_means(trace: Trace) -> np.ndarray:
    """trace of a reference set (B, n) -> (L, H, n, hd): each head's output at each position, averaged over B."""
    return trace.heads.mean(axis=1)


def mean_ablation(heads, means: np.ndarray) -> tuple[HeadWrite, ...]:
    """[(layer, head), ...], means: (L, H, n, hd) from head_means -> each head's output replaced by its mean
    (at each position) over the reference set."""
    return tuple(HeadWrite(int(l), int(h), means[int(l), int(h)]) for l, h in heads)


def head_patches(source: Trace, where, batch: slice | int | None = None,
                 source_batch: slice | int | None = None) -> tuple[HeadWrite, ...]:
    """[(layer, head, position), ...] -> the heads' outputs there, in sequence(s) `batch`, taken from `source`'s
    sequence(s) `source_batch` (default: the same ones; n must match)."""
    taken = _positions(batch) if source_batch is None else _positions(source_batch)
    return tuple(HeadWrite(int(l), int(h), source.heads[int(l), taken, int(h), int(p)], int(p), batch)
                 for l, h, p in where)


def resid_patches(source: Trace, where, batch: slice | int | None = None,
                  source_batch: slice | int | None = None) -> tuple[ResidWrite, ...]:
    """[(layer, position), ...] -> the residual stream entering `layer` at `position`, in sequence(s) `batch`,
    taken from `source`'s sequence(s) `source_batch` (default: the same ones)."""
    taken = _positions(batch) if source_batch is None else _positions(source_batch)
    return tuple(ResidWrite(int(l), source.resid[int(l), taken, int(p)], int(p), batch) for l, p in where)


# ---------------------------------------------------------------- readings

def lens(weights: GPTWeights, trace: Trace, position: int = -1, batch: int = 0) -> np.ndarray:
    """trace -> (L + 1, V): the final RMSNorm (each residual divided by its OWN root mean square) and the tied
    unembedding applied to the residual stream entering each layer at `position`; row 0 reads the embedding, the
    last row is the model's own logits."""
    states = trace.resid[:, batch, position]  # (L + 1, d)
    return np.ascontiguousarray(lm_head(rms_norm(states, weights.output_norm, weights.config.norm_eps),
                                        weights.embedding))


@dataclass(frozen=True)
class Attribution:
    """One token's logit at one position split into the terms that add up to it (float64): the embedding's, each
    head's (L, H) through W_O, each MLP's (L,). scale: the final norm's 1 / RMS, frozen from the run."""

    logit: float
    embedding: float
    heads: np.ndarray
    mlps: np.ndarray
    scale: float

    @property
    def total(self) -> float:
        return float(self.embedding + self.heads.sum() + self.mlps.sum())


def direct_logit_attribution(weights: GPTWeights, trace: Trace, token: int, position: int = -1,
                             batch: int = 0) -> Attribution:
    """trace, token -> Attribution at `position`: the final residual is the embedding plus every head's output
    through W_O plus every MLP's output, and the final norm is linear once its 1/RMS is frozen from this run, so
    logit = sum of (term * scale * gain) . embedding[token]."""
    c = weights.config
    final = trace.resid[-1, batch, position].astype(np.float64)
    scale = 1.0 / np.sqrt(np.mean(final * final) + c.norm_eps)
    direction = scale * np.asarray(weights.output_norm, np.float64) * np.asarray(weights.embedding[token], np.float64)
    z = trace.heads[:, batch, :, position].astype(np.float64)  # (L, H, hd)
    w_o = np.asarray(weights.attn_output, np.float64).reshape(c.n_layer, c.n_head, c.head_dim, c.d_model)
    heads = np.einsum("lhk,lhkd,d->lh", z, w_o, direction)
    mlps = trace.mlp[:, batch, position].astype(np.float64) @ direction
    embedding = float(trace.resid[0, batch, position].astype(np.float64) @ direction)
    return Attribution(float(final @ direction), embedding, heads, mlps, float(scale))


def head_attention(weights: GPTWeights, query_input: np.ndarray, key_input: np.ndarray, layer: int,
                   head: int) -> np.ndarray:
    """query_input, key_input: (B, n, d) residual streams entering `layer` -> (B, n, n) head `head`'s weights when
    its queries read the first and its keys the second (the same stream: the head's own map). Giving the keys a
    stream with one earlier head's output removed asks whether that head composes with this one on the key side."""
    c = weights.config
    B, n, d = query_input.shape
    rotation = rope_angles(np.arange(n), c.head_dim, c.rope_base)
    kv = head // (c.n_head // c.n_kv_head)  # query head h reads key head h // 3
    hd = c.head_dim

    def projected(x, w, index):  # (B, n, d) -> (B, 1, n, hd): one head's rows of a projection
        normed = rms_norm(x, weights.attn_norm[layer], c.norm_eps).reshape(B * n, d)
        return (normed @ w[layer][:, index * hd:(index + 1) * hd]).reshape(B, 1, n, hd)

    q = rope(projected(query_input, weights.attn_q, head), *rotation)
    k = rope(projected(key_input, weights.attn_k, kv), *rotation)
    scores = q @ k.swapaxes(-1, -2) / np.float32(np.sqrt(hd))
    return softmax(np.where(visible_keys(n), scores, -np.inf), axis=-1).astype(np.float32)[:, 0]


def head_contribution(weights: GPTWeights, trace: Trace, layer: int, head: int) -> np.ndarray:
    """-> (B, n, d): what head `head` of `layer` adds to the residual stream (its output through its rows of W_O)."""
    hd = weights.config.head_dim
    z = trace.heads[layer, :, head]  # (B, n, hd)
    return z @ weights.attn_output[layer][head * hd:(head + 1) * hd]


def value_norms(weights: GPTWeights, trace: Trace, layer: int) -> np.ndarray:
    """-> (B, H, n): the length of each position's value vector after W_O, per head (what a weight on that position
    actually adds: Kobayashi et al. 2020's norm-based view)."""
    c = weights.config
    x = rms_norm(trace.resid[layer], weights.attn_norm[layer], c.norm_eps)  # (B, n, d)
    B, n, d = x.shape
    v = (x.reshape(B * n, d) @ weights.attn_v[layer]).reshape(B, n, c.n_kv_head, c.head_dim)
    v = np.repeat(v, c.n_head // c.n_kv_head, axis=2)  # query head h reads value head h // 3
    w_o = weights.attn_output[layer].reshape(c.n_head, c.head_dim, c.d_model)
    return np.linalg.norm(np.einsum("bnhk,hkd->bhnd", v, w_o), axis=-1)


def logit_lens(text: str) -> np.ndarray:
    """text -> (n_layer + 1, V) = (31, 49152) float32: lens() at the text's last token. Row 0 reads the embedding,
    the last row is the model's own logits (next_token_logits within float32 rounding). ValueError for an empty
    text or one of more than MAX_TOKENS tokens."""
    weights, tokenizer = default_model()
    ids = _ids(tokenizer, text)
    if len(ids) > MAX_TOKENS:
        raise ValueError(f"the text has {len(ids)} tokens: the lens reads at most {MAX_TOKENS}")
    return lens(weights, run(weights, ids, rows=(), record=True).trace)
