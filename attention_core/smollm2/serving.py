"""How SmolLM2 writes text: its step functions for the class's generation server (attention_core.gpt.batching) and
greedy decoding that reuses a pass already made."""

from __future__ import annotations

import functools

import numpy as np

from attention_core.gpt.batching import StepFunctions
from attention_core.gpt.kv_cache import KVCache
from attention_core.gpt.serving import step_functions
from attention_core.smollm2.model import CONTEXT_LENGTH, decode_step, prefill, run


STOP_IDS = frozenset({0, 2})  # <|endoftext|> and <|im_end|>: the model ends its text or its turn


def gpt_step_functions(weights) -> StepFunctions:
    """GPTWeights -> the scheduler's view of SmolLM2: one run pass per step, seeded sampling with
    attention_core.gpt.sampling (attention_core.gpt.serving), stopping at <|endoftext|> and <|im_end|>."""
    return step_functions(functools.partial(run, weights),
                          lambda expected_length: KVCache(weights.config, capacity=expected_length),
                          vocab=weights.config.vocab, context=CONTEXT_LENGTH, stop_ids=STOP_IDS)


def greedy_continuation(weights, prefix: list[int], known_logits: np.ndarray, known_next: tuple[int, ...],
                        count: int) -> tuple[int, ...]:
    """-> the ``count`` tokens greedy decoding writes after ``prefix``. known_logits[k] (V,) are the model's scores
    after prefix + known_next[:k] (a pass already made): while the greedy token is the known next one, the pass that
    made known_logits already holds the next scores (the mask: later tokens change no earlier row); from the first
    other token on, the continuation is decoded step by step with the KV cache."""
    written: list[int] = []
    for k in range(count):
        token = int(np.argmax(known_logits[k]))
        written.append(token)
        if k >= len(known_next) or token != known_next[k]:
            break
    else:
        return tuple(written)
    if len(written) < count:
        step_logits, cache = prefill(weights, prefix + written)
        while len(written) < count:
            written.append(int(np.argmax(step_logits)))
            if len(written) < count:
                step_logits = decode_step(weights, [cache], [written[-1]])[0]
    return tuple(written)
