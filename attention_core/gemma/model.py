"""Gemma 3 270M's forward pass in NumPy, one small function per step (nanoGPT's shape):

    x = embedding[ids] * sqrt(640)                       (n, d)
    for each of the 18 layers:
        x = x + norm(attention(norm(x)))                 QK-norm, RoPE with the layer's base; 4 query heads share
                                                         1 key/value head; local layers see the last 512 tokens only
        x = x + norm(geglu(norm(x)))                     down(gelu(gate(x)) * up(x))
    logits = norm(x) @ embedding.T                       (n, V): the output layer is the embedding (tied)

Four RMSNorms a layer (before and after attention, before and after the MLP); every gain is stored as 1 + w. Every
pass runs over a KV cache: the full pass is a prefill of an empty cache, a generation step adds one token to each
cache; several sequences go through the linear layers together, each attending only to its own cache.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from attention_core.attention import softmax
from attention_core.gpt.kv_cache import KVCache
from attention_core.gpt.passes import maps_of_each, prefill_in_chunks
from attention_core.gemma.tokenizer import GemmaTokenizer
from attention_core.gemma.weights import (  # noqa: F401 - parameter_count: the model's size, for the page
    GemmaWeights, gguf_path, parameter_count, read_vocabulary, read_weights)

MAX_MAP_TOKENS = 1024  # forward keeps (18, 4, n, n) float32 maps: 128 MB at 666 tokens, 302 MB at 1,024
PREFILL_CHUNK = 256  # prefill's tokens per pass: the scores of a long text stay (4, 256, t)
START_TOKEN = 2  # <bos>: the model was trained with it first (without it the sink, and the model, break)


@dataclass(frozen=True)
class GemmaOutput:
    """logits (n, V) float32: row i scores the token after token i; attention (L, H, n, n) float32: row i of a head
    is where token i looks (exact zeros above the diagonal and, on local layers, 512 or more tokens back)."""

    logits: np.ndarray
    attention: np.ndarray


# ---------------------------------------------------------------- the steps

def rms_norm(x: np.ndarray, gain: np.ndarray, eps: float) -> np.ndarray:
    """x: (..., d), gain: (d,) -> (..., d): each row divided by its root mean square, times the gain (1 + w)."""
    mean_square = (x * x).mean(axis=-1, keepdims=True, dtype=np.float32)
    return x / np.sqrt(mean_square + np.float32(eps)) * gain


def rope_angles(positions: np.ndarray, head_dim: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """positions: (n,) -> cos, sin (n, hd/2) float32: pair i turns by position * base^(-2i/hd)."""
    frequencies = base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    angles = np.asarray(positions, dtype=np.float64)[:, None] * frequencies
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x: (heads, n, hd), cos/sin: (n, hd/2) -> same shape: number i and number i + hd/2 of each head form the pair
    turned by angle i (the rotate-half form: the GGUF keeps Gemma's columns as trained, unpermuted)."""
    first, second = np.split(x, 2, axis=-1)
    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)


def split_heads(x: np.ndarray, heads: int) -> np.ndarray:
    """x: (n, heads * hd) -> (heads, n, hd)."""
    return x.reshape(x.shape[0], heads, -1).transpose(1, 0, 2)


def hidden_keys(query_positions: np.ndarray, key_count: int, window: int | None) -> np.ndarray:
    """query_positions: (n,) -> (n, t) bool, True where a query may not look: a later key, or with a window one
    `window` or more tokens back (a local layer's query sees itself and the window - 1 keys before it)."""
    keys = np.arange(key_count)
    behind = np.asarray(query_positions)[:, None] - keys  # how far back each key is
    return (behind < 0) if window is None else (behind < 0) | (behind >= window)


