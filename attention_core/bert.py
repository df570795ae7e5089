"""BERT's encoder (Devlin et al. 2019) in NumPy: its weights, read from safetensors or initialised, and the forward pass.

Post-norm form: X = LayerNorm(word + position + type embeddings), then per layer
H = LayerNorm(X + MultiHeadAttention(X)), X = LayerNorm(H + W_2 GELU(W_1 H)), with GELU's exact erf form.
Every function takes the weights as an argument; nothing is global. Computed in the weights' dtype (float32 here).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attention_core.blas import single_blas_thread

_DTYPES = {"F32": "<f4", "F64": "<f8", "I64": "<i8", "I32": "<i4"}
INIT_STD = 0.02  # BERT's initializer_range


@dataclass(frozen=True)
class BertConfig:
    """The sizes that config.json gives (the rest of it, dropout and so on, does not matter for inference)."""

    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    max_positions: int
    type_vocab_size: int
    layer_norm_eps: float

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_heads

    @classmethod
    def from_json(cls, config: dict) -> "BertConfig":
        if config.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"only the erf GELU is implemented, config says {config['hidden_act']!r}")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only absolute position embeddings are implemented")
        made = cls(int(config["vocab_size"]), int(config["hidden_size"]), int(config["num_hidden_layers"]),
                   int(config["num_attention_heads"]), int(config["intermediate_size"]),
                   int(config["max_position_embeddings"]), int(config["type_vocab_size"]),
                   float(config["layer_norm_eps"]))
        if made.hidden_size % made.num_heads:
            raise ValueError(f"hidden size {made.hidden_size} is not a multiple of {made.num_heads} heads")
        return made


@dataclass(frozen=True)
class LayerWeights:
    """One encoder layer; linear weights are (out, in) as stored: y = x @ W.T + b."""

    query_w: np.ndarray  # (d, d)
    query_b: np.ndarray  # (d,)
    key_w: np.ndarray
    key_b: np.ndarray
    value_w: np.ndarray
    value_b: np.ndarray
    attn_out_w: np.ndarray  # (d, d)
    attn_out_b: np.ndarray
    attn_norm_w: np.ndarray  # (d,)
    attn_norm_b: np.ndarray
    ffn_in_w: np.ndarray  # (d_ff, d)
    ffn_in_b: np.ndarray  # (d_ff,)
    ffn_out_w: np.ndarray  # (d, d_ff)
    ffn_out_b: np.ndarray
    ffn_norm_w: np.ndarray
    ffn_norm_b: np.ndarray


_LAYER_NAMES = {  # LayerWeights field -> the tensor's name after "encoder.layer.{i}."
    "query": "attention.self.query", "key": "attention.self.key", "value": "attention.self.value",
    "attn_out": "attention.output.dense", "attn_norm": "attention.output.LayerNorm",
    "ffn_in": "intermediate.dense", "ffn_out": "output.dense", "ffn_norm": "output.LayerNorm",
}


@dataclass(frozen=True)
class BertWeights:
    """Every weight of the encoder: embeddings (vocab, d), (positions, d), (types, d), their LayerNorm, the layers."""

    config: BertConfig
    word_embeddings: np.ndarray
    position_embeddings: np.ndarray
    token_type_embeddings: np.ndarray
    embed_norm_w: np.ndarray
    embed_norm_b: np.ndarray
    layers: tuple[LayerWeights, ...]


@dataclass(frozen=True)
class Encoding:
    """attentions (L, H, n, n): row i of a head is where token i looks; hidden (L + 1, n, d): embeddings first."""

    attentions: np.ndarray
    hidden: np.ndarray


# ---------------------------------------------------------------- reading the files

def read_safetensors(path: str | Path) -> dict[str, np.ndarray]:
    """file -> {name: read-only array} memory-mapped (no copy): u64 LE header size N, N bytes JSON, raw LE data."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    if raw.size < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    header_size = int(np.asarray(raw[:8]).view("<u8")[0])
    if 8 + header_size > raw.size:
        raise ValueError(f"{path}: header size {header_size} runs past the end of the file")
    header = json.loads(bytes(raw[8:8 + header_size]).decode("utf-8"))
    data = np.asarray(raw[8 + header_size:])  # a plain ndarray view on the mapping
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] not in _DTYPES:
            raise ValueError(f"{path}: tensor {name!r} has dtype {entry['dtype']}, not one of {sorted(_DTYPES)}")
        begin, end = entry["data_offsets"]
        dtype = np.dtype(_DTYPES[entry["dtype"]])
        shape = tuple(entry["shape"])
        if end - begin != dtype.itemsize * math.prod(shape) or end > data.size:
            raise ValueError(f"{path}: tensor {name!r}'s offsets do not fit its shape {shape}")
        tensors[name] = data[begin:end].view(dtype).reshape(shape)
    return tensors


