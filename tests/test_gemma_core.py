"""Gemma 3's NumPy forward pass against a separate float64 reference (tests/reference_gemma.py, reading the GGUF
through the gguf package), the KV cache against the full pass, batched sequences against one at a time, the
window's exact zeros, the start token's weight, and the maps' properties on the real model."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.blas import single_blas_thread
from attention_core.gemma import model as gemma  # the module itself: a test changes its PREFILL_CHUNK
from attention_core.gemma import weights as gw
from attention_core.gemma.weights import GemmaConfig, GemmaWeights
from attention_core.gpt.kv_cache import KVCache
from tests import reference_gemma

try:
    GGUF = gw.gguf_path()
except gw.GemmaUnavailable as missing:
    pytest.skip(f"Gemma's packages are absent: {missing}", allow_module_level=True)

SHORT = "The animal didn't cross the street because it was too tired."
JAPANESE = "今日はとても良い天気ですね。猫が窓の外を見ています。"
PARAGRAPH = ("Attention lets every token look back at the tokens before it and take what it needs. A model with a "
             "sliding window sees only the most recent part of a long text in most of its layers, and the whole past "
             "in a few. ")


@pytest.fixture(scope="module", autouse=True)
def one_blas_thread():
    with single_blas_thread():  # as the app runs it
        yield


@pytest.fixture(scope="module")
def model():
    return gemma.default_model()


@pytest.fixture(scope="module")
def long_ids(model):
    """More than 600 ids: past the 512-token window."""
    _, tokenizer = model
    ids = tokenizer.encode(PARAGRAPH * 14)
    assert 600 < len(ids) <= 800
    return ids


@pytest.fixture(scope="module")
def short(model):
    weights, tokenizer = model
    ids = tokenizer.encode(SHORT)
    return ids, gemma.forward(weights, ids)


# ---------------------------------------------------------------- against the float64 reference

@pytest.fixture(scope="module")
def reference_tensors():
    return reference_gemma.GGUFTensors(GGUF)


def compare_with_reference(weights, tensors, ids, logit_rows, logits_atol, maps_atol=2e-5):
    """Measured on 14-16 tokens: maps within 2.5e-6, logits within 6.5e-5 (float32 against float64); on 680
    tokens: maps within 6.9e-5, the last logits within 2.0e-5."""
    out = gemma.forward(weights, ids)
    logits, maps = reference_gemma.forward(tensors, ids, logit_rows=logit_rows)
    np.testing.assert_allclose(out.attention, maps, rtol=0, atol=maps_atol)
    ours = out.logits[logit_rows]
    np.testing.assert_allclose(ours, logits, rtol=0, atol=logits_atol)
    assert np.array_equal(ours.argmax(axis=-1), logits.argmax(axis=-1))


@pytest.mark.slow
@pytest.mark.parametrize("text", [SHORT, JAPANESE, "def f(x):\n    return x  # 42 🙂"])
def test_forward_matches_the_float64_reference(model, reference_tensors, text):
    weights, tokenizer = model
    ids = tokenizer.encode(text)
    compare_with_reference(weights, reference_tensors, ids, list(range(len(ids))), logits_atol=5e-4)


@pytest.mark.slow
def test_a_text_past_the_window_matches_the_float64_reference(model, reference_tensors, long_ids):
    compare_with_reference(model[0], reference_tensors, long_ids, [0, 100, 511, 512, 513, len(long_ids) - 1],
                           logits_atol=1e-3, maps_atol=3e-4)  # float32 sums over 600+ tokens


def random_weights(config: GemmaConfig, seed: int) -> GemmaWeights:
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, shape in gw.shapes(config).items():
        spread, centre = (0.3, 1.0) if name.endswith("norm") else (0.5, 0.0)
        arrays[name] = (centre + spread * rng.standard_normal(shape)).astype(np.float32)
    return GemmaWeights(config, **arrays)


def as_reference_tensors(weights: GemmaWeights) -> dict[str, np.ndarray]:
    c = weights.config
    tensors = {"token_embd.weight": weights.embedding, "output_norm.weight": weights.output_norm.astype(np.float64)}
    for layer in range(c.n_layer):
        for field in gw.array_fields():
            if field not in ("embedding", "output_norm"):
                value = np.asarray(getattr(weights, field)[layer], dtype=np.float64)
                tensors[f"blk.{layer}.{field}.weight"] = value.T if field in gw.LINEAR else value
    return tensors


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_tiny_random_model_with_a_window_of_4_matches_the_reference(seed):
    config = GemmaConfig(n_layer=3, n_head=4, n_kv_head=2, d_model=32, head_dim=8, d_ff=40, vocab=50, window=4,
                         global_layers=(1,), rope_global_base=1000.0, rope_local_base=10.0)
    weights = random_weights(config, seed)
    ids = list(np.random.default_rng(seed).integers(0, 50, size=11))
    logits, maps = reference_gemma.forward(as_reference_tensors(weights), ids, n_layer=3, heads=4, kv_heads=2,
                                           head_dim=8, window=4, global_layers=(1,), local_base=10.0,
                                           global_base=1000.0)
    out = gemma.forward(weights, ids)
    assert maps.max() > 0.9  # sharp attention somewhere: a wrong RoPE or head grouping would show
    assert np.all(out.attention[[0, 2], :, 10, :7] == 0) and np.all(out.attention[1, :, 10, :7] > 0)
    np.testing.assert_allclose(out.attention, maps, rtol=0, atol=1e-5)
    np.testing.assert_allclose(out.logits, logits, rtol=0, atol=1e-4 * np.abs(logits).max())


# ---------------------------------------------------------------- properties on the real model

def test_rows_sum_to_one_and_nothing_is_above_the_diagonal(short):
    ids, out = short
    n = len(ids)
    assert out.attention.shape == (18, 4, n, n) and out.logits.shape == (n, 262144)
    np.testing.assert_allclose(out.attention.sum(axis=-1), 1.0, atol=1e-5)
    assert np.all(out.attention[..., np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] == 0)


@pytest.mark.slow
def test_local_layers_give_exactly_zero_to_keys_512_or_more_back(model, long_ids):
    out = gemma.forward(model[0], long_ids, all_logits=False)
    n = len(long_ids)
    behind = np.arange(n)[:, None] - np.arange(n)[None, :]
    local = [layer for layer in range(18) if layer not in (5, 11, 17)]
    assert np.all(out.attention[local][..., behind >= 512] == 0)
    assert np.all(out.attention[local][..., (behind >= 0) & (behind < 512)] > 0)
    past_window = out.attention[[5, 11, 17]][..., behind >= 512]
    assert past_window.sum() > 0  # the global layers do look that far back


def test_the_start_token_holds_the_sink(model):
    """With <bos> first the heads put much of their weight on position 0 (the notes: 0.47); without it, little."""
    weights, tokenizer = model
    ids = tokenizer.encode(SHORT)
    assert ids[0] == gemma.START_TOKEN
    with_start = gemma.forward(weights, ids, all_logits=False).attention[..., 1:, 0].mean()
    without = gemma.forward(weights, ids[1:], all_logits=False).attention[..., 1:, 0].mean()
    assert with_start > 0.3 and without < 0.1


def test_a_later_token_changes_no_earlier_row_and_no_earlier_logit(model, short):
    ids, out = short
    longer = gemma.forward(model[0], ids + [ids[-1]])
    np.testing.assert_allclose(longer.attention[..., :len(ids), :len(ids)], out.attention, atol=1e-5)
    np.testing.assert_allclose(longer.logits[:len(ids)], out.logits, atol=1e-4)


def test_prefill_and_decode_steps_equal_the_full_pass(model, short):
    ids, out = short
    logits, cache = gemma.prefill(model[0], ids[:5])
    np.testing.assert_allclose(logits, out.logits[4], atol=1e-4)
    for i in range(5, len(ids)):
        step = gemma.decode_step(model[0], [cache], [ids[i]])
        np.testing.assert_allclose(step[0], out.logits[i], atol=1e-4)
    assert cache.length == len(ids) and cache.keys.shape == (18, 1, len(ids), 256)


def test_a_prefill_in_chunks_equals_one_pass(model, short, monkeypatch):
    ids, out = short
    monkeypatch.setattr(gemma, "PREFILL_CHUNK", 4)
    logits, cache = gemma.prefill(model[0], ids)
    np.testing.assert_allclose(logits, out.logits[-1], atol=1e-4)
    assert cache.length == len(ids)


def test_many_sequences_in_one_pass_and_one_step_equal_each_alone(model, short):
    weights, tokenizer = model
    ids, out = short
    other = tokenizer.encode(JAPANESE)
    both = gemma.forward_many(weights, [ids, other])
    np.testing.assert_allclose(both[0].logits, out.logits, atol=1e-4)
    np.testing.assert_allclose(both[0].attention, out.attention, atol=1e-5)
    alone = gemma.forward(weights, other)
    np.testing.assert_allclose(both[1].attention, alone.attention, atol=1e-5)
    _, caches = gemma.prefill_many(weights, [ids, other])
    step = gemma.decode_step(weights, caches, [ids[0], other[0]])
    np.testing.assert_allclose(step[1], gemma.forward(weights, other + [other[0]], all_logits=False).logits[0],
                               atol=1e-4)


def test_bad_ids_and_too_long_texts_are_refused(model):
    weights = model[0]
    with pytest.raises(ValueError, match="token ids must lie"):
        gemma.forward(weights, [2, 262144])
    with pytest.raises(ValueError, match="at most 1024 tokens"):
        gemma.forward(weights, [2] * 1025)
    with pytest.raises(ValueError, match="empty"):
        gemma.encode("   ")
    with pytest.raises(ValueError, match="non-empty chunk"):
        gemma.run(weights, [KVCache(weights.config)], [[]])


def test_the_public_names_agree_with_the_full_pass(model, short):
    ids, out = short
    assert gemma.encode(SHORT) == ids and ids[0] == 2
    np.testing.assert_allclose(gemma.attention_maps(SHORT), out.attention, atol=1e-5)
    np.testing.assert_allclose(gemma.next_token_logits(SHORT), out.logits[-1], atol=1e-4)


def test_the_model_knows_a_capital(model):
    weights, tokenizer = model
    logits = gemma.next_token_logits("The capital of France is Paris. The capital of Japan is")
    assert tokenizer.decode([int(logits.argmax())]).strip() == "Tokyo"


def test_the_studys_gemma_passes_are_the_text_read_after_the_start_token_less_its_row_and_column():
    from attention_core.gpt_studies import heads

    weights = gemma.default_model()[0]
    sequences = [[1000, 2000, 3000, 1000, 2000], [5000, 6000, 7000]]
    got = heads.gemma_forward_many(weights, batch=1)(sequences)
    for ids, (attention, logits) in zip(sequences, got):
        out = gemma.forward(weights, [2] + ids)
        np.testing.assert_allclose(attention, out.attention[..., 1:, 1:], atol=1e-6)
        np.testing.assert_allclose(logits, out.logits[1:], atol=1e-4)
        assert attention.shape == (18, 4, len(ids), len(ids)) and logits.shape == (len(ids), 262144)
