"""The loops both models' passes share around their own ``run`` (attention_core/smollm2/model.py and
attention_core/gemma/model.py): every sequence's maps in one pass, and a long text's prefill in chunks.

``run_pass(caches, chunks, **options)`` is the model's run with its weights bound: it adds chunks[b] (token ids) to
caches[b], all in one pass over the weights -> (logits, maps, ...) as the model's run returns them."""

from __future__ import annotations

from typing import Callable

import numpy as np

from attention_core.gpt.kv_cache import KVCache


def maps_of_each(run_pass: Callable, config, sequences: list, max_tokens: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """B sequences of ids (any lengths) -> [(logits (n_b, V), attention (L, H, n_b, n_b)), ...] from ONE pass over the
    weights: the linear layers see every sequence's rows at once; each sequence attends only to itself."""
    if any(len(ids) > max_tokens for ids in sequences):
        raise ValueError(f"every attention map is kept for at most {max_tokens} tokens a sequence")
    caches = [KVCache(config, capacity=len(ids)) for ids in sequences]
    logits, maps = run_pass(caches, [list(ids) for ids in sequences], all_logits=True, keep_maps=True)[:2]
    ends = np.cumsum([len(ids) for ids in sequences])
    return [(logits[end - len(ids):end], maps[b]) for b, (ids, end) in enumerate(zip(sequences, ends))]


def prefill_in_chunks(run_pass: Callable, config, sequences: list, chunk: int) -> tuple[np.ndarray, list[KVCache]]:
    """B sequences of ids (any lengths) -> (each one's next-token logits (B, V), their KVCaches).

    All sequences go through each pass together, ``chunk`` tokens of each at a time: a long text's scores
    (H, chunk, t) stay small, since each chunk attends to the cache the earlier chunks filled."""
    if not sequences or any(len(ids) == 0 for ids in sequences):
        raise ValueError("prefill needs at least one sequence and at least one token in each")
    caches = [KVCache(config, capacity=len(ids) + 32) for ids in sequences]
    logits = np.empty((len(sequences), config.vocab), dtype=np.float32)
    for start in range(0, max(len(ids) for ids in sequences), chunk):
        active = [b for b, ids in enumerate(sequences) if len(ids) > start]
        logits[active] = run_pass([caches[b] for b in active],
                                  [list(sequences[b][start:start + chunk]) for b in active])[0]
    return logits, caches
