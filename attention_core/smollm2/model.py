"""SmolLM2-135M's forward pass in NumPy, one small function per step (nanoGPT's shape):

    x = embedding[ids]                                   (n, d)
    for each of the 30 layers:
        x = x + attention(rms_norm(x))                   causal, grouped-query: 9 query heads share 3 key/value heads
        x = x + swiglu(rms_norm(x))                      down(silu(gate(x)) * up(x))
    logits = rms_norm(x) @ embedding.T                   (n, V): the LM head is the embedding (tied)

Every pass runs over a KV cache: the full pass is a prefill of an empty cache, a generation step adds one token to
each cache. The rows of several sequences go through the linear layers together (one read of the weights serves them
all: a decode step is memory-bound), and each sequence attends only to its own cache.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from attention_core.attention import softmax
from attention_core.gpt.kv_cache import KVCache
from attention_core.gpt.passes import maps_of_each, prefill_in_chunks
from attention_core.smollm2.tokenizer import BPETokenizer
from attention_core.smollm2.weights import (  # noqa: F401 - parameter_count: the model's size, for the page
    GPTConfig, GPTWeights, gguf_path, parameter_count, read_vocabulary, read_weights)

CONTEXT_LENGTH = 8192  # the model's trained context (llama.context_length)
MAX_MAP_TOKENS = 512  # forward keeps (30, 9, n, n) float32 maps: 283 MB at 512 tokens, 6.8 GB at 2,500
PREFILL_CHUNK = 256  # prefill's tokens per pass: the scores of a long text stay (9, 256, t)


@dataclass(frozen=True)
class GPTOutput:
    """logits (n, V) float32: row i scores the token after token i; attention (L, H, n, n) float32: row i of a head
    is where token i looks (exact zeros above the diagonal)."""

    logits: np.ndarray
    attention: np.ndarray
    hidden: np.ndarray | None = None  # (n, d): every row after the final norm, so logits = lm_head(hidden, embedding)


# ---------------------------------------------------------------- the steps

def rms_norm(x: np.ndarray, gain: np.ndarray, eps: float) -> np.ndarray:
    """x: (n, d), gain: (d,) -> (n, d): each row divided by its root mean square, times the gain (no mean, no bias)."""
    mean_square = (x * x).sum(axis=-1, keepdims=True) / np.float32(x.shape[-1])
    return x / np.sqrt(mean_square + np.float32(eps)) * gain


def rope_angles(positions: np.ndarray, head_dim: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """positions: (n,) -> cos, sin (n, hd/2) float32: pair i turns by position * base^(-2i/hd)."""
    frequencies = base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = np.asarray(positions, dtype=np.float64)[:, None] * frequencies
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x: (heads, n, hd), cos/sin: (n, hd/2) -> same shape: each adjacent pair (2i, 2i+1) turned by its angle.

    Adjacent pairs because llama.cpp's converter permuted the columns of attn_q/attn_k for exactly this form."""
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    even, odd = pairs[..., 0], pairs[..., 1]
    turned = np.empty_like(pairs)
    turned[..., 0] = even * cos - odd * sin
    turned[..., 1] = even * sin + odd * cos
    return turned.reshape(x.shape)


def split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """x: (n, heads * hd) -> (heads, n, hd)."""
    return x.reshape(x.shape[0], heads, -1).transpose(1, 0, 2)


