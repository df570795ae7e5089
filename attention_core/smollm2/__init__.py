"""SmolLM2-135M-Instruct (a 4-bit copy), the GPT of lessons 9 and 10, run in NumPy.

Read model.py first: the forward pass as a learner reads it (RMSNorm, rotary positions, grouped-query causal
attention, SwiGLU, the tied unembedding), with the KV cache for generation. Then weights.py (the GGUF file
dequantized once into the shared float32 cache; the untrained copy), tokenizer.py (byte-level BPE), serving.py (its
step functions for the class's generation server; greedy decoding), interventions.py (the same pass with heads
switched off or patched, the residual stream read through the unembedding, direct logit attribution) and
prebuild.py (the cache built before a server starts). What it shares with the other GPT lives in attention_core.gpt;
what the lessons measure on it, in attention_core.gpt_studies.
"""

from attention_core.smollm2.model import (
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
from attention_core.smollm2.interventions import logit_lens
from attention_core.smollm2.weights import gguf_path

__all__ = ["CONTEXT_LENGTH", "GPTOutput", "KVCache", "attention_maps", "decode_step", "default_model", "forward",
           "forward_many", "gguf_path", "lm_head", "logit_lens", "next_token_logits", "prefill", "prefill_many", "run"]