def causal_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, positions: np.ndarray,
                     window: int | None) -> tuple[np.ndarray, np.ndarray]:
    """q: (H, n, hd), k/v: (KV, t, hd), positions: (n,) of the queries -> out (H, n, hd), weights (H, n, t).

    Grouped-query: query head h uses key/value head h // (H / KV). Scores are divided by sqrt(hd) = 16; hidden keys
    (hidden_keys) get weight exactly 0."""
    H, n, hd = q.shape
    kv_heads = k.shape[0]
    grouped = q.reshape(kv_heads, H // kv_heads, n, hd)  # (KV, group, n, hd)
    scores = grouped @ k[:, None].swapaxes(-1, -2) / np.float32(np.sqrt(hd))  # (KV, group, n, t)
    scores = np.where(hidden_keys(positions, k.shape[1], window), -np.inf, scores)
    weights = softmax(scores, axis=-1).astype(np.float32)
    out = weights @ v[:, None]  # (KV, group, n, hd)
    return out.reshape(H, n, hd), weights.reshape(H, n, -1)


def gelu(x: np.ndarray) -> np.ndarray:
    """x: (...) -> GELU in its tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as Gemma was trained."""
    return np.float32(0.5) * x * (np.float32(1) + np.tanh(np.float32(np.sqrt(2 / np.pi))
                                                            * (x + np.float32(0.044715) * x * x * x)))


def geglu(x: np.ndarray, gate: np.ndarray, up: np.ndarray, down: np.ndarray) -> np.ndarray:
    """x: (n, d), gate/up: (d, d_ff), down: (d_ff, d) -> (n, d) = down(gelu(gate(x)) * up(x))."""
    return (gelu(x @ gate) * (x @ up)) @ down


def lm_head(h: np.ndarray, embedding: np.ndarray) -> np.ndarray:
    """h: (n, d), embedding: (V, d) -> logits (n, V) = h @ embedding.T (tied), float32 (computed as the transposed
    (V, d) @ (d, n) product: one-thread BLAS's faster layout)."""
    return (embedding @ h.T).T


def attention_block(x: np.ndarray, weights: GemmaWeights, layer: int, caches: list[KVCache], spans: list[slice],
                    positions: np.ndarray, keep_maps: bool) -> tuple[np.ndarray, list]:
    """x: (N, d) normed rows of every sequence (sequence b owns rows spans[b]), positions: (N,) -> (N, d), maps.

    q, k, v for all N rows at once; QK-norm per head; RoPE with the layer's base; each sequence's queries attend to
    its own cache (the window on local layers). maps[b]: (H, n_b, t_b) if keep_maps else None."""
    c = weights.config
    rotation = rope_angles(positions, c.head_dim, c.rope_base(layer))
    q = split_heads(x @ weights.attn_q[layer], c.n_head)  # (H, N, hd)
    k = split_heads(x @ weights.attn_k[layer], c.n_kv_head)  # (KV, N, hd)
    v = split_heads(x @ weights.attn_v[layer], c.n_kv_head)
    q = rope(rms_norm(q, weights.attn_q_norm[layer], c.norm_eps), *rotation)
    k = rope(rms_norm(k, weights.attn_k_norm[layer], c.norm_eps), *rotation)
    window = None if layer in c.global_layers else c.window
    heads_out, maps = np.empty_like(q), []
    for cache, rows in zip(caches, spans):
        keys, values = cache.store(layer, k[:, rows], v[:, rows])  # (KV, t, hd)
        heads_out[:, rows], weights_b = causal_attention(q[:, rows], keys, values, positions[rows], window)
        maps.append(weights_b if keep_maps else None)
    merged = heads_out.transpose(1, 0, 2).reshape(x.shape[0], -1)  # (N, H * hd)
    return merged @ weights.attn_output[layer], maps


def run(weights: GemmaWeights, caches: list[KVCache], chunks: list[list[int]], all_logits: bool = False,
        keep_maps: bool = False) -> tuple[np.ndarray, list]:
    """Add chunks[b] (token ids) to caches[b], every sequence in one pass over the weights.

    -> logits: (sum n_b, V) for every new row if all_logits else (B, V) for each chunk's last token;
       maps[b]: (L, H, n_b, t_b) float32 if keep_maps else None."""
    c = weights.config
    if len(chunks) != len(caches) or any(len(ids) == 0 for ids in chunks):
        raise ValueError("one non-empty chunk of ids per cache is needed")
    ids = np.concatenate([np.asarray(chunk, dtype=np.int64) for chunk in chunks])
    if ids.min() < 0 or ids.max() >= c.vocab:
        raise ValueError(f"token ids must lie in [0, {c.vocab})")
    if any(cache.length + len(chunk) > c.context for cache, chunk in zip(caches, chunks)):
        raise ValueError(f"a sequence would pass the model's context of {c.context} tokens")
    ends = np.cumsum([len(chunk) for chunk in chunks])
    spans = [slice(int(end - len(chunk)), int(end)) for chunk, end in zip(chunks, ends)]
    positions = np.concatenate([cache.length + np.arange(len(chunk)) for cache, chunk in zip(caches, chunks)])
    for cache, chunk in zip(caches, chunks):
        cache.reserve(len(chunk))

    x = np.asarray(weights.embedding[ids], dtype=np.float32) * c.embedding_scale  # (N, d)
    layer_maps = []
    for layer in range(c.n_layer):
        attended, maps = attention_block(rms_norm(x, weights.attn_norm[layer], c.norm_eps), weights, layer,
                                         caches, spans, positions, keep_maps)
        x = x + rms_norm(attended, weights.post_attention_norm[layer], c.norm_eps)
        mlp = geglu(rms_norm(x, weights.ffn_norm[layer], c.norm_eps), weights.ffn_gate[layer],
                    weights.ffn_up[layer], weights.ffn_down[layer])
        x = x + rms_norm(mlp, weights.post_ffw_norm[layer], c.norm_eps)
        layer_maps.append(maps)
    for cache, chunk in zip(caches, chunks):
        cache.length += len(chunk)

    hidden = rms_norm(x if all_logits else x[ends - 1], weights.output_norm, c.norm_eps)
    per_sequence = [np.stack([layer_maps[layer][b] for layer in range(c.n_layer)]) if keep_maps else None
                    for b in range(len(chunks))]
    return lm_head(hidden, weights.embedding), per_sequence


# ---------------------------------------------------------------- the API

def forward(weights: GemmaWeights, ids, all_logits: bool = True) -> GemmaOutput:
    """ids: (n,) -> GemmaOutput(logits (n, V), attention (L, H, n, n)): the full pass, every map kept.

    all_logits=False: logits (1, V) for the last token only. At most MAX_MAP_TOKENS tokens (maps grow as n^2)."""
    if len(ids) > MAX_MAP_TOKENS:
        raise ValueError(f"{len(ids)} tokens: every attention map is kept for at most {MAX_MAP_TOKENS} tokens "
                         f"(use prefill for the next token of a longer text)")
    cache = KVCache(weights.config, capacity=len(ids))
    logits, maps = run(weights, [cache], [list(ids)], all_logits=all_logits, keep_maps=True)
    return GemmaOutput(logits, maps[0])


def forward_many(weights: GemmaWeights, sequences: list) -> list[GemmaOutput]:
    """B sequences of ids (any lengths) -> each one's GemmaOutput, from ONE pass over the weights (the linear layers
    see every sequence's rows at once; each sequence attends only to itself, as in its own pass)."""
    return [GemmaOutput(logits, maps) for logits, maps in
            maps_of_each(functools.partial(run, weights), weights.config, sequences, MAX_MAP_TOKENS)]


def prefill(weights: GemmaWeights, ids) -> tuple[np.ndarray, KVCache]:
    """ids: (n,) -> (logits of the token after the last (V,), the KVCache of the n tokens)."""
    logits, caches = prefill_many(weights, [ids])
    return logits[0], caches[0]


def prefill_many(weights: GemmaWeights, sequences: list) -> tuple[np.ndarray, list[KVCache]]:
    """B sequences of ids (any lengths) -> (each one's next-token logits (B, V), their KVCaches), PREFILL_CHUNK
    tokens of each a pass (each chunk attends to the cache the earlier chunks filled)."""
    return prefill_in_chunks(functools.partial(run, weights), weights.config, sequences, PREFILL_CHUNK)


def decode_step(weights: GemmaWeights, caches: list[KVCache], next_ids: list[int]) -> np.ndarray:
    """B caches (any lengths), one new id each -> logits (B, V) of the token after it; appends to each cache."""
    logits, _ = run(weights, caches, [[int(i)] for i in next_ids])
    return logits



@functools.cache
def default_model() -> tuple[GemmaWeights, GemmaTokenizer]:
    """-> the installed model's weights (memory-mapped) and tokenizer, loaded once per process (read-only and
    shared through the page cache); GemmaUnavailable when a package is missing (not cached: retried)."""
    path = gguf_path()
    vocabulary = read_vocabulary(path)
    return read_weights(path), GemmaTokenizer(vocabulary.tokens, vocabulary.token_type)


def encode(text: str) -> list[int]:
    """text -> its token ids, the start token (2) first; ValueError for an empty text or one past the context."""
    weights, tokenizer = default_model()
    ids = tokenizer.encode(text)
    if len(ids) <= 1 or not text.strip():
        raise ValueError("the text is empty: the model needs at least one token after the start token")
    if len(ids) > weights.config.context:
        raise ValueError(f"the text has {len(ids)} tokens, more than the model's context of {weights.config.context}")
    return ids


def attention_maps(text: str) -> np.ndarray:
    """text -> weights (18, 4, T, T) float32 over its T tokens (the start token first); ValueError for an empty text
    or one of more than MAX_MAP_TOKENS tokens."""
    return forward(default_model()[0], encode(text), all_logits=False).attention


def next_token_logits(text: str) -> np.ndarray:
    """text -> (262144,) float32: the model's scores for the token after the text (the start token first)."""
    logits, _ = prefill(default_model()[0], encode(text))
    return logits
