"""BERT's encoder (Devlin et al. 2019) in NumPy: the app's fast forward pass (weights: bert_weights, float32 ops:
bert_ops). A learner reads attention_core/pretrained/bert_readable.py, the same computation one step per function; the tests
hold this file to it.

Post-norm form: X = LayerNorm(word + position + type embeddings), then per layer
H = LayerNorm(X + MultiHeadAttention(X)), X = LayerNorm(H + W_2 GELU(W_1 H)), with GELU's exact erf form.
Every function takes the weights as an argument; nothing is global. Computed in the weights' dtype (float32 here).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from attention_core.attention import softmax
from attention_core.pretrained.bert_ops import _gelu_float32_into, _layer_norm_columns, _linear, gelu, layer_norm
from attention_core.pretrained.weights import BertConfig, BertWeights, Encoding, LayerWeights
from attention_core.blas import single_blas_thread


# ---------------------------------------------------------------- the forward pass
#
# Inside, activations are feature-major, x.T of shape (d, tokens): each linear layer is then W @ x.T with the stored
# (out, in) weights as they lie, which OpenBLAS runs faster at a few dozen tokens than x @ W.T, and a sentence's
# heads are a plain reshape (d, n) -> (heads, size, n), no copy. Several sentences side by side are one matrix of
# all their tokens: one pass over the weights for all of them (attention alone is sentence by sentence). Every
# step writes into arrays made once per pass (_Scratch): a fresh array of this size per step costs page faults.

class _Scratch:
    """The arrays one forward pass writes into, made once and reused by every layer: (d, N) and (d_ff, N)."""

    def __init__(self, d: int, d_ff: int, tokens: int, dtype):
        self.q, self.k, self.v, self.context, self.h, self.square = np.empty((6, d, tokens), dtype=dtype)
        self.ffn, self.z, self.z2, self.poly = np.empty((4, d_ff, tokens), dtype=dtype)


def embed(weights: BertWeights, ids: np.ndarray, positions: np.ndarray | None = None) -> np.ndarray:
    """ids: (N,), positions: (N,) (default 0..N-1) -> (N, d) LayerNorm(word + position + type-0 embeddings)."""
    positions = np.arange(len(ids)) if positions is None else positions
    x = weights.word_embeddings[ids] + weights.position_embeddings[positions] + weights.token_type_embeddings[0]
    return layer_norm(x, weights.embed_norm_w, weights.embed_norm_b, weights.config.layer_norm_eps)


def _attention(layer: LayerWeights, xt: np.ndarray, spans: list[slice], key_biases: list[np.ndarray],
               attentions: list[np.ndarray], num_heads: int, s: _Scratch) -> np.ndarray:
    """xt: (d, N), one slice of the N tokens per sentence -> context.T (d, N) (in s.context); each sentence's
    weights (heads, n, n) are written into its ``attentions`` array."""
    d = xt.shape[0]
    size = d // num_heads
    q = _linear(layer.query_w, layer.query_b, xt, s.q)
    q *= xt.dtype.type(1 / math.sqrt(size))
    k = _linear(layer.key_w, layer.key_b, xt, s.k)
    v = _linear(layer.value_w, layer.value_b, xt, s.v)
    for span, key_bias, out in zip(spans, key_biases, attentions):
        n = span.stop - span.start

        def heads(a: np.ndarray) -> np.ndarray:  # (d, N) -> this sentence's (heads, size, n), a view
            return a[:, span].reshape(num_heads, size, n, copy=False)

        scores = np.matmul(heads(q).transpose(0, 2, 1), heads(k), out=out)  # (heads, n, n)
        scores += key_bias
        scores[...] = softmax(scores)  # (written into this sentence's weights)
        np.matmul(heads(v), scores.transpose(0, 2, 1), out=heads(s.context))  # context.T = V.T A.T, head by head
    return s.context


def _encoder_layer(layer: LayerWeights, xt: np.ndarray, spans, key_biases, attentions, config: BertConfig,
                   s: _Scratch, out: np.ndarray) -> np.ndarray:
    """xt: (d, N) -> ``out`` = x'.T (d, N): attention, add & norm, GELU FFN, add & norm (each sentence's weights
    written)."""
    eps = config.layer_norm_eps
    h = _linear(layer.attn_out_w, layer.attn_out_b,
                _attention(layer, xt, spans, key_biases, attentions, config.num_heads, s), s.h)
    h += xt
    _layer_norm_columns(h, layer.attn_norm_w, layer.attn_norm_b, eps, s.square)
    ffn = _linear(layer.ffn_in_w, layer.ffn_in_b, h, s.ffn)
    if ffn.dtype == np.float32:
        _gelu_float32_into(ffn, ffn, s.z, s.z2, s.poly)
    else:
        ffn = gelu(ffn)
    _linear(layer.ffn_out_w, layer.ffn_out_b, ffn, out)
    out += h
    return _layer_norm_columns(out, layer.ffn_norm_w, layer.ffn_norm_b, eps, s.square)


def _checked(config: BertConfig, ids, attention_mask) -> tuple[np.ndarray, np.ndarray]:
    ids = np.asarray(ids, dtype=np.int64)
    if ids.ndim != 1 or not 1 <= len(ids) <= config.max_positions:
        raise ValueError(f"ids must be a 1-D sequence of 1..{config.max_positions} token ids, got shape {ids.shape}")
    if ids.min() < 0 or ids.max() >= config.vocab_size:
        raise ValueError(f"token ids must lie in 0..{config.vocab_size - 1}")
    mask = np.ones(len(ids), dtype=bool) if attention_mask is None else np.asarray(attention_mask).astype(bool)
    if mask.shape != ids.shape or not mask.any():
        raise ValueError("attention_mask must have the shape of ids and at least one 1")
    return ids, mask


def encoder_forward_many(weights: BertWeights, sequences, attention_masks=None) -> list[Encoding]:
    """S sequences of ids (n_s,), masks (n_s,) or None -> S Encodings, each what encoder_forward gives it.

    All the tokens go through the linear layers, the norms and the FFN together (one pass over the weights for
    all of them: the way to read many short sentences); attention stays within each sentence.
    """
    config = weights.config
    masks = [None] * len(sequences) if attention_masks is None else list(attention_masks)
    if not sequences or len(masks) != len(sequences):
        raise ValueError("need at least one sequence, and one mask (or None) per sequence")
    checked = [_checked(config, ids, mask) for ids, mask in zip(sequences, masks)]
    lengths = [len(ids) for ids, _ in checked]
    stops = np.cumsum(lengths)
    spans = [slice(int(stop - n), int(stop)) for n, stop in zip(lengths, stops)]
    x = embed(weights, np.concatenate([ids for ids, _ in checked]), np.concatenate([np.arange(n) for n in lengths]))
    dtype = x.dtype
    key_biases = [np.where(mask, 0, np.finfo(dtype).min).astype(dtype) for _, mask in checked]
    attentions = [np.empty((config.num_layers, config.num_heads, n, n), dtype=dtype) for n in lengths]
    hidden = np.empty((config.num_layers + 1, config.hidden_size, int(stops[-1])), dtype=dtype)  # feature-major
    hidden[0] = x.T
    scratch = _Scratch(config.hidden_size, config.intermediate_size, int(stops[-1]), dtype)
    with single_blas_thread():  # a second thread only waits at these sizes, and takes another student's core
        for i, layer in enumerate(weights.layers):
            _encoder_layer(layer, hidden[i], spans, key_biases, [a[i] for a in attentions], config, scratch,
                           hidden[i + 1])
    return [Encoding(a, np.ascontiguousarray(hidden[:, :, span].transpose(0, 2, 1))) for a, span in zip(attentions, spans)]


def encoder_forward(weights: BertWeights, ids, attention_mask=None) -> Encoding:
    """ids: (n,), attention_mask: (n,) 1 = real, 0 = padding -> Encoding(attentions (L, H, n, n), hidden (L+1, n, d)).

    Masked keys get weight 0 (HF's additive float-minimum); masked rows are computed but mean nothing.
    """
    return encoder_forward_many(weights, [ids], [attention_mask])[0]


def without_positions(weights: BertWeights) -> BertWeights:
    """weights -> the same weights with position embeddings all 0 (the order-blind model of lesson 7's argument)."""
    return dataclasses.replace(weights, position_embeddings=np.zeros_like(weights.position_embeddings))
