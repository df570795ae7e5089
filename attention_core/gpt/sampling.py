"""Choosing the next token from a model's logits: temperature, top-k, top-p (nucleus), seeded draws, entropy."""

from __future__ import annotations

import numpy as np

from attention_core.attention import softmax

GREEDY_BELOW = 1e-6  # a temperature below this is "always the most likely token" (the limit temperature -> 0)


def sampling_probs(logits, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float | None = None) -> np.ndarray:
    """logits: (V,) -> probabilities (V,) float64 after temperature, then top-k, then top-p (renormalised).

    temperature <= GREEDY_BELOW: one-hot on the argmax (the first one on ties). top_k: only the k most likely
    tokens keep weight (None or >= V: all). top_p: only the smallest set of most likely tokens whose probability
    reaches top_p keeps weight (None or 1: all). Ties at the cut are broken by token id (lower first)."""
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 1 or logits.size == 0:
        raise ValueError(f"logits must be one non-empty row, got shape {logits.shape}")
    if not np.isfinite(temperature) or temperature < 0:
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")
    if top_k is not None and int(top_k) < 1:
        raise ValueError(f"top_k must be at least 1, got {top_k!r}")
    if top_p is not None and not 0 < float(top_p) <= 1:
        raise ValueError(f"top_p must lie in (0, 1], got {top_p!r}")
    if temperature <= GREEDY_BELOW:
        probs = np.zeros_like(logits)
        probs[int(np.argmax(logits))] = 1.0
        return probs
    probs = softmax(logits, temperature=temperature)
    order = np.argsort(-probs, kind="stable")  # most likely first; equal ones by id
    keep = np.ones(probs.size, dtype=bool)
    if top_k is not None and int(top_k) < probs.size:
        keep[order[int(top_k):]] = False
    if top_p is not None and float(top_p) < 1:
        ranked = np.where(keep[order], probs[order], 0.0)
        reached = np.cumsum(ranked)
        # the first rank whose running total reaches top_p closes the set (a tiny slack for rounding in the sum)
        last = int(np.searchsorted(reached, float(top_p) * reached[-1] - 1e-12 * reached[-1]))
        keep[order[last + 1:]] = False
    probs = np.where(keep, probs, 0.0)
    return probs / probs.sum()


def sample_token(logits, *, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                 seed: int = 0) -> int:
    """logits: (V,) -> one token id drawn from sampling_probs(...) with np.random.default_rng(seed): same seed,
    same token."""
    probs = sampling_probs(logits, temperature, top_k, top_p)
    return int(np.random.default_rng(seed).choice(probs.size, p=probs))


def entropy_nats(probs) -> float:
    """probs: (V,) summing to 1 -> -sum p log p in nats (0 for a one-hot; log V for uniform)."""
    probs = np.asarray(probs, dtype=np.float64)
    positive = probs[probs > 0]
    return float(-(positive * np.log(positive)).sum())