def causal_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                     positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """q: (..., H, n, hd), k/v: (..., KV, t, hd), positions: (..., n) of the queries
    -> out (..., H, n, hd), weights (..., H, n, t).

    Grouped-query: query head h uses key/value head h // (H / KV). Key j is hidden from a query at position p when
    j > p (weight exactly 0); scores are divided by sqrt(hd)."""
    *batch, H, n, hd = q.shape
    kv_heads, t = k.shape[-3], k.shape[-2]
    grouped = q.reshape(*batch, kv_heads, H // kv_heads, n, hd)  # (..., KV, group, n, hd)
    # k[..., None, :, :]: (..., KV, 1, t, hd), one key head broadcast over its group of query heads
    scores = grouped @ k[..., None, :, :].swapaxes(-1, -2) / np.float32(np.sqrt(hd))  # (..., KV, group, n, t)
    future = np.arange(t) > np.asarray(positions)[..., None]  # (..., n, t)
    scores = np.where(future[..., None, None, :, :], -np.inf, scores)
    weights = softmax(scores, axis=-1).astype(np.float32)
    out = weights @ v[..., None, :, :]  # (..., KV, group, n, hd)
    return out.reshape(*batch, H, n, hd), weights.reshape(*batch, H, n, t)


def padded_cache_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, caches: list[KVCache], layer: int,
                           positions: np.ndarray) -> np.ndarray:
    """q: (H, B, hd), k/v: (KV, B, hd): one new token per sequence -> out (H, B, hd), one batched attention.

    Each cache's keys are copied into a (B, KV, t_max, hd) block padded with zeros; the causal rule already hides
    the padding (key j > the query's position), so a short sequence gives weight exactly 0 to it."""
    B = len(caches)
    t_max = int(positions.max()) + 1
    keys = np.zeros((B, k.shape[0], t_max, k.shape[2]), dtype=np.float32)
    values = np.zeros_like(keys)
    for b, cache in enumerate(caches):
        cached_k, cached_v = cache.store(layer, k[:, b:b + 1], v[:, b:b + 1])  # (KV, t_b, hd)
        keys[b, :, :cached_k.shape[1]] = cached_k
        values[b, :, :cached_v.shape[1]] = cached_v
    out, _ = causal_attention(q.transpose(1, 0, 2)[:, :, None], keys, values, positions[:, None])  # (B, H, 1, hd)
    return out[:, :, 0].transpose(1, 0, 2)


def silu(x: np.ndarray) -> np.ndarray:
    """x: (...) -> x * sigmoid(x); sigmoid written with tanh, which never overflows."""
    return x * (np.float32(0.5) * (np.float32(1) + np.tanh(np.float32(0.5) * x)))


def swiglu(x: np.ndarray, gate: np.ndarray, up: np.ndarray, down: np.ndarray) -> np.ndarray:
    """x: (n, d), gate/up: (d, d_ff), down: (d_ff, d) -> (n, d) = down(silu(gate(x)) * up(x))."""
    return (silu(x @ gate) * (x @ up)) @ down


def lm_head(h: np.ndarray, embedding: np.ndarray) -> np.ndarray:
    """h: (n, d), embedding: (V, d) -> logits (n, V) = h @ embedding.T (tied), float32.

    Computed as (embedding @ h.T).T: the (V, d) table as the left operand is one-thread BLAS's faster layout (10-20 %
    here); the result is that product's transposed view (Fortran order), not a copy."""
    return (embedding @ h.T).T


def attention_block(x: np.ndarray, weights: GPTWeights, layer: int, caches: list[KVCache], spans: list[slice],
                    positions: np.ndarray, rotation: tuple, keep_maps: bool,
                    switched_off: tuple[int, ...] = ()) -> tuple[np.ndarray, list]:
    """x: (N, d) normed rows of every sequence (sequence b owns rows spans[b]), positions: (N,) -> (N, d), maps.

    Q, K, V and the output projection run on all N rows at once; each sequence's queries attend to its own cache.
    rotation: rope_angles(positions). maps[b]: (H, n_b, t_b) if keep_maps else None. switched_off: heads whose
    output (before W_O) is set to 0 (zero-ablation; interventions.py has the other experiments)."""
    c = weights.config
    q = rope(split_heads(x @ weights.attn_q[layer], c.n_head), *rotation)  # (H, N, hd)
    k = rope(split_heads(x @ weights.attn_k[layer], c.n_kv_head), *rotation)  # (KV, N, hd)
    v = split_heads(x @ weights.attn_v[layer], c.n_kv_head)  # (KV, N, hd)
    if not keep_maps and len(caches) > 1 and len(caches) == x.shape[0]:  # a decode step: one token per sequence
        heads_out, maps = padded_cache_attention(q, k, v, caches, layer, positions), [None] * len(caches)
    else:
        heads_out, maps = np.empty_like(q), []
        for cache, rows in zip(caches, spans):
            keys, values = cache.store(layer, k[:, rows], v[:, rows])  # (KV, t, hd)
            heads_out[:, rows], weights_b = causal_attention(q[:, rows], keys, values, positions[rows])
            maps.append(weights_b if keep_maps else None)
    if switched_off:
        heads_out[list(switched_off)] = 0.0
    merged = heads_out.transpose(1, 0, 2).reshape(x.shape[0], -1)  # (N, H * hd)
    return merged @ weights.attn_output[layer], maps


