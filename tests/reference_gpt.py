"""A separately written SmolLM2 (Llama) forward pass in float64, the reference for attention_core.smollm2.

Shares no code with it: the GGUF's raw blocks are dequantized here by hand (Q8_0: a float16 scale per 32 int8;
Q4_1: a float16 scale and minimum per 32 four-bit numbers), llama.cpp's row permutation of attn_q/attn_k is undone
so RoPE is the plain rotate-half form (as in Hugging Face's Llama), every query head is its own loop iteration with
its key/value head chosen as h // 3, and every softmax row is its own loop. Slow, and plain.
"""

from __future__ import annotations

import math

import numpy as np

from tests.reference_ops import rms_norm, rotate_half_rope

BLOCK = 32  # numbers per quantisation block (Q8_0 and Q4_1)
F32, Q4_1, Q8_0 = 0, 3, 8  # ggml type ids


def dequantize_rows(raw: np.ndarray, kind: int, row_length: int) -> np.ndarray:
    """raw: (rows, bytes per row) uint8 blocks (or float32 values) -> (rows, row_length) float64."""
    if kind == F32:
        return np.asarray(raw, dtype=np.float64).reshape(-1, row_length)
    rows = raw.shape[0]
    if kind == Q8_0:  # per block: float16 scale d, 32 int8 q; x = d * q
        blocks = raw.reshape(rows, row_length // BLOCK, 2 + BLOCK)
        scale = blocks[..., :2].copy().view("<f2").astype(np.float64)  # (rows, blocks, 1)
        q = blocks[..., 2:].copy().view(np.int8).astype(np.float64)
        return (scale * q).reshape(rows, row_length)
    if kind == Q4_1:  # per block: float16 scale d, float16 minimum m, 16 bytes: low nibbles 0-15, high 16-31
        blocks = raw.reshape(rows, row_length // BLOCK, 4 + BLOCK // 2)
        scale = blocks[..., 0:2].copy().view("<f2").astype(np.float64)
        minimum = blocks[..., 2:4].copy().view("<f2").astype(np.float64)
        packed = blocks[..., 4:]
        q = np.concatenate([packed & 0x0F, packed >> 4], axis=-1).astype(np.float64)
        return (scale * q + minimum).reshape(rows, row_length)
    raise ValueError(f"ggml type {kind} is not handled by the reference")


class GGUFTensors:
    """GGUF file -> name -> float64 array in Hugging Face's (out, in) orientation, attn_q/attn_k rows un-permuted.

    Dequantized on each access (all of it in float64 would be 1.1 GB)."""

    def __init__(self, path):
        import gguf  # only the container's parsing: the dequantization is this module's own

        reader = gguf.GGUFReader(path)
        self.heads = int(reader.fields["llama.attention.head_count"].contents())
        self.kv_heads = int(reader.fields["llama.attention.head_count_kv"].contents())
        self.raw = {tensor.name: tensor for tensor in reader.tensors}

    def __getitem__(self, name: str) -> np.ndarray:
        tensor = self.raw[name]
        shape = [int(s) for s in tensor.shape]  # ggml order: (in, out)
        values = dequantize_rows(np.asarray(tensor.data), int(tensor.tensor_type), shape[0])
        values = values.reshape(tuple(reversed(shape)))
        if name.endswith("attn_q.weight"):
            values = unpermute(values, self.heads)
        elif name.endswith("attn_k.weight"):
            values = unpermute(values, self.kv_heads)
        return values


def unpermute(w: np.ndarray, heads: int) -> np.ndarray:
    """w: (heads * hd, in) in llama.cpp's order (each head's rows as pairs 2i, 2i+1) -> Hugging Face's order
    (each head's first half, then its second half)."""
    hd = w.shape[0] // heads
    return w.reshape(heads, hd // 2, 2, w.shape[1]).swapaxes(1, 2).reshape(w.shape)


def softmax_causal_row(scores: np.ndarray, i: int, hidden=()) -> np.ndarray:
    """One row of scores at query i -> weights: keys 0..i by exp(s - max) / sum, keys after i exactly 0; a key in
    `hidden` (other than i itself) also gets 0."""
    row = np.zeros_like(scores)
    keys = [j for j in range(i + 1) if j == i or j not in hidden]
    visible = scores[keys]
    e = np.exp(visible - visible.max())
    row[keys] = e / e.sum()
    return row


def forward(tensors: GGUFTensors, ids, n_layer: int = 30, heads: int = 9, kv_heads: int = 3,
            base: float = 100000.0, eps: float = 1e-5, head_override=None, resid_override=None, hidden=(),
            record: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """ids: (n,) -> logits (n, V), attention (n_layer, heads, n, n), both float64.

    Interventions, for the tests of attention_core.smollm2.interventions: head_override {(layer, head, position):
    (hd,) vector} replaces that head's output (before the output projection) at that position; resid_override
    {(layer, position): (d,) vector} replaces the residual stream entering that layer (n_layer: after the last) at
    that position; hidden: key positions no later query may see. record (a dict) receives "resid" (the residual
    entering each layer and the final one), "heads" ((layer, head) -> (n, hd) outputs) and "mlp" (per layer)."""
    head_override = head_override or {}
    resid_override = resid_override or {}
    embedding = tensors["token_embd.weight"]
    x = embedding[np.asarray(ids)].copy()
    n, d = x.shape
    hd = d // heads
    maps = np.zeros((n_layer, heads, n, n))
    if record is not None:
        record.update(resid=[], heads={}, mlp=[])
    for layer in range(n_layer):
        for (where, position), vector in resid_override.items():
            if where == layer:
                x[position] = vector
        if record is not None:
            record["resid"].append(x.copy())
        w = {key: tensors[f"blk.{layer}.{key}.weight"] for key in
             ("attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down")}
        h = rms_norm(x, w["attn_norm"], eps)
        q, k, v = h @ w["attn_q"].T, h @ w["attn_k"].T, h @ w["attn_v"].T
        concat = np.zeros((n, heads * hd))
        for head in range(heads):
            shared = head // (heads // kv_heads)  # grouped-query: three query heads per key/value head
            qh = rotate_half_rope(q[:, head * hd:(head + 1) * hd], base)
            kh = rotate_half_rope(k[:, shared * hd:(shared + 1) * hd], base)
            vh = v[:, shared * hd:(shared + 1) * hd]
            scores = qh @ kh.T / math.sqrt(hd)
            for i in range(n):
                maps[layer, head, i] = softmax_causal_row(scores[i], i, hidden)
            out = maps[layer, head] @ vh
            for i in range(n):
                if (layer, head, i) in head_override:
                    out[i] = head_override[(layer, head, i)]
            if record is not None:
                record["heads"][(layer, head)] = out.copy()
            concat[:, head * hd:(head + 1) * hd] = out
        x = x + concat @ w["attn_output"].T
        h = rms_norm(x, w["ffn_norm"], eps)
        gate = h @ w["ffn_gate"].T
        mlp = ((gate / (1.0 + np.exp(-gate))) * (h @ w["ffn_up"].T)) @ w["ffn_down"].T
        if record is not None:
            record["mlp"].append(mlp)
        x = x + mlp
    for (where, position), vector in resid_override.items():
        if where == n_layer:
            x[position] = vector
    if record is not None:
        record["resid"].append(x.copy())
    logits = rms_norm(x, tensors["output_norm.weight"], eps) @ embedding.T
    return logits, maps
