"""Lesson 9's KV cache in CPU time: greedy new tokens computed without the cache (the whole text run again for every
token) and with it (one cached step per token), each timed in CPU seconds (time.process_time).

CPU time, not wall time: the page runs this in a child process at the lowest priority beside a class's servers
(ui/shared/child.py), where a wall clock would also count the time the child waits for a core. The child has one
BLAS thread, so the process's CPU time is the computation's. ``time_lengths`` is what the child runs: it loads the
model itself (the float32 weights memory-mapped from the on-disk cache that every process shares).
"""

from __future__ import annotations

import time

import importlib


def time_per_token(weights, ids, count: int, model: str = "smollm2") -> dict:
    """``count`` greedy new tokens after ``ids``, each way -> {"without", "with": CPU seconds per new token, "same":
    both ways wrote the same tokens, "n": len(ids), "k": count, "length": len(ids) + count, "tokens": the tokens
    written with the cache}."""
    core = importlib.import_module(f"attention_core.{model}")  # smollm2 or gemma: the same calls
    prefill, decode_step = core.prefill, core.decode_step
    text = list(ids)
    without = 0.0
    for _ in range(count):
        start = time.process_time()
        logits = prefill(weights, text)[0]  # a full pass over the text so far, its cache dropped
        without += time.process_time() - start
        text.append(int(logits.argmax()))
    logits, cache = prefill(weights, list(ids))
    caches, with_cache, made = [cache], 0.0, []
    for _ in range(count):
        token = int(logits.argmax())
        made.append(token)
        start = time.process_time()
        logits = decode_step(weights, caches, [token])[0]
        with_cache += time.process_time() - start
    return {"without": without / count, "with": with_cache / count, "same": made == text[len(ids):],
            "n": len(ids), "k": count, "length": len(ids) + count, "tokens": made}


def time_lengths(jobs, model: str = "smollm2") -> dict:
    """jobs: ((ids, count), ...) -> {"timings": [time_per_token(...) for each job], "load_cpu_s": the CPU seconds
    of loading the model here}. model: "smollm2" or "gemma" (lesson 9's two GPTs)."""
    start = time.process_time()
    weights = importlib.import_module(f"attention_core.{model}").default_model()[0]
    load = time.process_time() - start
    return {"timings": [time_per_token(weights, tuple(ids), count, model) for ids, count in jobs], "load_cpu_s": load}
