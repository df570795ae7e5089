"""A separately written Gemma 3 forward pass in float64, the reference for attention_core.gemma.

Shares no code with it: the tensors come straight from the GGUF through the `gguf` package (its reader and its own
dequantizers, gguf.quants), in Hugging Face's (out, in) orientation; every query head is its own loop iteration with
its key/value head chosen as head // (heads / kv_heads); every softmax row is its own loop, the window and the causal
rule written as the list of keys a query sees. Slow, and plain. Follows transformers' Gemma3 modelling: the
embedding times sqrt(d) (rounded to float32), RMSNorm with gains 1 + w (the GGUF stores 1 + w), QK-norm before
rotate-half RoPE, scores times head_dim^-0.5, a post-norm on each block's output, GeGLU with the tanh GELU.
"""

from __future__ import annotations

import math

import numpy as np

from tests.reference_ops import rms_norm, rotate_half_rope


class GGUFTensors:
    """GGUF file -> name -> array (out, in), dequantized by the gguf package once and kept as float32 (1.07 GB in
    all); a layer's tensors are handed out as float64, the embedding as float32 (in float64 it would be 1.3 GB)."""

    def __init__(self, path):
        import gguf

        self._gguf = gguf
        self.raw = {tensor.name: tensor for tensor in gguf.GGUFReader(path).tensors}
        self._kept: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._kept:
            tensor = self.raw[name]
            shape = tuple(reversed([int(s) for s in tensor.shape]))  # ggml order is (in, out)
            values = self._gguf.quants.dequantize(tensor.data, tensor.tensor_type)
            self._kept[name] = np.asarray(values, dtype=np.float32).reshape(shape)
        kept = self._kept[name]
        return kept if name == "token_embd.weight" else kept.astype(np.float64)


def softmax_row(scores: np.ndarray, keys: list[int]) -> np.ndarray:
    """One row of scores, the keys the query may see -> weights: exp(s - max) / sum over them, 0 elsewhere."""
    row = np.zeros_like(scores)
    visible = scores[keys]
    e = np.exp(visible - visible.max())
    row[keys] = e / e.sum()
    return row


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def forward(tensors, ids, n_layer: int = 18, heads: int = 4, kv_heads: int = 1, head_dim: int = 256,
            window: int = 512, global_layers=(5, 11, 17), local_base: float = 10_000.0,
            global_base: float = 1_000_000.0, eps: float = 1e-6, logit_rows=None) -> tuple[np.ndarray, np.ndarray]:
    """ids: (n,) -> logits (len(logit_rows), V) for the rows asked (default: every row), attention
    (n_layer, heads, n, n); float64. A local layer's query i sees keys max(0, i - window + 1)..i; a global one 0..i."""
    embedding = tensors["token_embd.weight"]
    x = embedding[np.asarray(ids)].astype(np.float64) * float(np.float32(math.sqrt(embedding.shape[1])))
    n = x.shape[0]
    maps = np.zeros((n_layer, heads, n, n))
    for layer in range(n_layer):
        w = {key: tensors[f"blk.{layer}.{key}.weight"] for key in
             ("attn_norm", "attn_q", "attn_k", "attn_v", "attn_q_norm", "attn_k_norm", "attn_output",
              "post_attention_norm", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down", "post_ffw_norm")}
        is_global = layer in global_layers
        base = global_base if is_global else local_base
        h = rms_norm(x, w["attn_norm"], eps)
        q, k, v = h @ w["attn_q"].T, h @ w["attn_k"].T, h @ w["attn_v"].T
        concat = np.zeros((n, heads * head_dim))
        for head in range(heads):
            shared = head // (heads // kv_heads)
            qh = rotate_half_rope(rms_norm(q[:, head * head_dim:(head + 1) * head_dim], w["attn_q_norm"], eps), base)
            kh = rotate_half_rope(rms_norm(k[:, shared * head_dim:(shared + 1) * head_dim], w["attn_k_norm"], eps),
                                  base)
            vh = v[:, shared * head_dim:(shared + 1) * head_dim]
            scores = qh @ kh.T * head_dim ** -0.5
            for i in range(n):
                first = 0 if is_global else max(0, i - window + 1)
                maps[layer, head, i] = softmax_row(scores[i], list(range(first, i + 1)))
            concat[:, head * head_dim:(head + 1) * head_dim] = maps[layer, head] @ vh
        x = x + rms_norm(concat @ w["attn_output"].T, w["post_attention_norm"], eps)
        h = rms_norm(x, w["ffn_norm"], eps)
        mlp = (gelu_tanh(h @ w["ffn_gate"].T) * (h @ w["ffn_up"].T)) @ w["ffn_down"].T
        x = x + rms_norm(mlp, w["post_ffw_norm"], eps)
    rows = range(n) if logit_rows is None else logit_rows
    final = rms_norm(x[list(rows)], tensors["output_norm.weight"], eps)
    logits = np.empty((final.shape[0], embedding.shape[0]))
    for start in range(0, embedding.shape[0], 16384):  # the table in float64 a slice at a time
        logits[:, start:start + 16384] = final @ embedding[start:start + 16384].astype(np.float64).T
    return logits, maps
