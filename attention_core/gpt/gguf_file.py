"""A small GGUF reader: the header, the metadata, the tensor index, each tensor's bytes memory-mapped, and NumPy
dequantizers for the types SmolLM2's and Gemma 3's files hold (F32, F16, Q8_0, Q4_1, Q5_0, Q4_K, Q6_K).

    file = read_gguf(path)                      # GGUFFile: version, metadata {key: value}, tensors {name: TensorInfo}
    raw = tensor_bytes(file, "blk.0.attn_q.weight")          # (rows, bytes per row) uint8, read-only, mapped
    values = dequantize(raw, file.tensors[name].type_id, row_length)   # (rows, row_length) float32

Why not gguf.GGUFReader: it builds NumPy views for every part of every metadata value (~250,000 for the 49,152 tokens
and 48,900 merges): 2.5 s of CPU on an idle machine, ~10 s on a busy one, before a tensor is read. Here the strings are
decoded straight from the mapped bytes. The results equal gguf's bit for bit (tests/test_gguf_file.py: gguf is the
reference). Format (little-endian, versions 2 and 3): https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAGIC = b"GGUF"
VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
STRING, ARRAY = 8, 9  # metadata value types that are not fixed-size scalars
# metadata value type -> NumPy dtype of a scalar of that type (little-endian)
SCALARS = {0: np.dtype("<u1"), 1: np.dtype("<i1"), 2: np.dtype("<u2"), 3: np.dtype("<i2"), 4: np.dtype("<u4"),
           5: np.dtype("<i4"), 6: np.dtype("<f4"), 7: np.dtype("?"), 10: np.dtype("<u8"), 11: np.dtype("<i8"),
           12: np.dtype("<f8")}
# ggml tensor type -> (name, numbers per block, bytes per block)
TENSOR_TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22), 8: ("Q8_0", 32, 34),
                12: ("Q4_K", 256, 144), 14: ("Q6_K", 256, 210)}
_U32, _U64 = struct.Struct("<I"), struct.Struct("<Q")


class GGUFFormatError(ValueError):
    """The file is not a GGUF this reader handles: wrong magic or version, truncated, or an unknown tensor type."""


@dataclass(frozen=True)
class TensorInfo:
    """One tensor's entry in the index: shape in ggml order (the row length first, as gguf's tensor.shape)."""

    name: str
    type_id: int
    shape: tuple[int, ...]
    offset: int  # of its first byte, from the start of the file
    n_bytes: int


@dataclass(frozen=True)
class GGUFFile:
    """A parsed GGUF: metadata values are int, float, bool or str; arrays of numbers are NumPy arrays (read-only),
    arrays of strings lists of str. ``data`` is the whole file mapped read-only (uint8)."""

    path: Path
    version: int
    metadata: dict[str, Any]
    tensors: dict[str, TensorInfo]  # in the file's order
    alignment: int
    data_offset: int  # where the tensors' data begins (aligned)
    data: np.ndarray


def read_gguf(path: Path | str) -> GGUFFile:
    """GGUF file -> GGUFFile (the index only: no tensor is read). GGUFFormatError if the file is not one or is cut."""
    path = Path(path)
    try:
        data = np.memmap(path, dtype=np.uint8, mode="r")
    except ValueError as exc:  # NumPy cannot map an empty file
        raise GGUFFormatError(f"{path.name} is empty") from exc
    buf = memoryview(data)
    try:
        return _parse(path, data, buf)
    except (struct.error, IndexError, UnicodeDecodeError) as exc:
        raise GGUFFormatError(f"{path.name} is truncated or corrupt ({type(exc).__name__}: {exc})") from exc


def _parse(path: Path, data: np.ndarray, buf: memoryview) -> GGUFFile:
    if bytes(buf[:4]) != MAGIC:
        raise GGUFFormatError(f"{path.name} is not a GGUF file (its first bytes are {bytes(buf[:4])!r})")
    version = _U32.unpack_from(buf, 4)[0]
    if version not in VERSIONS:
        raise GGUFFormatError(f"{path.name} is GGUF version {version}; this reader reads {VERSIONS}")
    tensor_count, kv_count = struct.unpack_from("<QQ", buf, 8)
    pos = 24
    metadata: dict[str, Any] = {}
    for _ in range(kv_count):
        key, pos = _string(buf, pos)
        kind, pos = _U32.unpack_from(buf, pos)[0], pos + 4
        metadata[key], pos = _value(buf, pos, kind)
    infos = []
    for _ in range(tensor_count):
        info, pos = _tensor_entry(buf, pos)
        infos.append(info)
    alignment = int(metadata.get("general.alignment", DEFAULT_ALIGNMENT))
    if alignment <= 0 or alignment & (alignment - 1):
        raise GGUFFormatError(f"{path.name}: alignment {alignment} is not a power of two")
    data_offset = -(-pos // alignment) * alignment
    tensors = {}
    for name, type_id, shape, relative in infos:
        tensors[name] = _located(name, type_id, shape, data_offset + relative, len(buf))
    return GGUFFile(path, version, metadata, tensors, alignment, data_offset, data)


def _string(buf: memoryview, pos: int) -> tuple[str, int]:
    """-> (the UTF-8 string at pos: a uint64 length, then its bytes, position after it)."""
    length = _U64.unpack_from(buf, pos)[0]
    end = pos + 8 + length
    if end > len(buf):
        raise IndexError(f"a string of {length} bytes at {pos} runs past the end of the file ({len(buf)} bytes)")
    return str(buf[pos + 8:end], "utf-8"), end


def _value(buf: memoryview, pos: int, kind: int) -> tuple[Any, int]:
    """-> (the metadata value of type `kind` at pos, position after it)."""
    if kind == STRING:
        return _string(buf, pos)
    if kind in SCALARS:
        dtype = SCALARS[kind]
        return np.frombuffer(buf, dtype, 1, pos)[0].item(), pos + dtype.itemsize
    if kind != ARRAY:
        raise GGUFFormatError(f"unknown metadata value type {kind} at byte {pos}")
    item_kind, count = struct.unpack_from("<IQ", buf, pos)
    pos += 12
    if item_kind in SCALARS:  # numbers: one NumPy array, no Python object per element
        dtype = SCALARS[item_kind]
        array = np.frombuffer(buf, dtype, count, pos).copy()  # a copy: the metadata outlives the mapping's users
        array.flags.writeable = False
        return array, pos + count * dtype.itemsize
    items = []
    for _ in range(count):  # strings (the vocabulary, the merges) or nested arrays: each its own length
        item, pos = _value(buf, pos, item_kind)
        items.append(item)
    return items, pos


def _tensor_entry(buf: memoryview, pos: int) -> tuple[tuple[str, int, tuple[int, ...], int], int]:
    """-> ((name, type, shape in ggml order, offset from the data section), position after the entry)."""
    name, pos = _string(buf, pos)
    n_dims = _U32.unpack_from(buf, pos)[0]
    shape = struct.unpack_from(f"<{n_dims}Q", buf, pos + 4)
    pos += 4 + 8 * n_dims
    type_id, relative = struct.unpack_from("<IQ", buf, pos)
    return (name, type_id, tuple(int(s) for s in shape), relative), pos + 12


def _located(name: str, type_id: int, shape: tuple[int, ...], offset: int, file_size: int) -> TensorInfo:
    """An index entry -> TensorInfo, checked: a known type, whole blocks a row, its bytes inside the file."""
    if type_id not in TENSOR_TYPES:
        raise GGUFFormatError(f"tensor {name} has ggml type {type_id}; this reader dequantizes "
                              f"{sorted(v[0] for v in TENSOR_TYPES.values())}")
    _, block, block_bytes = TENSOR_TYPES[type_id]
    if not shape or shape[0] % block:
        raise GGUFFormatError(f"tensor {name}: rows of {shape[0] if shape else 0} numbers are not whole blocks")
    n_bytes = int(np.prod(shape, dtype=np.int64)) // block * block_bytes
    if offset + n_bytes > file_size:
        raise GGUFFormatError(f"tensor {name} ends at byte {offset + n_bytes}, past the end of the file "
                              f"({file_size} bytes): the file is truncated")
    return TensorInfo(name, type_id, shape, offset, n_bytes)


def tensor_bytes(file: GGUFFile, name: str) -> np.ndarray:
    """-> the tensor's raw bytes (rows, bytes per row) uint8, a read-only view of the mapped file (rows: every
    dimension after the first, flattened)."""
    info = file.tensors[name]
    rows = int(np.prod(info.shape[1:], dtype=np.int64))
    return file.data[info.offset:info.offset + info.n_bytes].reshape(rows, info.n_bytes // rows)


def dequantize(raw: np.ndarray, type_id: int, row_length: int, out: np.ndarray | None = None) -> np.ndarray:
    """raw: (rows, bytes per row) uint8 of ggml type `type_id` -> (rows, row_length) float32, into `out` if given.

    The same float32 operations as gguf.quants (so the same bits): Q8_0 x = q * d; Q4_1 x = d * q + m; Q5_0
    x = d * q; Q4_K x = (d * scale) * q - dmin * min; Q6_K x = (d * scale) * q, in that order.
    """
    rows = raw.shape[0]
    out = np.empty((rows, row_length), dtype=np.float32) if out is None else out
    if out.shape != (rows, row_length) or out.dtype != np.float32 or not out.flags.c_contiguous:
        raise ValueError(f"out must be C-contiguous float32 {(rows, row_length)}, not {out.dtype} {out.shape}")
    kind, block, block_bytes = TENSOR_TYPES[type_id]
    if kind in ("F32", "F16"):
        out[...] = raw.view("<f4" if kind == "F32" else "<f2").reshape(rows, row_length)
        return out
    blocks = raw.reshape(rows, row_length // block, block_bytes)
    values = out.reshape(rows, row_length // block, block)
    if kind in _K_QUANTS:
        _K_QUANTS[kind](blocks, values)
        return out
    scale = blocks[..., 0:2].view("<f2").astype(np.float32)  # (rows, blocks, 1)
    if kind == "Q8_0":  # per block: float16 d, then 32 int8
        np.multiply(blocks[..., 2:].view(np.int8), scale, out=values)  # int8 -> float32 is exact, then one rounding
        return out
    if kind == "Q5_0":
        _q5_0(blocks, scale, values)
        return out
    # Q4_1, per block: float16 d, float16 m, 16 bytes: the low nibbles are numbers 0-15, the high nibbles 16-31
    minimum = blocks[..., 2:4].view("<f2").astype(np.float32)
    packed = blocks[..., 4:]
    np.bitwise_and(packed, 0x0F, out=values[..., :block // 2], casting="unsafe")
    np.right_shift(packed, 4, out=values[..., block // 2:], casting="unsafe")
    values *= scale
    values += minimum
    return out


def _q5_0(blocks: np.ndarray, scale: np.ndarray, values: np.ndarray) -> None:
    """Q5_0, per block of 32: float16 d, 4 bytes of fifth bits (bit j for number j), 16 bytes of nibbles (low:
    numbers 0-15, high: 16-31); x = d * (nibble | fifth bit << 4 - 16)."""
    fifth_bits = blocks[..., 2:6].copy().view("<u4")  # (rows, blocks, 1); copied: a view at byte 2 is unaligned
    fifth = (fifth_bits >> np.arange(32, dtype=np.uint32)) & 1  # (rows, blocks, 32)
    packed = blocks[..., 6:]
    nibbles = np.concatenate([packed & 0x0F, packed >> 4], axis=-1)  # (rows, blocks, 32)
    q = (nibbles | (fifth.astype(np.uint8) << 4)).astype(np.int8) - np.int8(16)
    np.multiply(scale, q, out=values, casting="unsafe")


def _q4_k_scales(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """packed: (..., 12) uint8 -> (scales, mins) (..., 8) uint8, six bits each: sub-blocks 0-3 in the low six bits
    of bytes 0-3 (scales) and 4-7 (mins); sub-blocks 4-7 from the nibbles of bytes 8-11 and the top two bits of 0-7."""
    d, m, low = packed[..., 0:4], packed[..., 4:8], packed[..., 8:12]
    scales = np.concatenate([d & 0x3F, (low & 0x0F) | ((d >> 2) & 0x30)], axis=-1)
    mins = np.concatenate([m & 0x3F, (low >> 4) | ((m >> 2) & 0x30)], axis=-1)
    return scales, mins


def _q4_k(blocks: np.ndarray, values: np.ndarray) -> None:
    """Q4_K, per super-block of 256: float16 d, float16 dmin, 12 bytes of six-bit scales and mins (8 sub-blocks of
    32), 128 bytes of nibbles: bytes 32c..32c+31 hold sub-block 2c (low nibbles) and 2c + 1 (high nibbles)."""
    d = blocks[..., 0:2].view("<f2").astype(np.float32)  # (rows, blocks, 1)
    dmin = blocks[..., 2:4].view("<f2").astype(np.float32)
    scales, mins = _q4_k_scales(blocks[..., 4:16])
    step = (d * scales.astype(np.float32))[..., None]  # (rows, blocks, 8, 1)
    offset = (dmin * mins.astype(np.float32))[..., None]
    packed = blocks[..., 16:].reshape(*blocks.shape[:-1], 4, 1, 32)
    q = ((packed >> np.array([0, 4], dtype=np.uint8)[:, None]) & 0x0F).reshape(*blocks.shape[:-1], 8, 32)
    sub_blocks = values.reshape(*values.shape[:-1], 8, 32)
    np.multiply(step, q, out=sub_blocks, casting="unsafe")
    sub_blocks -= offset


def _q6_k(blocks: np.ndarray, values: np.ndarray) -> None:
    """Q6_K, per super-block of 256: 128 bytes of low nibbles, 64 bytes of high bit pairs, 16 int8 scales (one per
    16 numbers), float16 d; x = (d * scale) * (low | high << 4 - 32). Half h (128 numbers) takes low nibbles from
    bytes 64h.. (groups of 32: bytes 0-31 low, 32-63 low, 0-31 high, 32-63 high) and bit pairs 0, 2, 4, 6 of bytes
    32h..32h+31."""
    lead = blocks.shape[:-1]
    low = blocks[..., 0:128].reshape(*lead, 2, 1, 64) >> np.array([0, 4], dtype=np.uint8)[:, None]
    low = (low & 0x0F).reshape(*lead, 8, 32)
    high = blocks[..., 128:192].reshape(*lead, 2, 1, 32) >> np.array([0, 2, 4, 6], dtype=np.uint8)[:, None]
    high = (high & 0x03).reshape(*lead, 8, 32)
    q = ((low | (high << 4)).astype(np.int8) - np.int8(32)).reshape(*lead, 16, 16)
    scales = blocks[..., 192:208].view(np.int8).astype(np.float32)  # (rows, blocks, 16)
    d = blocks[..., 208:210].view("<f2").astype(np.float32)  # (rows, blocks, 1)
    step = (d * scales)[..., None]  # (rows, blocks, 16, 1)
    np.multiply(step, q, out=values.reshape(*lead, 16, 16), casting="unsafe")


_K_QUANTS = {"Q4_K": _q4_k, "Q6_K": _q6_k}
