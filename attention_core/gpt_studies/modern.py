"""What the lesson "Attention as it is built today" measures on Gemma 3 270M: grouped-query attention (how much the
maps of heads that share one key/value head differ; the KV cache per token), the sliding window (weight past it on a
long text; the cache it saves), RoPE's two bases and QK-norm on the model's own queries and keys, and a
previous-token head in Japanese picked on some sentences and scored on others against the untrained copy.

read_text is the model's own pass (attention_core.gemma.model's steps, in its order) that also keeps each layer's
queries and keys before and after QK-norm; a test holds its maps equal to gemma.forward's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.gemma.model import (attention_block, geglu, lm_head, rms_norm, rope, rope_angles, split_heads)
from attention_core.gpt.kv_cache import KVCache
from attention_core.measure.head_stats import Count, pick_on_score_on

FLOAT_BYTES = 4  # the app keeps keys and values as float32


# ---------------------------------------------------------------- one pass that keeps q and k

@dataclass(frozen=True)
class TextReading:
    """One text through the model. maps (L, H, n, n); q_raw/q_normed (L, H, n, hd) the queries before RoPE, before
    and after QK-norm; k_raw/k_normed (L, KV, n, hd) the keys likewise; cache_bytes: the KV cache's arrays in bytes
    after the pass (keys + values, as the cache holds them); logits (V,) of the token after the text."""

    maps: np.ndarray
    q_raw: np.ndarray
    q_normed: np.ndarray
    k_raw: np.ndarray
    k_normed: np.ndarray
    cache_bytes: int
    logits: np.ndarray


def read_text(weights, ids) -> TextReading:
    """ids: (n,) -> TextReading: gemma.model.run's pass over an empty KV cache, every map kept, with each layer's
    queries and keys recorded on the way (the same matrices and norms attention_block applies)."""
    c = weights.config
    ids = np.asarray(ids, dtype=np.int64)
    cache = KVCache(c, capacity=len(ids))
    cache.reserve(len(ids))
    positions = np.arange(len(ids))
    x = np.asarray(weights.embedding[ids], dtype=np.float32) * c.embedding_scale
    maps, q_raw, q_normed, k_raw, k_normed = [], [], [], [], []
    for layer in range(c.n_layer):
        normed = rms_norm(x, weights.attn_norm[layer], c.norm_eps)
        q_raw.append(split_heads(normed @ weights.attn_q[layer], c.n_head))
        k_raw.append(split_heads(normed @ weights.attn_k[layer], c.n_kv_head))
        q_normed.append(rms_norm(q_raw[-1], weights.attn_q_norm[layer], c.norm_eps))
        k_normed.append(rms_norm(k_raw[-1], weights.attn_k_norm[layer], c.norm_eps))
        attended, layer_maps = attention_block(normed, weights, layer, [cache], [slice(0, len(ids))], positions, True)
        maps.append(layer_maps[0])
        x = x + rms_norm(attended, weights.post_attention_norm[layer], c.norm_eps)
        mlp = geglu(rms_norm(x, weights.ffn_norm[layer], c.norm_eps), weights.ffn_gate[layer],
                    weights.ffn_up[layer], weights.ffn_down[layer])
        x = x + rms_norm(mlp, weights.post_ffw_norm[layer], c.norm_eps)
    cache.length = len(ids)
    logits = lm_head(rms_norm(x[-1:], weights.output_norm, c.norm_eps), weights.embedding)[0]
    return TextReading(np.stack(maps), np.stack(q_raw), np.stack(q_normed), np.stack(k_raw), np.stack(k_normed),
                       int(cache.keys.nbytes + cache.values.nbytes), logits)


# ---------------------------------------------------------------- grouped-query attention

def total_variation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a, b: (..., n) distributions -> (...) half the summed absolute difference (0 = equal, 1 = no overlap)."""
    return 0.5 * np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)).sum(axis=-1)


