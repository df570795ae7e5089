"""Lesson 9's GPT: SmolLM2-135M-Instruct (a 4-bit copy) run in NumPy, and what the lesson measures on it.

Read model.py first: the forward pass as a learner reads it (RMSNorm, rotary positions, grouped-query causal
attention, SwiGLU, the tied unembedding), with the KV cache for generation. Then weights.py (the GGUF file
dequantized once into a float32 cache that every process memory-maps; the untrained copy), tokenizer.py (byte-level
BPE), sampling.py (temperature, top-k, top-p), batching.py (one generation server that steps many students' texts
together), heads.py (sink, previous-token and induction scores; heads picked on one set, scored on another),
interventions.py (switching heads off, patching a run from another, the residual stream read through the
unembedding, direct logit attribution) and causal_study.py (the experiments the lesson "What heads do" shows).
"""

from attention_core.gpt.model import (
    CONTEXT_LENGTH,
    GPTOutput,
    KVCache,
    attention_maps,
    decode_step,
    default_model,
    forward,
    forward_many,
    lm_head,
    next_token_logits,
    prefill,
    prefill_many,
    run,
)
from attention_core.gpt.interventions import logit_lens
from attention_core.gpt.weights import gguf_path

__all__ = ["CONTEXT_LENGTH", "GPTOutput", "KVCache", "attention_maps", "decode_step", "default_model", "forward",
           "forward_many", "gguf_path", "lm_head", "logit_lens", "next_token_logits", "prefill", "prefill_many", "run"]
