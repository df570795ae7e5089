"""A separately written BERT encoder in float64, the independent check of attention_core/pretrained/bert_readable.py (the
readable forward pass a learner reads; the app's fast pass is tested against that one) and of the model's pages.

Shares no code with it: the safetensors file is read with struct + json, every head is its own loop iteration,
each softmax row and each GELU value is computed with the math module (math.exp, math.erf). Slow, and plain.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np

_NUMPY_TYPES = {"F32": "<f4", "F64": "<f8", "I64": "<i8"}


def read_tensors(path: str | Path) -> dict[str, np.ndarray]:
    """model.safetensors -> {name: float64 (or int64) array}, read fully into memory."""
    blob = Path(path).read_bytes()
    (header_size,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_size])
    start = 8 + header_size
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        values = np.frombuffer(blob[start + begin:start + end], dtype=_NUMPY_TYPES[info["dtype"]])
        values = values.astype(np.float64) if info["dtype"].startswith("F") else values.copy()
        tensors[name] = values.reshape(info["shape"])
    return tensors


def _norm(x, gamma, beta, eps):
    out = np.empty_like(x)
    for row in range(x.shape[0]):
        mean = sum(x[row]) / x.shape[1]
        var = sum((v - mean) ** 2 for v in x[row]) / x.shape[1]
        out[row] = (x[row] - mean) / math.sqrt(var + eps) * gamma + beta
    return out


def _softmax(row):
    peak = max(row)
    exps = [math.exp(v - peak) for v in row]
    total = sum(exps)
    return [e / total for e in exps]


def _gelu(x):
    return np.array([[v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in row] for row in x])


def forward(tensors: dict[str, np.ndarray], config: dict, ids: list[int]):
    """-> (attentions (layers, heads, n, n), hidden (layers + 1, n, d)) in float64, no mask."""
    t = tensors
    n = len(ids)
    heads = config["num_attention_heads"]
    d = config["hidden_size"]
    size = d // heads
    eps = config["layer_norm_eps"]
    x = np.array([t["embeddings.word_embeddings.weight"][i] + t["embeddings.position_embeddings.weight"][p]
                  + t["embeddings.token_type_embeddings.weight"][0] for p, i in enumerate(ids)])
    x = _norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], eps)
    all_hidden, all_attn = [x], []
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."

        def linear(inp, name):
            return inp @ t[p + name + ".weight"].T + t[p + name + ".bias"]

        q, k, v = linear(x, "attention.self.query"), linear(x, "attention.self.key"), linear(x, "attention.self.value")
        context = np.zeros((n, d))
        layer_attn = np.zeros((heads, n, n))
        for h in range(heads):
            cols = slice(h * size, (h + 1) * size)
            for i in range(n):
                scores = [float(np.dot(q[i, cols], k[j, cols])) / math.sqrt(size) for j in range(n)]
                layer_attn[h, i] = _softmax(scores)
                context[i, cols] = sum(layer_attn[h, i, j] * v[j, cols] for j in range(n))
        h1 = _norm(x + linear(context, "attention.output.dense"), t[p + "attention.output.LayerNorm.weight"],
                   t[p + "attention.output.LayerNorm.bias"], eps)
        ffn = linear(_gelu(linear(h1, "intermediate.dense")), "output.dense")
        x = _norm(h1 + ffn, t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"], eps)
        all_hidden.append(x)
        all_attn.append(layer_attn)
    return np.array(all_attn), np.array(all_hidden)
