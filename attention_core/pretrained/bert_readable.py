"""Lesson 8's model, read as code: the forward pass of BERT's encoder (all-MiniLM-L6-v2), one function per step.

Sizes in the comments: n tokens, d = 384 features, h = 12 heads of d_head = d / h = 32 features, d_ff = 1536 in the
feed-forward layer, L = 6 blocks. Weights are used as stored, (out, in), so a linear layer is x @ W.T + b. Everything
is float32, as the weights are. Post-norm form (BERT's): x = LayerNorm(x + Attention(x)), x = LayerNorm(x + FFN(x)).

The app runs attention_core/pretrained/bert.py, which computes the same numbers faster (scratch arrays, features first, many
sentences in one pass); tests/test_bert_readable.py holds that fast path to this file, and this file to a float64
BERT written separately (tests/reference_bert.py). Nothing here checks its input: bert.encoder_forward does.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf

from attention_core.attention import softmax
from attention_core.pretrained.weights import BertWeights, Encoding, LayerWeights


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x: (n, d_in), w: (d_out, d_in), b: (d_out,) -> (n, d_out) = x W^T + b."""
    return x @ w.T + b


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """x: (n, d) -> (n, d): each token's features moved to mean 0 and variance 1, then scaled and shifted."""
    mean = x.mean(axis=-1, keepdims=True)  # (n, 1)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # (n, 1), the biased variance
    return (x - mean) / np.sqrt(variance + eps) * gain + bias  # (n, d)


def gelu(x: np.ndarray) -> np.ndarray:
    """x: (...) -> same shape: x * Phi(x), Phi the standard normal's CDF (the exact, erf form BERT uses)."""
    return x * 0.5 * (1.0 + erf(x / math.sqrt(2.0)))


def embeddings(weights: BertWeights, ids: np.ndarray) -> np.ndarray:
    """ids: (n,) token ids -> x: (n, d) = LayerNorm(word + position + segment embeddings)."""
    n = len(ids)
    word = weights.word_embeddings[ids]  # (n, d): one learned vector per token id
    position = weights.position_embeddings[:n]  # (n, d): one learned vector per position 0 .. n-1
    segment = weights.token_type_embeddings[0]  # (d,): every token is in sentence A (segment 0)
    return layer_norm(word + position + segment, weights.embed_norm_w, weights.embed_norm_b,
                      weights.config.layer_norm_eps)


def self_attention(layer: LayerWeights, x: np.ndarray, num_heads: int,
                   key_bias: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x: (n, d), key_bias: (n,) 0 for a real key, -inf for padding -> (output (n, d), weights (h, n, n))."""
    n, d = x.shape
    d_head = d // num_heads

    def split_heads(t: np.ndarray) -> np.ndarray:  # (n, d) -> (h, n, d_head): head i owns features i*d_head ...
        return t.reshape(n, num_heads, d_head).transpose(1, 0, 2)

    q = split_heads(linear(x, layer.query_w, layer.query_b))  # (h, n, d_head): what each token looks for
    k = split_heads(linear(x, layer.key_w, layer.key_b))  # (h, n, d_head): what each token offers
    v = split_heads(linear(x, layer.value_w, layer.value_b))  # (h, n, d_head): what each token passes on
    scores = q @ k.transpose(0, 2, 1) / np.float32(math.sqrt(d_head))  # (h, n, n): row i = query i . every key
    weights = softmax(scores + key_bias, axis=-1)  # (h, n, n): each row sums to 1
    context = weights @ v  # (h, n, d_head): each token's weighted average of the values
    merged = context.transpose(1, 0, 2).reshape(n, d)  # (n, d): the heads side by side again
    return linear(merged, layer.attn_out_w, layer.attn_out_b), weights  # (n, d): the heads mixed


def feed_forward(layer: LayerWeights, x: np.ndarray) -> np.ndarray:
    """x: (n, d) -> (n, d): each token on its own, widened to d_ff, through GELU, and back to d."""
    wide = gelu(linear(x, layer.ffn_in_w, layer.ffn_in_b))  # (n, d_ff)
    return linear(wide, layer.ffn_out_w, layer.ffn_out_b)  # (n, d)


def block(layer: LayerWeights, x: np.ndarray, num_heads: int, eps: float,
          key_bias: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x: (n, d) -> (x' (n, d), weights (h, n, n)): attention, then the feed-forward layer, each added to its input
    (the residual) and normalised."""
    attended, weights = self_attention(layer, x, num_heads, key_bias)
    x = layer_norm(x + attended, layer.attn_norm_w, layer.attn_norm_b, eps)  # (n, d)
    x = layer_norm(x + feed_forward(layer, x), layer.ffn_norm_w, layer.ffn_norm_b, eps)  # (n, d)
    return x, weights


def encoder(weights: BertWeights, ids, attention_mask=None) -> Encoding:
    """ids: (n,), attention_mask: (n,) 1 = real token, 0 = padding -> Encoding(attentions (L, h, n, n),
    hidden (L + 1, n, d)), the embeddings first."""
    ids = np.asarray(ids)
    mask = np.ones(len(ids), dtype=bool) if attention_mask is None else np.asarray(attention_mask).astype(bool)
    key_bias = np.where(mask, 0, -np.inf).astype(np.float32)  # (n,): a padded key gets weight exactly 0
    config = weights.config
    x = embeddings(weights, ids)  # (n, d)
    hidden, attentions = [x], []
    for layer in weights.layers:  # L blocks, one after the other
        x, attention = block(layer, x, config.num_heads, config.layer_norm_eps, key_bias)
        hidden.append(x)
        attentions.append(attention)
    return Encoding(np.stack(attentions), np.stack(hidden))  # (L, h, n, n), (L + 1, n, d)
