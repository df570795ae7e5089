"""BERT's weights in NumPy: the config's sizes, the tensors read from safetensors (read-only), or a seeded
initialisation of the same shapes (the untrained copy), and how many numbers they hold. Nothing is global."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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
    """config, seed -> BertWeights at BERT's initialisation, read-only float32: the untrained copy's weights.

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