def head_distances(maps: np.ndarray, first_row: int = 1) -> np.ndarray:
    """maps: (L, H, n, n) -> (L*H, L*H): the mean total-variation distance between two heads' rows, over the query
    rows from first_row on (row 0, the start token, can only look at itself: every head agrees there)."""
    L, H, n, _ = maps.shape
    rows = np.asarray(maps, dtype=np.float64).reshape(L * H, n, n)[:, first_row:]
    out = np.zeros((L * H, L * H))
    for i in range(L * H):
        out[i, i + 1:] = total_variation(rows[i], rows[i + 1:]).mean(axis=-1)
    return out + out.T


@dataclass(frozen=True)
class GroupSpread:
    """within: mean distance over pairs of query heads that share a key/value head (within_pairs of them);
    between: over pairs that do not (between_pairs); by_group: (L, KV) the mean within each group."""

    within: float
    between: float
    within_pairs: int
    between_pairs: int
    by_group: np.ndarray


def group_spread(maps: np.ndarray, n_kv_head: int, first_row: int = 1) -> GroupSpread:
    """maps: (L, H, n, n), query head h of a layer using key/value head h // (H / n_kv_head) -> GroupSpread."""
    L, H = maps.shape[:2]
    distances = head_distances(maps, first_row)
    group = np.repeat(np.arange(L * n_kv_head), H // n_kv_head)  # each flat head's (layer, kv head) group
    upper = np.triu(np.ones_like(distances, dtype=bool), k=1)
    same = (group[:, None] == group[None, :]) & upper
    other = (group[:, None] != group[None, :]) & upper
    by_group = np.array([distances[np.ix_(group == g, group == g)][np.triu_indices(H // n_kv_head, 1)].mean()
                         for g in range(L * n_kv_head)]).reshape(L, n_kv_head)
    return GroupSpread(float(distances[same].mean()), float(distances[other].mean()), int(same.sum()),
                       int(other.sum()), by_group)


def kv_bytes_per_token(n_layer: int, n_kv_head: int, head_dim: int, number_bytes: int = FLOAT_BYTES) -> int:
    """A model's sizes -> the KV cache's bytes for one more token: a key and a value of head_dim numbers for every
    key/value head of every layer."""
    return 2 * n_layer * n_kv_head * head_dim * number_bytes


def window_cache_bytes(tokens: int, n_layer: int, global_layers, window: int | None, n_kv_head: int, head_dim: int,
                       number_bytes: int = FLOAT_BYTES) -> int:
    """-> the KV cache's bytes for `tokens` tokens when a local layer keeps only its last `window` keys and values
    (window None: every layer keeps every token)."""
    per_layer_token = kv_bytes_per_token(1, n_kv_head, head_dim, number_bytes)
    kept = sum(tokens if window is None or layer in global_layers else min(tokens, window) for layer in range(n_layer))
    return kept * per_layer_token


# ---------------------------------------------------------------- the sliding window

@dataclass(frozen=True)
class WindowReading:
    """A long text's maps summarised. past: (L, H) mean over queries at least `window` tokens in of their weight on
    keys `window` or more back; past_max: (L, H) its largest value over those queries; on_start: (L, H) the part of
    `past` on the start token; last_row: (L, H, n) the last query's weights; queries: how many queries were averaged."""

    tokens: int
    window: int
    past: np.ndarray
    past_max: np.ndarray
    on_start: np.ndarray
    last_row: np.ndarray
    queries: int


def window_reading(maps: np.ndarray, window: int) -> WindowReading:
    """maps: (L, H, n, n) with n > window -> WindowReading (the queries i >= window: key j is past it if i - j >= window)."""
    n = maps.shape[-1]
    if n <= window:
        raise ValueError(f"the text has {n} tokens: more than {window} are needed to look past the window")
    queries = np.arange(window, n)
    behind = queries[:, None] - np.arange(n)[None, :]  # (q, n) how far back each key is
    rows = np.asarray(maps[:, :, window:, :], dtype=np.float64)  # (L, H, q, n)
    past = np.where(behind >= window, rows, 0.0).sum(axis=-1)  # (L, H, q)
    return WindowReading(n, window, past.mean(axis=-1), past.max(axis=-1), rows[..., 0].mean(axis=-1),
                         np.asarray(maps[:, :, -1, :], dtype=np.float64), len(queries))


# ---------------------------------------------------------------- RoPE's bases and QK-norm

def score_by_distance(q: np.ndarray, k: np.ndarray, distances, base: float) -> np.ndarray:
    """q, k: (hd,) before RoPE, distances: (m,) -> (m,) the score q . k / sqrt(hd) when the query sits d tokens after
    the key (rotate-half RoPE with `base`: the score depends on the distance only)."""
    hd = q.shape[-1]
    d = np.asarray(distances)
    cos_q, sin_q = rope_angles(d, hd, base)
    cos_k, sin_k = rope_angles(np.zeros_like(d), hd, base)
    turned_q = rope(np.broadcast_to(np.asarray(q, np.float32), (1, len(d), hd)), cos_q, sin_q)[0]
    turned_k = rope(np.broadcast_to(np.asarray(k, np.float32), (1, len(d), hd)), cos_k, sin_k)[0]
    return (turned_q.astype(np.float64) * turned_k).sum(axis=-1) / np.sqrt(hd)


def slow_pairs(head_dim: int, base: float, tokens: int) -> int:
    """-> how many of a head's head_dim/2 rotating pairs turn less than once (2 pi) over `tokens` positions: pairs
    that barely move carry what a token is rather than where it is."""
    frequencies = base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    return int((frequencies * tokens < 2 * np.pi).sum())


def norm_spread(vectors: np.ndarray, first: int = 1) -> tuple[float, float, float]:
    """vectors: (..., n, hd) -> (mean, min, max) of the vectors' lengths over the tokens from `first` on (the start
    token's own vectors are left out: they are the sink's) and every leading index."""
    lengths = np.linalg.norm(np.asarray(vectors, dtype=np.float64)[..., first:, :], axis=-1)
    return float(lengths.mean()), float(lengths.min()), float(lengths.max())


# ---------------------------------------------------------------- a previous-token head in Japanese

def previous_token_hits(maps: np.ndarray, first_query: int = 2) -> tuple[np.ndarray, int]:
    """maps: (L, H, n, n) -> ((L, H) how many queries i >= first_query put their largest weight on key i - 1, the
    number of such queries). Queries 0 and 1 are left out: 1's previous token is the start token, the sink."""
    n = maps.shape[-1]
    queries = np.arange(first_query, n)
    top = np.argmax(maps[:, :, first_query:, :], axis=-1)  # (L, H, q)
    return (top == queries - 1).sum(axis=-1), len(queries)


def chance_hits(lengths, first_query: int = 2) -> float:
    """-> the expected hits of a head that picks one key at random among the i + 1 it may see, summed over the queries
    i >= first_query of sequences of these lengths."""
    return float(sum(1.0 / (i + 1) for n in lengths for i in range(first_query, n)))


@dataclass(frozen=True)
class HeadResult:
    """head (layer, head) picked on the pick sentences; its held-out Count of queries; the best's pick share."""

    head: tuple[int, int]
    pick_share: float
    held_out: Count


def pick_previous_token_head(per_sentence_maps: list, pick_idx, score_idx) -> HeadResult:
    """per_sentence_maps: [(L, H, n_s, n_s)] -> the head with the highest previous-token share on the pick sentences
    (queries pooled per sentence, each sentence weighted by its queries) and its Count on the score sentences."""
    hits, counts = zip(*(previous_token_hits(m) for m in per_sentence_maps))
    hits = np.stack(hits, axis=-1).astype(np.float64)  # (L, H, sentences)
    counts = np.asarray(counts, dtype=np.float64)
    pick_idx, score_idx = list(pick_idx), list(score_idx)
    # hits over the pick sentences' mean count: pick_on_score_on's mean over them is then the pooled share
    pooled = hits / counts[pick_idx].mean()
    chosen = pick_on_score_on(pooled, pick_idx, score_idx).head
    held = Count(int(hits[chosen][score_idx].sum()), int(counts[score_idx].sum()))
    pick_share = float(hits[chosen][pick_idx].sum() / counts[pick_idx].sum())
    return HeadResult((int(chosen[0]), int(chosen[1])), pick_share, held)


# ---------------------------------------------------------------- what a page shows, in one call each

@dataclass(frozen=True)
class TextNumbers:
    """A learner's text summarised for the page: maps (L, H, n, n); spread: GroupSpread; cache_bytes_per_token
    measured on the KV cache's arrays; lengths: {"q_raw"|"q_normed"|"k_raw"|"k_normed": (mean, min, max)};
    distances (m,) and the last token's query against its own key at those distances under each base."""

    maps: np.ndarray
    spread: GroupSpread
    cache_bytes_per_token: float
    lengths: dict
    distances: np.ndarray
    scores_local_base: np.ndarray
    scores_global_base: np.ndarray


ROPE_DISTANCES = np.concatenate([[0], np.unique(np.round(np.geomspace(1, 32768, 120)).astype(int))])


def text_numbers(weights, ids, rope_layer: int, rope_head: int = 0) -> TextNumbers:
    """ids: (n,) -> TextNumbers (one pass, read_text); RoPE's scores from layer rope_layer's query head rope_head."""
    c = weights.config
    r = read_text(weights, ids)
    lengths = {name: norm_spread(getattr(r, name)) for name in ("q_raw", "q_normed", "k_raw", "k_normed")}
    q = r.q_normed[rope_layer, rope_head, -1]
    k = r.k_normed[rope_layer, rope_head // (c.n_head // c.n_kv_head), -1]
    return TextNumbers(r.maps, group_spread(r.maps, c.n_kv_head), r.cache_bytes / len(ids), lengths,
                       ROPE_DISTANCES, score_by_distance(q, k, ROPE_DISTANCES, c.rope_local_base),
                       score_by_distance(q, k, ROPE_DISTANCES, c.rope_global_base))


def score_range(distances, scores, low: int, high: int) -> float:
    """-> max - min of the scores at distances in [low, high]."""
    d = np.asarray(distances)
    inside = np.asarray(scores)[(d >= low) & (d <= high)]
    return float(inside.max() - inside.min())


def window_summary(maps: np.ndarray, window: int) -> dict:
    """maps: (L, H, n, n) of a long text -> window_reading's fields as a dict (kept on disk as JSON)."""
    w = window_reading(maps, window)
    return {"tokens": w.tokens, "window": w.window, "past": w.past, "past_max": w.past_max, "on_start": w.on_start,
            "last_row": w.last_row, "queries": w.queries}


def previous_token_study(trained_maps: list, untrained_maps: list, pick_idx, score_idx) -> dict:
    """[(L, H, n_s, n_s)] of each sentence in the trained model and the untrained copy -> the head picked in each and
    its held-out hits (k of n), the pick share, and chance's expected hits on the held-out queries (a dict, for disk)."""
    out = {}
    for name, maps in (("trained", trained_maps), ("untrained", untrained_maps)):
        r = pick_previous_token_head(maps, pick_idx, score_idx)
        out[name] = {"head": list(r.head), "pick_share": r.pick_share, "k": r.held_out.k, "n": r.held_out.n}
    out["chance"] = chance_hits([trained_maps[i].shape[-1] for i in score_idx])
    out["pick_sentences"], out["score_sentences"] = len(list(pick_idx)), len(list(score_idx))
    return out