def run(weights: GPTWeights, caches: list[KVCache], chunks: list[list[int]], all_logits: bool = False,
        keep_maps: bool = False, keep_hidden: bool = False, ablate=()) -> tuple:
    """Add chunks[b] (token ids) to caches[b], every sequence in one pass over the weights.

    ablate: ((layer, head), ...) heads switched off (their output before W_O set to 0) in this pass.

    -> logits: (sum n_b, V) for every new row if all_logits else (B, V) for each chunk's last token;
       maps[b]: (L, H, n_b, t_b) float32 if keep_maps else None;
       and with keep_hidden a third value: every new row after the final norm (sum n_b, d)."""
    c = weights.config
    if len(chunks) != len(caches) or any(len(ids) == 0 for ids in chunks):
        raise ValueError("one non-empty chunk of ids per cache is needed")
    ids = np.concatenate([np.asarray(chunk, dtype=np.int64) for chunk in chunks])
    if ids.min() < 0 or ids.max() >= c.vocab:
        raise ValueError(f"token ids must lie in [0, {c.vocab})")
    if any(cache.length + len(chunk) > CONTEXT_LENGTH for cache, chunk in zip(caches, chunks)):
        raise ValueError(f"a sequence would pass the model's context of {CONTEXT_LENGTH} tokens")
    ends = np.cumsum([len(chunk) for chunk in chunks])
    spans = [slice(int(end - len(chunk)), int(end)) for chunk, end in zip(chunks, ends)]
    positions = np.concatenate([cache.length + np.arange(len(chunk)) for cache, chunk in zip(caches, chunks)])
    rotation = rope_angles(positions, c.head_dim, c.rope_base)  # the same for every layer
    for cache, chunk in zip(caches, chunks):
        cache.reserve(len(chunk))
    off = checked_heads(ablate, c)

    x = np.asarray(weights.embedding[ids], dtype=np.float32)  # (N, d)
    layer_maps = []
    for layer in range(c.n_layer):
        attended, maps = attention_block(rms_norm(x, weights.attn_norm[layer], c.norm_eps), weights, layer,
                                         caches, spans, positions, rotation, keep_maps, off.get(layer, ()))
        x = x + attended
        x = x + swiglu(rms_norm(x, weights.ffn_norm[layer], c.norm_eps), weights.ffn_gate[layer],
                       weights.ffn_up[layer], weights.ffn_down[layer])
        layer_maps.append(maps)
    for cache, chunk in zip(caches, chunks):
        cache.length += len(chunk)

    rows = x if all_logits or keep_hidden else x[ends - 1]
    hidden = rms_norm(rows, weights.output_norm, c.norm_eps)
    scored = hidden[ends - 1] if keep_hidden and not all_logits else hidden  # the rows whose logits are asked for
    logits = lm_head(scored, weights.embedding)
    per_sequence = [np.stack([layer_maps[layer][b] for layer in range(c.n_layer)]) if keep_maps else None
                    for b in range(len(chunks))]
    if keep_hidden:
        return logits, per_sequence, hidden
    return logits, per_sequence


def checked_heads(heads, config: GPTConfig) -> dict[int, tuple[int, ...]]:
    """((layer, head), ...) -> {layer: (head, ...)}; ValueError naming a head the model does not have."""
    by_layer: dict[int, tuple[int, ...]] = {}
    for layer, head in heads:
        if not (0 <= int(layer) < config.n_layer and 0 <= int(head) < config.n_head):
            raise ValueError(f"no head L{layer}H{head}: layers 0-{config.n_layer - 1}, heads 0-{config.n_head - 1}")
        by_layer[int(layer)] = tuple(sorted(set(by_layer.get(int(layer), ())) | {int(head)}))
    return by_layer


# ---------------------------------------------------------------- the API

