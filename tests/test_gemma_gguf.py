"""attention_core.gpt.gguf_file on Gemma 3's file: Q5_0, Q4_K and Q6_K (and the rest) dequantize every tensor to the
gguf package's float32 bit for bit (gguf.quants is the reference), and hand-made blocks equal a naive loop over each
block written from the format's definition (ggml-common.h / ggml-quants.c's dequantize_row_*)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from attention_core.gemma import weights as gemma_weights
from attention_core.gpt import gguf_file

gguf = pytest.importorskip("gguf")

try:
    GGUF = gemma_weights.gguf_path()
except gemma_weights.GemmaUnavailable:
    GGUF = None
needs_model = pytest.mark.skipif(GGUF is None, reason="Gemma's packages (requirements-model.txt) are absent")
Q5_0, Q4_K, Q6_K = 6, 12, 14


def bits(array: np.ndarray) -> np.ndarray:
    """float32 array -> its bit patterns (array_equal on floats would call -0.0 and 0.0 equal)."""
    return np.ascontiguousarray(array, dtype=np.float32).view(np.uint32)


# ---------------------------------------------------------------- hand-made blocks against a naive loop

def f16(raw: np.ndarray, at: int) -> np.float32:
    return np.float32(raw[at:at + 2].copy().view("<f2")[0])


def naive_q5_0(block: np.ndarray) -> list[np.float32]:
    """22 bytes: float16 d, uint32 qh, 16 bytes qs; number j < 16: qs[j] & 15, j >= 16: qs[j - 16] >> 4; the fifth
    bit is bit j of qh; x = d * (q - 16)."""
    d = f16(block, 0)
    qh = int.from_bytes(bytes(block[2:6]), "little")
    out = []
    for j in range(32):
        nibble = block[6 + j] & 0x0F if j < 16 else block[6 + j - 16] >> 4
        q = (int(nibble) | (((qh >> j) & 1) << 4)) - 16
        out.append(np.float32(d * np.float32(q)))
    return out


def naive_q4_k(block: np.ndarray) -> list[np.float32]:
    """144 bytes: float16 d, float16 dmin, 12 bytes of 6-bit scales/mins (get_scale_min_k4), 128 bytes of nibbles;
    sub-block s of 32: bytes 32 * (s // 2).., low nibbles if s even, high if odd; x = d * sc * q - dmin * m."""
    d, dmin, scales, qs = f16(block, 0), f16(block, 2), [int(b) for b in block[4:16]], block[16:]
    out = []
    for s in range(8):
        if s < 4:
            sc, m = scales[s] & 63, scales[s + 4] & 63
        else:
            sc = (scales[s + 4] & 0x0F) | ((scales[s - 4] >> 6) << 4)
            m = (scales[s + 4] >> 4) | ((scales[s] >> 6) << 4)
        step, offset = np.float32(d * np.float32(sc)), np.float32(dmin * np.float32(m))
        for j in range(32):
            byte = int(qs[32 * (s // 2) + j])
            q = byte & 0x0F if s % 2 == 0 else byte >> 4
            out.append(np.float32(np.float32(step * np.float32(q)) - offset))
    return out


def naive_q6_k(block: np.ndarray) -> list[np.float32]:
    """210 bytes: ql[128], qh[64], int8 scales[16], float16 d. For half n (0, 1) and l < 32 (dequantize_row_q6_K):
    q1 = ql[l] & 15 | (qh[l] >> 0 & 3) << 4 ... q4 = ql[l + 32] >> 4 | (qh[l] >> 6 & 3) << 4, each minus 32, at
    numbers l, l + 32, l + 64, l + 96 of the half; scale index l // 16 + 0, 2, 4, 6."""
    ql, qh = [int(b) for b in block[0:128]], [int(b) for b in block[128:192]]
    scales = block[192:208].view(np.int8)
    d = f16(block, 208)
    out = [np.float32(0)] * 256
    for n in range(2):
        lo, hi, sc = ql[64 * n:64 * n + 64], qh[32 * n:32 * n + 32], scales[8 * n:8 * n + 8]
        for l in range(32):
            qs = [(lo[l] & 15) | (((hi[l] >> 0) & 3) << 4), (lo[l + 32] & 15) | (((hi[l] >> 2) & 3) << 4),
                  (lo[l] >> 4) | (((hi[l] >> 4) & 3) << 4), (lo[l + 32] >> 4) | (((hi[l] >> 6) & 3) << 4)]
            for part, q in enumerate(qs):
                step = np.float32(d * np.float32(sc[l // 16 + 2 * part]))
                out[128 * n + l + 32 * part] = np.float32(step * np.float32(q - 32))
    return out


def random_blocks(kind: int, count: int, seed: int) -> np.ndarray:
    """-> (count, bytes per block) uint8: random bytes, every float16 field a finite random number."""
    _, _, block_bytes = gguf_file.TENSOR_TYPES[kind]
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=(count, block_bytes), dtype=np.uint8)
    halves = {Q5_0: (0,), Q4_K: (0, 2), Q6_K: (208,)}[kind]
    for at in halves:
        raw[:, at:at + 2] = rng.normal(0, 0.05, size=(count, 1)).astype("<f2").view(np.uint8)
    return raw


@pytest.mark.parametrize("kind, naive", [(Q5_0, naive_q5_0), (Q4_K, naive_q4_k), (Q6_K, naive_q6_k)])
@pytest.mark.parametrize("seed", [0, 1])
def test_hand_made_blocks_equal_a_naive_loop_over_each_block(kind, naive, seed):
    _, block, _ = gguf_file.TENSOR_TYPES[kind]
    raw = random_blocks(kind, 6, seed)  # two rows of three blocks
    got = gguf_file.dequantize(raw.reshape(2, -1), kind, 3 * block)
    want = np.array([naive(b) for b in raw], dtype=np.float32).reshape(2, 3 * block)
    assert np.array_equal(bits(got), bits(want))
    assert len(np.unique(got)) > block  # not a degenerate block: the nibbles and scales really vary


@pytest.mark.parametrize("kind", [Q5_0, Q4_K, Q6_K])
def test_hand_made_blocks_equal_ggufs_dequantizer(kind):
    _, block, _ = gguf_file.TENSOR_TYPES[kind]
    raw = random_blocks(kind, 8, 7)
    want = gguf.quants.dequantize(raw.reshape(2, -1), gguf.GGMLQuantizationType(kind))
    assert np.array_equal(bits(gguf_file.dequantize(raw.reshape(2, -1), kind, 4 * block)), bits(want))


# ---------------------------------------------------------------- the real file

@pytest.fixture(scope="module")
def reference():
    return gguf.GGUFReader(GGUF)


@pytest.fixture(scope="module")
def ours():
    return gguf_file.read_gguf(GGUF)


@needs_model
def test_the_first_layers_tensors_equal_ggufs_dequantizer_on_their_bytes(ours):
    """The fast loop's check (no GGUFReader): layer 0's tensors and the output norm, every type but the embedding's."""
    names = [name for name in ours.tensors if name.startswith("blk.0.") or name == "output_norm.weight"]
    kinds = set()
    for name in names:
        info = ours.tensors[name]
        raw = gguf_file.tensor_bytes(ours, name)
        want = gguf.quants.dequantize(np.asarray(raw), gguf.GGMLQuantizationType(info.type_id))
        got = gguf_file.dequantize(raw, info.type_id, info.shape[0])
        assert np.array_equal(bits(got.ravel()), bits(want.ravel())), name
        kinds.add(info.type_id)
    assert {Q5_0, Q4_K, Q6_K} <= kinds


@needs_model
@pytest.mark.slow  # gguf's reader takes 10 s to open the file on an idle machine, minutes on a busy one
def test_the_tensor_index_equals_ggufs(reference, ours):
    assert list(ours.tensors) == [t.name for t in reference.tensors]
    for t in reference.tensors:
        info = ours.tensors[t.name]
        assert (info.type_id, info.shape, info.offset, info.n_bytes) == (
            int(t.tensor_type), tuple(int(s) for s in t.shape), t.data_offset, t.n_bytes), t.name
    kinds = Counter(gguf_file.TENSOR_TYPES[info.type_id][0] for info in ours.tensors.values())
    assert kinds == {"F32": 109, "Q5_0": 81, "Q4_K": 27, "Q8_0": 10, "Q6_K": 9}  # the notes' count: 236 tensors


@needs_model
@pytest.mark.slow  # gguf's reader takes 10 s to open the file on an idle machine, minutes on a busy one
def test_the_first_layer_and_one_tensor_of_each_type_equal_ggufs(reference, ours):
    chosen, seen = [], set()
    for t in reference.tensors:
        if t.name.startswith("blk.0.") or (int(t.tensor_type) not in seen and t.name != "token_embd.weight"):
            chosen.append(t)
            seen.add(int(t.tensor_type))
    assert {Q5_0, Q4_K, Q6_K} <= seen
    for t in chosen:
        info = ours.tensors[t.name]
        got = gguf_file.dequantize(gguf_file.tensor_bytes(ours, t.name), info.type_id, info.shape[0])
        assert np.array_equal(bits(got.ravel()), bits(gguf.quants.dequantize(t.data, t.tensor_type).ravel())), t.name


@needs_model
@pytest.mark.slow
def test_every_tensor_dequantizes_to_ggufs_float32_bit_for_bit(reference, ours):
    kinds = Counter()
    for t in reference.tensors:
        info = ours.tensors[t.name]
        got = gguf_file.dequantize(gguf_file.tensor_bytes(ours, t.name), info.type_id, info.shape[0])
        want = gguf.quants.dequantize(t.data, t.tensor_type)
        assert np.array_equal(bits(got.ravel()), bits(want.ravel())), t.name
        kinds[gguf_file.TENSOR_TYPES[info.type_id][0]] += 1
    assert sum(kinds.values()) == 236 and {"Q5_0", "Q4_K", "Q6_K", "Q8_0", "F32"} == set(kinds)