def weights_from_tensors(tensors: dict[str, np.ndarray], config: BertConfig) -> BertWeights:
    """{name: array} in Hugging Face's BertModel naming -> BertWeights, every shape checked against the config."""
    d, ff = config.hidden_size, config.intermediate_size

    def get(name: str, shape: tuple) -> np.ndarray:
        for full in (name, f"bert.{name}"):
            if full in tensors:
                if tensors[full].shape != shape:
                    raise ValueError(f"weight {full!r} has shape {tensors[full].shape}, expected {shape}")
                return tensors[full]
        raise ValueError(f"weight {name!r} is missing")

    layers = []
    for i in range(config.num_layers):
        fields = {}
        for field, name in _LAYER_NAMES.items():
            shape = (d,) if field.endswith("norm") else {"ffn_in": (ff, d), "ffn_out": (d, ff)}.get(field, (d, d))
            fields[f"{field}_w"] = get(f"encoder.layer.{i}.{name}.weight", shape)
            fields[f"{field}_b"] = get(f"encoder.layer.{i}.{name}.bias", shape[:1])  # one bias per output
        layers.append(LayerWeights(**fields))
    return BertWeights(config, get("embeddings.word_embeddings.weight", (config.vocab_size, d)),
                       get("embeddings.position_embeddings.weight", (config.max_positions, d)),
                       get("embeddings.token_type_embeddings.weight", (config.type_vocab_size, d)),
                       get("embeddings.LayerNorm.weight", (d,)), get("embeddings.LayerNorm.bias", (d,)),
                       tuple(layers))


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def initial_weights(config: BertConfig, seed: int, pad_id: int = 0) -> BertWeights:
    """config, seed -> BertWeights at BERT's initialisation, read-only float32: the untrained twin's weights.

    Linear weights and embeddings ~ normal(0, 0.02), the padding row (``pad_id``) 0, biases 0, LayerNorm gain 1
    and bias 0. Same seed, same weights.
    """
    rng = np.random.default_rng([int(seed), 17])

    def normal(*shape: int) -> np.ndarray:
        drawn = rng.standard_normal(shape, dtype=np.float32)
        drawn *= np.float32(INIT_STD)  # in place: the 47 MB word embeddings are never held twice
        return drawn

    def const(value: float, size: int) -> np.ndarray:
        return np.full(size, value, dtype=np.float32)

    d, ff = config.hidden_size, config.intermediate_size
    layers = []
    for _ in range(config.num_layers):
        layers.append(LayerWeights(
            normal(d, d), const(0, d), normal(d, d), const(0, d), normal(d, d), const(0, d),
            normal(d, d), const(0, d), const(1, d), const(0, d),
            normal(ff, d), const(0, ff), normal(d, ff), const(0, d), const(1, d), const(0, d)))
    words = normal(config.vocab_size, d)
    words[pad_id] = 0  # BERT zeroes the padding row at initialisation
    weights = BertWeights(config, words, normal(config.max_positions, d), normal(config.type_vocab_size, d),
                          const(1, d), const(0, d), tuple(layers))
    for array in _arrays(weights):
        _read_only(array)
    return weights


def _arrays(weights: BertWeights) -> list[np.ndarray]:
    """-> every array of the weights (embeddings, their norm, then each layer's fields)."""
    top = [weights.word_embeddings, weights.position_embeddings, weights.token_type_embeddings,
           weights.embed_norm_w, weights.embed_norm_b]
    return top + [getattr(layer, f.name) for layer in weights.layers for f in dataclasses.fields(layer)]


def parameter_count(weights: BertWeights) -> int:
    """weights -> how many numbers the encoder holds (embeddings and every layer; no pooler)."""
    return sum(int(a.size) for a in _arrays(weights))


# ---------------------------------------------------------------- the forward pass
#
# Inside, activations are feature-major, x.T of shape (d, tokens): each linear layer is then W @ x.T with the stored
# (out, in) weights as they lie, which OpenBLAS runs faster at a few dozen tokens than x @ W.T, and a sentence's
# heads are a plain reshape (d, n) -> (heads, size, n), no copy. Several sentences side by side are one matrix of
# all their tokens: one pass over the weights for all of them (attention alone is sentence by sentence). Every
# step writes into arrays made once per pass (_Scratch): a fresh array of this size per step costs page faults.

