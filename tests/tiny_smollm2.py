"""A tiny SmolLM2-shaped model for the core tests (test_gpt_core, test_gpt_interventions, test_gpt_causal_study):
random weights sharp enough to make peaked attention, and the same weights as the reference pass reads them."""

from __future__ import annotations

import numpy as np

from attention_core.smollm2 import weights as gpt_weights
from attention_core.smollm2.weights import GPTConfig, GPTWeights
from tests import reference_gpt


def random_weights(config: GPTConfig, seed: int, scale: float = 0.4) -> GPTWeights:
    """Weights of a tiny model large enough to make sharp attention (the untrained copy's 0.02 is near uniform)."""
    rng = np.random.default_rng(seed)
    arrays = {name: (1 + 0.1 * rng.standard_normal(shape) if name.endswith("norm") else
                     scale * rng.standard_normal(shape)).astype(np.float32)
              for name, shape in gpt_weights.shapes(config).items()}
    return GPTWeights(config, **arrays)


def as_reference_tensors(weights: GPTWeights) -> dict[str, np.ndarray]:
    """GPTWeights -> the GGUF's names in (out, in), attn_q/attn_k rows un-permuted (what GGUFTensors gives)."""
    c = weights.config
    tensors = {"token_embd.weight": np.asarray(weights.embedding, dtype=np.float64),
               "output_norm.weight": np.asarray(weights.output_norm, dtype=np.float64)}
    for layer in range(c.n_layer):
        for field in gpt_weights.array_fields():
            if field in ("embedding", "output_norm"):
                continue
            value = np.asarray(getattr(weights, field)[layer], dtype=np.float64)
            if field in gpt_weights.LINEAR:
                value = value.T
            if field in ("attn_q", "attn_k"):
                value = reference_gpt.unpermute(value, c.n_head if field == "attn_q" else c.n_kv_head)
            tensors[f"blk.{layer}.{field}.weight"] = value
    return tensors
