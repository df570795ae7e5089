"""What both GPTs share when they write text for the class's generation server (attention_core.gpt.batching):
seeded sampling of a step's logits and the check of a request, around a model's own cache and pass.

    step_functions(run, new_cache, vocab=..., context=..., stop_ids=...) -> StepFunctions

A request's token at step i is drawn with seed step_seed(seed, i) from attention_core.gpt.sampling's distribution,
so the same request gives the same tokens whichever model-independent batch it shares.
"""

from __future__ import annotations

import numpy as np

from attention_core.attention import softmax
from attention_core.gpt import sampling as gpt_sampling
from attention_core.gpt.batching import GenerationError, GenerationRequest, StepFunctions, step_seed


def seeded_sample(logits: np.ndarray, request: GenerationRequest, index: int) -> tuple[int, float]:
    """logits (V,) -> (the token drawn with seed step_seed(request.seed, index), its probability under the knobs)."""
    if request.top_k is None and request.top_p in (None, 1) and request.temperature > gpt_sampling.GREEDY_BELOW:
        # sampling_probs' own arithmetic without its sort (5 ms a row, 40 rows a step), which keeps every token
        probs = softmax(np.asarray(logits, dtype=np.float64), temperature=request.temperature)
        probs = probs / probs.sum()
    else:
        probs = gpt_sampling.sampling_probs(logits, request.temperature, request.top_k, request.top_p)
    token = int(np.random.default_rng(step_seed(request.seed, index)).choice(probs.size, p=probs))
    return token, float(probs[token])


def step_functions(run, new_cache, *, vocab: int, context: int, stop_ids: frozenset[int]) -> StepFunctions:
    """A model's pass and cache -> the scheduler's view of it.

    run: (caches, chunks of ids) -> ((B, V) logits of each chunk's last token, ...), each cache extended by its chunk;
    new_cache: expected length -> an empty cache; vocab, context: the model's sizes; stop_ids: tokens that end a text."""
    def step(caches, chunks):
        return run(caches, chunks)[0]

    def check(request: GenerationRequest) -> None:
        if min(request.prompt_ids) < 0 or max(request.prompt_ids) >= vocab:
            raise GenerationError(f"token ids must lie in [0, {vocab})")
        if len(request.prompt_ids) + request.max_new_tokens > context:
            raise GenerationError(f"prompt and new tokens pass the model's context of {context}")
        try:
            gpt_sampling.sampling_probs(np.zeros(2), request.temperature, request.top_k, request.top_p)
        except ValueError as exc:
            raise GenerationError(str(exc)) from None

    return StepFunctions(new_cache, step, seeded_sample, stop_ids, check)
