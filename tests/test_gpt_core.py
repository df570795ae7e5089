"""SmolLM2's NumPy forward pass against a separate float64 reference (tests/reference_gpt.py), the KV cache against
the full pass, batched decoding against one sequence at a time, and the mask's properties on the real model."""

from __future__ import annotations


import numpy as np
import pytest

from attention_core.blas import single_blas_thread
from attention_core.smollm2 import model as gpt  # the module itself: a test changes its PREFILL_CHUNK
from attention_core.smollm2 import weights as gpt_weights
from attention_core.smollm2.weights import GPTConfig
from tests import reference_gpt
from tests.tiny_smollm2 import as_reference_tensors, random_weights

try:
    GGUF = gpt_weights.gguf_path()
except gpt_weights.GPTUnavailable as missing:
    pytest.skip(f"the model package is absent: {missing}", allow_module_level=True)

SHORT = "The animal didn't cross the street because it was too tired."  # 13 tokens: one pass ~0.1 s
CONTROL_LIKE = "In 2024, <|im_end|> 日本\n\t42 🙂"


@pytest.fixture(scope="module", autouse=True)
def one_blas_thread():
    with single_blas_thread():  # as the app runs it (ui/shared/startup.py)
        yield


@pytest.fixture(scope="module")
def model():
    return gpt.default_model()


@pytest.fixture(scope="module")
def short(model):
    weights, tokenizer = model
    ids = tokenizer.encode(SHORT)
    return ids, gpt.forward(weights, ids)


# ---------------------------------------------------------------- against the float64 reference

@pytest.fixture(scope="module")
def reference_tensors():
    return reference_gpt.GGUFTensors(GGUF)


@pytest.mark.slow
@pytest.mark.parametrize("text", [SHORT, CONTROL_LIKE])
def test_forward_matches_the_float64_reference(model, reference_tensors, text):
    weights, tokenizer = model
    ids = tokenizer.encode(text)
    expected_logits, expected_maps = reference_gpt.forward(reference_tensors, ids)
    out = gpt.forward(weights, ids)
    assert out.logits.shape == (len(ids), 49152) and out.logits.dtype == np.float32
    assert out.attention.shape == (30, 9, len(ids), len(ids)) and out.attention.dtype == np.float32
    assert np.abs(out.attention - expected_maps).max() < 1e-4  # measured 2.5e-6 on SHORT
    assert np.abs(out.logits - expected_logits).max() < 2e-3  # measured 1e-4
    assert np.array_equal(out.logits.argmax(axis=1), expected_logits.argmax(axis=1))


