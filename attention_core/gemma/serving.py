"""How Gemma 3 writes text: its step functions for the class's generation server (attention_core.gpt.batching),
the same seeded sampling as SmolLM2's (attention_core.gpt.serving). Gemma 3 270M here is the base model: it
continues a text; it ends one at <eos>."""

from __future__ import annotations

import functools

from attention_core.gpt.batching import StepFunctions
from attention_core.gpt.kv_cache import KVCache
from attention_core.gpt.serving import step_functions
from attention_core.gemma.model import run
from attention_core.gemma.tokenizer import EOS_ID

STOP_IDS = frozenset({EOS_ID})  # <eos>: the base model ends its text


def gemma_step_functions(weights) -> StepFunctions:
    """GemmaWeights -> the scheduler's view of Gemma 3: one run pass per step (every sequence in one pass over the
    weights, each attending to its own cache), seeded sampling, stopping at <eos>."""
    return step_functions(functools.partial(run, weights),
                          lambda expected_length: KVCache(weights.config, capacity=expected_length),
                          vocab=weights.config.vocab, context=weights.config.context, stop_ids=STOP_IDS)