def forward(weights: GPTWeights, ids, all_logits: bool = True) -> GPTOutput:
    """ids: (n,) -> GPTOutput(logits (n, V), attention (L, H, n, n), hidden (n, d)): the full pass, every map kept.

    all_logits=False: logits (1, V) for the last token only (the LM head's (n, V) product is a fifth of the pass).
    At most MAX_MAP_TOKENS tokens (the maps grow as n^2: 283 MB at 512)."""
    if len(ids) > MAX_MAP_TOKENS:
        raise ValueError(f"{len(ids)} tokens: every attention map is kept for at most {MAX_MAP_TOKENS} tokens "
                         f"(use prefill for the next token of a longer text)")
    cache = KVCache(weights.config, capacity=len(ids))
    logits, maps, hidden = run(weights, [cache], [list(ids)], all_logits=all_logits, keep_maps=True, keep_hidden=True)
    return GPTOutput(logits, maps[0], hidden)


def forward_many(weights: GPTWeights, sequences: list) -> list[GPTOutput]:
    """B sequences of ids (any lengths) -> each one's GPTOutput(logits (n_b, V), attention (L, H, n_b, n_b)), from
    ONE pass over the weights: the linear layers see every sequence's rows at once (at 16 sequences of 40 tokens
    about twice as fast as 16 passes); each sequence attends only to itself, as in its own pass."""
    return [GPTOutput(logits, maps) for logits, maps in
            maps_of_each(functools.partial(run, weights), weights.config, sequences, MAX_MAP_TOKENS)]


def prefill(weights: GPTWeights, ids) -> tuple[np.ndarray, KVCache]:
    """ids: (n,) -> (logits of the token after the last (V,), the KVCache of the n tokens)."""
    logits, caches = prefill_many(weights, [ids])
    return logits[0], caches[0]


def prefill_many(weights: GPTWeights, sequences: list, ablate=()) -> tuple[np.ndarray, list[KVCache]]:
    """B sequences of ids (any lengths) -> (each one's next-token logits (B, V), their KVCaches).

    All sequences go through each pass together, PREFILL_CHUNK tokens of each at a time: a long text's scores
    (H, chunk, t) stay small, since each chunk attends to the cache the earlier chunks filled. ablate: heads
    switched off in every pass (run's)."""
    return prefill_in_chunks(functools.partial(run, weights, ablate=ablate), weights.config, sequences, PREFILL_CHUNK)


def decode_step(weights: GPTWeights, caches: list[KVCache], next_ids: list[int]) -> np.ndarray:
    """B caches (any lengths), one new id each -> logits (B, V) of the token after it; appends to each cache.

    One pass over the weights serves all B sequences (the linear layers see a (B, d) batch)."""
    logits, _ = run(weights, caches, [[int(i)] for i in next_ids])
    return logits


@functools.cache
def default_model() -> tuple[GPTWeights, BPETokenizer]:
    """-> the installed model's weights (memory-mapped) and tokenizer, loaded once per process.

    A process-wide cache on purpose: the weights are read-only and shared through the page cache, so one copy per
    process is exactly what every caller wants; GPTUnavailable when the package is missing (not cached: retried)."""
    path = gguf_path()
    return read_weights(path), BPETokenizer(read_vocabulary(path))


def _ids(tokenizer: BPETokenizer, text: str) -> list[int]:
    ids = tokenizer.encode(text)
    if not ids:
        raise ValueError("the text is empty: the model needs at least one token")
    if len(ids) > CONTEXT_LENGTH:
        raise ValueError(f"the text has {len(ids)} tokens, more than the model's context of {CONTEXT_LENGTH}")
    return ids


def attention_maps(text: str) -> tuple[list[str], np.ndarray]:
    """text -> (its tokens as vocabulary strings, e.g. 'Ġanimal'; weights (30, 9, n, n) float32). No BOS added.

    ValueError (with the reason) for an empty text or one of more than MAX_MAP_TOKENS tokens."""
    weights, tokenizer = default_model()
    ids = _ids(tokenizer, text)
    return tokenizer.token_strings(ids), forward(weights, ids, all_logits=False).attention


def next_token_logits(text: str, ablate=()) -> np.ndarray:
    """text -> (49152,) float32: the model's scores for the token after the text (no BOS added).

    ablate: ((layer, head), ...) heads switched off (zero-ablation: their output before W_O set to 0); () gives the
    model's own scores, bit for bit. ValueError for an empty text, one past the context or a head not in the model."""
    weights, tokenizer = default_model()
    logits, _ = prefill_many(weights, [_ids(tokenizer, text)], ablate=tuple(ablate))
    return logits[0]