@pytest.mark.slow
def test_cached_weights_are_the_files_dequantized(model, reference_tensors):
    weights, _ = model
    np.testing.assert_allclose(weights.embedding, reference_tensors["token_embd.weight"], rtol=0, atol=1e-6)
    for layer in (0, 29):
        for field in ("attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"):
            expected = reference_tensors[f"blk.{layer}.{field}.weight"].T  # the cache holds (in, out)
            np.testing.assert_allclose(getattr(weights, field)[layer], expected, rtol=0, atol=1e-6)
        for field, heads in (("attn_q", 9), ("attn_k", 3)):  # the reference un-permuted these rows
            expected = reference_tensors[f"blk.{layer}.{field}.weight"]
            mine = reference_gpt.unpermute(np.asarray(getattr(weights, field)[layer]).T, heads)
            np.testing.assert_allclose(mine, expected, rtol=0, atol=1e-6)
        np.testing.assert_array_equal(weights.ffn_norm[layer], reference_tensors[f"blk.{layer}.ffn_norm.weight"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_tiny_random_model_matches_the_reference(seed):
    config = GPTConfig(n_layer=2, n_head=4, n_kv_head=2, d_model=32, head_dim=8, d_ff=40, vocab=50, rope_base=10.0)
    weights = random_weights(config, seed)
    ids = list(np.random.default_rng(seed).integers(0, 50, size=11))
    logits, maps = reference_gpt.forward(as_reference_tensors(weights), ids, n_layer=2, heads=4, kv_heads=2,
                                         base=10.0)
    out = gpt.forward(weights, ids)
    assert maps.max() > 0.9  # sharp attention somewhere: a wrong RoPE or head grouping would show
    np.testing.assert_allclose(out.attention, maps, rtol=0, atol=1e-5)
    np.testing.assert_allclose(out.logits, logits, rtol=0, atol=1e-4 * np.abs(logits).max())


# ---------------------------------------------------------------- properties on the real model

def test_rows_sum_to_one_and_nothing_is_above_the_diagonal(short):
    ids, out = short
    n = len(ids)
    np.testing.assert_allclose(out.attention.sum(axis=-1), 1.0, atol=1e-5)
    above = np.triu(np.ones((n, n), dtype=bool), k=1)
    assert np.count_nonzero(out.attention[..., above]) == 0  # exactly 0, not small
    assert (out.attention[..., ~above] > 0).all()
    assert np.array_equal(out.attention[:, :, 0, 0], np.ones((30, 9), dtype=np.float32))


def test_a_later_token_changes_no_earlier_row_and_no_earlier_logit(model, short):
    weights, tokenizer = model
    ids, out = short
    tired, wide = tokenizer.encode(" tired")[0], tokenizer.encode(" wide")[0]
    k = ids.index(tired)
    changed = gpt.forward(weights, ids[:k] + [wide] + ids[k + 1:])
    assert np.array_equal(changed.attention[:, :, :k], out.attention[:, :, :k])  # identical, not close
    assert np.array_equal(changed.logits[:k], out.logits[:k])
    assert np.abs(changed.attention[:, :, k:] - out.attention[:, :, k:]).max() > 0.05  # the change does show
    assert np.abs(changed.logits[k] - out.logits[k]).max() > 1


def test_next_token_logits_and_attention_maps_are_the_full_pass(model, short):
    _, tokenizer = model
    ids, out = short
    tokens, maps = gpt.attention_maps(SHORT)
    assert tokens == tokenizer.token_strings(ids) and tokens[1] == "Ġanimal"
    assert np.array_equal(maps, out.attention)
    logits = gpt.next_token_logits(SHORT)
    assert logits.shape == (49152,) and logits.dtype == np.float32
    np.testing.assert_allclose(logits, out.logits[-1], rtol=0, atol=1e-4)


def test_the_hidden_rows_give_every_logit_of_the_full_pass(model, short):
    """forward(all_logits=False) keeps the final normed rows: the LM head on them is the all-logits pass, row by row
    and bit for bit (the same product shapes), and a hand-written RMSNorm + tied head agrees in float64."""
    weights, _ = model
    ids, out = short
    last = gpt.forward(weights, ids, all_logits=False)
    assert last.logits.shape == (1, weights.config.vocab) and last.hidden.shape == (len(ids), weights.config.d_model)
    assert np.array_equal(gpt.lm_head(last.hidden, weights.embedding), out.logits)
    assert np.array_equal(last.attention, out.attention)
    by_hand = np.asarray(last.hidden, dtype=np.float64) @ np.asarray(weights.embedding, dtype=np.float64).T
    np.testing.assert_allclose(by_hand, out.logits, rtol=0, atol=1e-3)


def test_one_pass_for_many_sequences_equals_a_pass_for_each(model):
    """forward_many (the linear layers on every sequence's rows at once) against forward, one sequence at a time:
    the same maps and logits up to float32 rounding (the products' blocking differs), each map causal on its own."""
    weights, tokenizer = model
    sequences = [tokenizer.encode(text) for text in (SHORT, "Hello", CONTROL_LIKE)]
    together = gpt.forward_many(weights, sequences)
    for ids, out in zip(sequences, together):
        alone = gpt.forward(weights, ids)
        assert out.attention.shape == alone.attention.shape and out.logits.shape == alone.logits.shape
        np.testing.assert_allclose(out.attention, alone.attention, rtol=0, atol=1e-5)
        np.testing.assert_allclose(out.logits, alone.logits, rtol=0, atol=2e-3)
        n = len(ids)
        assert not out.attention[..., np.triu_indices(n, k=1)[0], np.triu_indices(n, k=1)[1]].any()


def test_the_capital_of_france():
    logits = gpt.next_token_logits("The capital of France is")
    probs = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    weights, tokenizer = gpt.default_model()
    assert tokenizer.decode([int(np.argmax(probs))]) == " Paris"
    assert 0.6 < probs.max() < 0.9  # 0.77 in the measurement (this 4-bit copy)


def test_empty_text_is_refused_with_a_message():
    with pytest.raises(ValueError, match="empty"):
        gpt.attention_maps("")
    with pytest.raises(ValueError, match="empty"):
        gpt.next_token_logits("")


def test_too_many_tokens_for_every_map_are_refused_before_any_work(model):
    weights, _ = model
    with pytest.raises(ValueError, match="at most 512 tokens"):
        gpt.forward(weights, [5] * 513)
    with pytest.raises(ValueError, match="at most 512 tokens"):
        gpt.attention_maps("a " * 600)


def test_a_prefill_in_chunks_equals_one_pass(model, short, monkeypatch):
    weights, _ = model
    ids, out = short
    monkeypatch.setattr(gpt, "PREFILL_CHUNK", 5)  # 13 tokens: chunks of 5, 5, 3
    logits, caches = gpt.prefill_many(weights, [ids, ids[:7], ids[:2]])
    np.testing.assert_allclose(logits, out.logits[[12, 6, 1]], rtol=0, atol=3e-4)
    assert [cache.length for cache in caches] == [13, 7, 2]
    whole = gpt.run(weights, [gpt.KVCache(weights.config)], [ids])[0]  # no chunks
    np.testing.assert_allclose(logits[0], whole[0], rtol=0, atol=3e-4)
    with pytest.raises(ValueError, match="at least one token"):
        gpt.prefill_many(weights, [ids, []])


def test_ids_outside_the_vocabulary_are_refused(model):
    weights, _ = model
    with pytest.raises(ValueError, match="token ids"):
        gpt.forward(weights, [5, 49152])


# ---------------------------------------------------------------- the KV cache

def test_prefill_and_decode_steps_equal_the_full_pass(model, short):
    weights, _ = model
    ids, out = short
    logits, cache = gpt.prefill(weights, ids[:5])
    steps = [logits]
    for token in ids[5:]:
        steps.append(gpt.decode_step(weights, [cache], [token])[0])
    assert cache.length == len(ids)
    np.testing.assert_allclose(np.stack(steps), out.logits[4:], rtol=0, atol=3e-4)
    assert np.array_equal(np.stack(steps).argmax(axis=1), out.logits[4:].argmax(axis=1))
    full_cache = gpt.prefill(weights, ids)[1]
    np.testing.assert_allclose(cache.keys, full_cache.keys, rtol=0, atol=2e-4)  # measured 5e-5 on values ~3
    np.testing.assert_allclose(cache.values, full_cache.values, rtol=0, atol=2e-4)
    assert cache.keys.shape == (30, 3, len(ids), 64)


def test_a_batched_step_equals_one_sequence_at_a_time(model):
    weights, tokenizer = model
    texts = ["Hi", "The capital of France is", "1 2 3 4 5 6 7 8", "日本", "def f(x):\n    return", "Once"]
    batch_logits, batch_caches = gpt.prefill_many(weights, [tokenizer.encode(t) for t in texts])
    alone = [gpt.prefill(weights, tokenizer.encode(t)) for t in texts]
    np.testing.assert_allclose(batch_logits, np.stack([logits for logits, _ in alone]), rtol=0, atol=3e-4)
    next_ids = [int(i) for i in batch_logits.argmax(axis=1)]
    stepped = gpt.decode_step(weights, batch_caches, next_ids)
    assert stepped.shape == (len(texts), 49152)
    for b, (_, cache) in enumerate(alone):
        one = gpt.decode_step(weights, [cache], [next_ids[b]])[0]
        np.testing.assert_allclose(stepped[b], one, rtol=0, atol=3e-4)
        assert batch_caches[b].length == cache.length == len(tokenizer.encode(texts[b])) + 1
        np.testing.assert_allclose(batch_caches[b].keys, cache.keys, rtol=0, atol=2e-4)


@pytest.mark.slow
def test_forty_sequences_of_mixed_lengths_step_together(model):
    weights, _ = model
    rng = np.random.default_rng(0)
    sequences = [[int(i) for i in rng.integers(17, 49152, size=int(rng.integers(1, 30)))] for _ in range(40)]
    logits, caches = gpt.prefill_many(weights, sequences)
    generated = [[int(i)] for i in logits.argmax(axis=1)]
    for _ in range(2):
        logits = gpt.decode_step(weights, caches, [ids[-1] for ids in generated])
        for ids, row in zip(generated, logits):
            ids.append(int(np.argmax(row)))
    assert [cache.length for cache in caches] == [len(ids) + 2 for ids in sequences]
    for b in (0, 17, 39):
        full = gpt.forward(weights, sequences[b] + generated[b][:2])
        np.testing.assert_allclose(logits[b], full.logits[-1], rtol=0, atol=5e-4)


def test_the_cache_grows_without_losing_what_it_holds():
    config = GPTConfig(n_layer=2, n_kv_head=3, head_dim=4)
    cache = gpt.KVCache(config, capacity=2)
    rng = np.random.default_rng(0)
    written = []
    for step in range(5):
        k, v = rng.standard_normal((2, 3, 1, 4)).astype(np.float32)
        for layer in range(2):
            cache.store(layer, k, v)
        cache.length += 1
        written.append((k, v))
    assert cache.keys.shape == (2, 3, 5, 4)
    np.testing.assert_array_equal(cache.keys[1], np.concatenate([k for k, _ in written], axis=1))
    np.testing.assert_array_equal(cache.values[0], np.concatenate([v for _, v in written], axis=1))
