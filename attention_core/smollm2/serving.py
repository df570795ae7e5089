"""How SmolLM2 writes text: its step functions for the class's generation server (attention_core.gpt.batching) and
greedy decoding that reuses a pass already made."""

from __future__ import annotations

import numpy as np

from attention_core.attention import softmax
from attention_core.gpt import sampling as gpt_sampling
from attention_core.gpt.batching import GenerationError, GenerationRequest, StepFunctions, step_seed
from attention_core.gpt.kv_cache import KVCache
from attention_core.smollm2.model import CONTEXT_LENGTH, decode_step, prefill, run


STOP_IDS = frozenset({0, 2})  # <|endoftext|> and <|im_end|>: the model ends its text or its turn


def gpt_step_functions(weights) -> StepFunctions:
    """GPTWeights -> the scheduler's view of SmolLM2: one run pass per step, seeded sampling with
    attention_core.gpt.sampling (the token is sample_token's with seed step_seed(seed, step); its probability is
    sampling_probs' at that token), stopping at <|endoftext|> and <|im_end|>."""
    def new_cache(expected_length: int):
        return KVCache(weights.config, capacity=expected_length)

    def step(caches, chunks):
        return run(weights, caches, chunks)[0]

    def sample(logits, request: GenerationRequest, index: int) -> tuple[int, float]:
        if request.top_k is None and request.top_p in (None, 1) and request.temperature > gpt_sampling.GREEDY_BELOW:
            # sampling_probs' own arithmetic without its sort (5 ms a row, 40 rows a step), which keeps every token
            probs = softmax(np.asarray(logits, dtype=np.float64), temperature=request.temperature)
            probs = probs / probs.sum()
        else:
            probs = gpt_sampling.sampling_probs(logits, request.temperature, request.top_k, request.top_p)
        token = int(np.random.default_rng(step_seed(request.seed, index)).choice(probs.size, p=probs))
        return token, float(probs[token])

    def check(request: GenerationRequest) -> None:
        if min(request.prompt_ids) < 0 or max(request.prompt_ids) >= weights.config.vocab:
            raise GenerationError(f"token ids must lie in [0, {weights.config.vocab})")
        if len(request.prompt_ids) + request.max_new_tokens > CONTEXT_LENGTH:
            raise GenerationError(f"prompt and new tokens pass the model's context of {CONTEXT_LENGTH}")
        try:
            gpt_sampling.sampling_probs(np.zeros(2), request.temperature, request.top_k, request.top_p)
        except ValueError as exc:
            raise GenerationError(str(exc)) from None

    return StepFunctions(new_cache, step, sample, STOP_IDS, check)


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