# Eigen's rational approximation of erf for float32 (an odd numerator over an even denominator, the argument
# clamped to +-4, where float32's erf is already +-1): within 7e-8 of erf in exact arithmetic.
_ERF_CLAMP = 4.0
_ERF_NUMERATOR = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
                  -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02)  # z^13, z^11, ..., z^1
_ERF_DENOMINATOR = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
                    -1.42647390514189e-02)  # z^8, z^6, ..., z^0


def _erf_float32_into(z: np.ndarray, out: np.ndarray, z2: np.ndarray, q: np.ndarray) -> np.ndarray:
    """z: (...) float32, clamped in place -> ``out`` = erf(z); z2 and q: scratch of the same shape."""
    f = np.float32
    np.minimum(z, f(_ERF_CLAMP), out=z)
    np.maximum(z, f(-_ERF_CLAMP), out=z)
    np.multiply(z, z, out=z2)
    np.multiply(z2, f(_ERF_NUMERATOR[0]), out=out)
    out += f(_ERF_NUMERATOR[1])
    for c in _ERF_NUMERATOR[2:]:
        out *= z2
        out += f(c)
    out *= z
    np.multiply(z2, f(_ERF_DENOMINATOR[0]), out=q)
    q += f(_ERF_DENOMINATOR[1])
    for c in _ERF_DENOMINATOR[2:]:
        q *= z2
        q += f(c)
    out /= q
    return out


def erf_float32(x: np.ndarray) -> np.ndarray:
    """x: (...) -> same shape float32 erf(x), a few float32 ulp from the exact value; a new array."""
    z = np.array(x, dtype=np.float32)
    return _erf_float32_into(z, np.empty_like(z), np.empty_like(z), np.empty_like(z))


def _gelu_float32_into(x: np.ndarray, out: np.ndarray, z: np.ndarray, z2: np.ndarray, q: np.ndarray) -> np.ndarray:
    """x: (...) float32 -> ``out`` = gelu(x) (out may be x itself); z, z2, q: scratch of the same shape."""
    np.multiply(x, np.float32(1 / math.sqrt(2)), out=z)
    phi = _erf_float32_into(z, q if out is x else out, z2, z if out is x else q)
    phi += np.float32(1)
    phi *= np.float32(0.5)
    np.multiply(phi, x, out=out)
    return out


def gelu(x: np.ndarray) -> np.ndarray:
    """x: (...) -> same shape x * Phi(x) = x / 2 * (1 + erf(x / sqrt 2)), the exact form BERT uses; a new array.

    float32 goes through erf_float32's approximation (a few ufuncs, no scipy); other dtypes through scipy's erf.
    """
    if x.dtype == np.float32:
        return _gelu_float32_into(x, np.empty_like(x), np.empty_like(x), np.empty_like(x), np.empty_like(x))
    from scipy.special import erf  # only the float64 checks need it: the app's float32 path imports no scipy

    one = x.dtype.type
    return x * (one(0.5) * (one(1) + erf(x * one(1 / math.sqrt(2)))))


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """x: (..., d) -> same shape: each row to mean 0 and variance 1 (biased variance), then * gain + bias."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(variance + x.dtype.type(eps)) * gain + bias


def _layer_norm_columns(xt: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float,
                        square: np.ndarray) -> np.ndarray:
    """xt: (d, N) -> the same array, each column (one token) normalised in place as layer_norm does a row;
    square: scratch (d, N)."""
    average = np.full(xt.shape[0], 1 / xt.shape[0], dtype=xt.dtype)  # a BLAS product: faster and closer than mean(0)
    xt -= average @ xt
    scale = average @ np.multiply(xt, xt, out=square)
    scale += xt.dtype.type(eps)
    np.sqrt(scale, out=scale)
    xt /= scale
    xt *= gain[:, None]
    xt += bias[:, None]
    return xt


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    """scores: (..., n) -> same shape, each row non-negative and summing to 1 (maximum subtracted first)."""
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _softmax_rows_in_place(scores: np.ndarray) -> np.ndarray:
    """scores: (..., n) -> the same array, each row as softmax_rows makes it."""
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores


def _linear(w: np.ndarray, b: np.ndarray, xt: np.ndarray, out: np.ndarray) -> np.ndarray:
    """w: (out, in), b: (out,), xt: (in, N) -> ``out`` (out, N) = W x.T + b: a linear layer, feature-major."""
    np.matmul(w, xt, out=out)
    out += b[:, None]
    return out


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
        _softmax_rows_in_place(scores)
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
