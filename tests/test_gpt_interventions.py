"""The GPT's interventions (attention_core/smollm2/interventions.py, model.run's ablate) against the separately written
float64 reference (tests/reference_gpt.py, its interventions done by naive loops), and the identities: patching
everything from the clean run gives the clean run exactly, switching nothing off changes nothing bit for bit, the
lens's last row is the logits, direct logit attribution adds up to the logit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.blas import single_blas_thread
from attention_core.smollm2 import interventions as iv
from attention_core.smollm2 import model as gpt_model
from attention_core.smollm2 import weights as gpt_weights
from attention_core.smollm2.weights import GPTConfig, GPTWeights
from tests import reference_gpt, tiny_smollm2
from tests.tiny_smollm2 import as_reference_tensors
from tests.hypothesis_budget import examples

CONFIG = GPTConfig(n_layer=3, n_head=6, n_kv_head=2, d_model=48, head_dim=8, d_ff=40, vocab=50, rope_base=10.0)
N = 9


@pytest.fixture(scope="module", autouse=True)
def one_blas_thread():
    with single_blas_thread():
        yield


def random_weights(seed: int, scale: float = 0.4) -> GPTWeights:
    """A tiny model (CONFIG) with sharp attention (the untrained copy's 0.02 spread would be near uniform)."""
    return tiny_smollm2.random_weights(CONFIG, seed, scale)


def reference(weights, ids, record=None, **edits):
    return reference_gpt.forward(as_reference_tensors(weights), list(ids), n_layer=3, heads=6, kv_heads=2, base=10.0,
                                 record=record, **edits)


def sequences(seed: int, count: int = 3) -> np.ndarray:
    return np.random.default_rng(seed + 100).integers(0, CONFIG.vocab, size=(count, N))


def close(mine, expected):
    expected = np.asarray(expected)
    np.testing.assert_allclose(mine, expected, rtol=0, atol=2e-4 * max(1.0, float(np.abs(expected).max())))


# ---------------------------------------------------------------- against the float64 reference

@pytest.mark.parametrize("seed", [0, 1])
def test_a_plain_run_and_its_record_match_the_reference(seed):
    weights, ids = random_weights(seed), sequences(seed)
    out = iv.run(weights, ids, record=True, maps=((1, 4),))
    for b in range(len(ids)):
        record = {}
        logits, maps = reference(weights, ids[b], record)
        close(out.logits[b], logits)
        close(out.maps[(1, 4)][b], maps[1, 4])
        close(out.trace.resid[:, b], np.stack(record["resid"]))
        close(out.trace.mlp[:, b], np.stack(record["mlp"]))
        for (layer, head), values in record["heads"].items():
            close(out.trace.heads[layer, b, head], values)
    assert maps.max() > 0.9  # sharp attention: a wrong grouping or rotation would show


@settings(max_examples=examples(12), deadline=None)
@given(seed=st.integers(0, 3),
       chosen=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 5)), min_size=0, max_size=18))
def test_zero_ablation_matches_naive_loops(seed, chosen):
    weights, ids = random_weights(seed), sequences(seed, 2)
    out = iv.run(weights, ids, iv.zero_ablation(chosen))
    for b in range(len(ids)):
        zeros = {(l, h, i): np.zeros(CONFIG.head_dim) for l, h in chosen for i in range(N)}
        close(out.logits[b], reference(weights, ids[b], head_override=zeros)[0])


def test_every_head_switched_off_leaves_only_the_mlps():
    weights, ids = random_weights(2), sequences(2, 1)
    every = [(l, h) for l in range(3) for h in range(6)]
    zeros = {(l, h, i): np.zeros(CONFIG.head_dim) for l, h in every for i in range(N)}
    close(iv.run(weights, ids, iv.zero_ablation(every)).logits[0], reference(weights, ids[0], head_override=zeros)[0])


def test_mean_ablation_replaces_each_position_by_the_reference_sets_mean():
    weights, ids, reference_set = random_weights(3), sequences(3, 2), sequences(30, 4)
    means = iv.head_means(iv.run(weights, reference_set, record=True).trace)
    chosen = [(0, 1), (2, 5)]
    out = iv.run(weights, ids, iv.mean_ablation(chosen, means))
    records = [{} for _ in reference_set]
    for r, seq in zip(records, reference_set):
        reference(weights, seq, r)
    for b in range(len(ids)):
        override = {(l, h, i): np.mean([r["heads"][(l, h)][i] for r in records], axis=0)
                    for l, h in chosen for i in range(N)}
        close(out.logits[b], reference(weights, ids[b], head_override=override)[0])


@pytest.mark.parametrize("where", [[(0, 0, 3)], [(1, 4, 8), (2, 2, 8)], [(0, 5, 0), (1, 1, 4), (2, 3, 7)]])
def test_a_head_patched_from_another_run_matches_the_reference(where):
    weights = random_weights(4)
    clean, corrupt = sequences(4, 1), sequences(5, 1)
    source = iv.run(weights, clean, record=True).trace
    out = iv.run(weights, corrupt, iv.head_patches(source, where))
    record = {}
    reference(weights, clean[0], record)
    override = {(l, h, p): record["heads"][(l, h)][p] for l, h, p in where}
    close(out.logits[0], reference(weights, corrupt[0], head_override=override)[0])


@pytest.mark.parametrize("where", [[(0, 2)], [(1, 8)], [(3, 5)], [(2, 0), (2, 6)]])
def test_the_residual_patched_from_another_run_matches_the_reference(where):
    weights = random_weights(5)
    clean, corrupt = sequences(6, 1), sequences(7, 1)
    source = iv.run(weights, clean, record=True).trace
    out = iv.run(weights, corrupt, resid_writes=iv.resid_patches(source, where))
    record = {}
    reference(weights, clean[0], record)
    override = {(l, p): record["resid"][l][p] for l, p in where}
    close(out.logits[0], reference(weights, corrupt[0], resid_override=override)[0])


@pytest.mark.parametrize("hidden", [(0,), (1,), (0, 4)])
def test_hiding_a_position_from_every_later_row_matches_the_reference(hidden):
    weights, ids = random_weights(6), sequences(8, 2)
    out = iv.run(weights, ids, hidden=hidden, maps=((0, 0),))
    for b in range(len(ids)):
        logits, maps = reference(weights, ids[b], hidden=hidden)
        close(out.logits[b], logits)
        close(out.maps[(0, 0)][b], maps[0, 0])
    assert all(np.all(out.maps[(0, 0)][:, j + 1:, j] == 0) for j in hidden)


def test_model_runs_ablate_matches_the_reference_whole_and_in_chunks(monkeypatch):
    weights, ids = random_weights(7), [int(i) for i in sequences(9, 1)[0]]
    chosen = ((0, 2), (1, 0), (1, 5))
    zeros = {(l, h, i): np.zeros(CONFIG.head_dim) for l, h in chosen for i in range(N)}
    expected = reference(weights, ids, head_override=zeros)[0][-1]
    whole = gpt_model.prefill_many(weights, [ids], ablate=chosen)[0][0]
    close(whole, expected)
    monkeypatch.setattr(gpt_model, "PREFILL_CHUNK", 4)  # three passes over the KV cache, heads off in each
    close(gpt_model.prefill_many(weights, [ids], ablate=chosen)[0][0], expected)


def test_value_norms_against_a_loop():
    weights, ids = random_weights(8), sequences(10, 1)
    trace = iv.run(weights, ids, record=True).trace
    record = {}
    reference(weights, ids[0], record)
    tensors = as_reference_tensors(weights)
    layer = 1
    x = reference_gpt.rms_norm(record["resid"][layer], tensors[f"blk.{layer}.attn_norm.weight"], 1e-5)
    v = x @ tensors[f"blk.{layer}.attn_v.weight"].T
    w_o = tensors[f"blk.{layer}.attn_output.weight"].T  # (H * hd, d)
    hd = CONFIG.head_dim
    expected = np.zeros((6, N))
    for head in range(6):
        kv = head // 3
        for j in range(N):
            expected[head, j] = np.linalg.norm(v[j, kv * hd:(kv + 1) * hd] @ w_o[head * hd:(head + 1) * hd])
    close(iv.value_norms(weights, trace, layer)[0], expected)


# ---------------------------------------------------------------- identities, exact

def test_patching_the_whole_residual_from_the_clean_run_gives_the_clean_run_exactly():
    weights = random_weights(9)
    clean, corrupt = sequences(11), sequences(12)
    source = iv.run(weights, clean, record=True)
    for layer in range(CONFIG.n_layer + 1):
        patched = iv.run(weights, corrupt, resid_writes=iv.resid_patches(source.trace, [(layer, p) for p in range(N)]))
        assert np.array_equal(patched.logits, source.logits)
    assert not np.allclose(iv.run(weights, corrupt).logits, source.logits)  # the two runs do differ


def test_patching_every_head_from_the_run_itself_changes_nothing_exactly():
    weights, ids = random_weights(10), sequences(13)
    clean = iv.run(weights, ids, record=True)
    every = [(l, h, p) for l in range(3) for h in range(6) for p in range(N)]
    assert np.array_equal(iv.run(weights, ids, iv.head_patches(clean.trace, every)).logits, clean.logits)
    alone = iv.run(weights, ids[:1], record=True)
    own_means = iv.head_means(alone.trace)  # a reference set of one: the sequence itself
    heads = [(l, h) for l in range(3) for h in range(6)]
    assert np.array_equal(iv.run(weights, ids[:1], iv.mean_ablation(heads, own_means)).logits, alone.logits)


def test_switching_nothing_off_changes_nothing_bit_for_bit():
    weights, ids = random_weights(11), sequences(14)
    clean = iv.run(weights, ids, record=True)
    assert np.array_equal(iv.run(weights, ids, ()).logits, clean.logits)
    assert np.array_equal(iv.run(weights, ids, (), start=clean.trace).logits, clean.logits)
    one = [int(i) for i in ids[0]]
    assert np.array_equal(gpt_model.prefill_many(weights, [one], ablate=())[0], gpt_model.prefill_many(weights, [one])[0])


def test_a_run_started_at_the_first_switched_off_layer_equals_the_whole_run_exactly():
    weights, ids = random_weights(12), sequences(15)
    clean = iv.run(weights, ids, record=True)
    writes = iv.zero_ablation([(2, 1), (1, 3)])
    whole = iv.run(weights, ids, writes, record=True)
    started = iv.run(weights, ids, writes, start=clean.trace, record=True)
    assert np.array_equal(started.logits, whole.logits)
    assert np.array_equal(started.trace.resid, whole.trace.resid)
    assert np.array_equal(started.trace.heads, whole.trace.heads)
    assert not np.array_equal(whole.logits, clean.logits)


def test_asking_for_some_rows_or_tokens_gives_those_entries_of_the_full_logits():
    weights, ids = random_weights(13), sequences(16)
    full = iv.run(weights, ids).logits
    close(iv.run(weights, ids, rows=[2, 8]).logits, full[:, [2, 8]])
    close(iv.run(weights, ids, rows=[8], tokens=[3, 7]).logits, full[:, [8]][:, :, [3, 7]])
    assert iv.run(weights, ids, rows=()).logits is None


# ---------------------------------------------------------------- the lens and direct logit attribution

def test_the_lens_reads_each_residual_with_its_own_rms_and_its_last_row_is_the_logits():
    weights, ids = random_weights(14), sequences(17, 1)
    out = iv.run(weights, ids, record=True)
    lens = iv.lens(weights, out.trace, position=-1)
    assert lens.shape == (CONFIG.n_layer + 1, CONFIG.vocab)
    close(lens[-1], out.logits[0, -1])
    record = {}
    reference(weights, ids[0], record)
    tensors = as_reference_tensors(weights)
    for layer, state in enumerate(record["resid"]):
        row = state[-1]
        expected = row / np.sqrt(np.mean(row * row) + 1e-5) * tensors["output_norm.weight"] @ tensors[
            "token_embd.weight"].T
        close(lens[layer], expected)


@pytest.mark.parametrize("seed, position", [(15, -1), (16, 4)])
def test_direct_logit_attribution_adds_up_to_the_logit(seed, position):
    weights, ids = random_weights(seed), sequences(seed, 1)
    out = iv.run(weights, ids, record=True)
    token = int(np.argmax(out.logits[0, position]))
    parts = iv.direct_logit_attribution(weights, out.trace, token, position)
    assert parts.heads.shape == (3, 6) and parts.mlps.shape == (3,)
    assert abs(parts.total - parts.logit) < 1e-4 * max(1.0, abs(parts.logit))
    assert abs(parts.logit - float(out.logits[0, position, token])) < 1e-3 * max(1.0, abs(parts.logit))
    record = {}  # a head's term from the reference's own head outputs, by loops, with the same frozen scale
    reference(weights, ids[0], record)
    tensors = as_reference_tensors(weights)
    direction = parts.scale * tensors["output_norm.weight"] * tensors["token_embd.weight"][token]
    for layer in range(3):
        w_o = tensors[f"blk.{layer}.attn_output.weight"].T
        for head in range(6):
            term = record["heads"][(layer, head)][position] @ w_o[head * 8:(head + 1) * 8] @ direction
            assert abs(parts.heads[layer, head] - term) < 1e-4 * max(1.0, abs(parts.logit))


# ---------------------------------------------------------------- bad input

def test_bad_requests_say_why():
    weights, ids = random_weights(17), sequences(18, 1)
    with pytest.raises(ValueError, match="no head L3H0"):
        iv.run(weights, ids, iv.zero_ablation([(3, 0)]))
    with pytest.raises(ValueError, match="no head L0H6"):
        gpt_model.prefill_many(weights, [[1, 2]], ablate=((0, 6),))
    with pytest.raises(ValueError, match="n >= 1"):
        iv.run(weights, np.zeros((1, 0), dtype=np.int64))
    with pytest.raises(ValueError, match="at most"):
        iv.run(weights, np.zeros((1, iv.MAX_TOKENS + 1), dtype=np.int64))
    with pytest.raises(ValueError, match="hidden"):
        iv.run(weights, ids, hidden=(N,))
    with pytest.raises(ValueError, match="same ids"):
        iv.run(weights, ids, iv.zero_ablation([(1, 1)]), start=iv.run(weights, sequences(19, 1), record=True).trace)


# ---------------------------------------------------------------- the real model

try:
    gpt_weights.gguf_path()
    HAVE_MODEL = True
except gpt_weights.GPTUnavailable:
    HAVE_MODEL = False
needs_model = pytest.mark.skipif(not HAVE_MODEL, reason="the model package is absent")

PROMPT = "The capital of France is"


@needs_model
def test_next_token_logits_without_ablation_is_the_old_result_bit_for_bit():
    from attention_core import smollm2

    weights, tokenizer = smollm2.default_model()
    old = gpt_model.prefill(weights, tokenizer.encode(PROMPT))[0]  # what next_token_logits returned before `ablate`
    assert np.array_equal(smollm2.next_token_logits(PROMPT), old)
    assert np.array_equal(smollm2.next_token_logits(PROMPT, ablate=()), old)


@needs_model
def test_next_token_logits_with_heads_off_agrees_with_the_intervention_run():
    from attention_core import smollm2

    weights, tokenizer = smollm2.default_model()
    chosen = ((3, 2), (16, 0), (20, 5))
    ablated = smollm2.next_token_logits(PROMPT, ablate=chosen)
    run = iv.run(weights, tokenizer.encode(PROMPT), iv.zero_ablation(chosen), rows=[-1]).logits[0, 0]
    np.testing.assert_allclose(ablated, run, rtol=0, atol=2e-3)
    assert np.abs(ablated - smollm2.next_token_logits(PROMPT)).max() > 0.05  # switching them off does something


@needs_model
def test_the_logit_lens_of_the_real_model():
    from attention_core import smollm2

    weights, tokenizer = smollm2.default_model()
    lens = smollm2.logit_lens(PROMPT)
    assert lens.shape == (31, 49152) and lens.dtype == np.float32
    np.testing.assert_allclose(lens[-1], smollm2.next_token_logits(PROMPT), rtol=0, atol=1e-3)
    last = np.asarray(weights.embedding[tokenizer.encode(PROMPT)[-1]], dtype=np.float64)
    row0 = (last / np.sqrt(np.mean(last ** 2) + 1e-5) * weights.output_norm) @ np.asarray(weights.embedding,
                                                                                          np.float64).T
    np.testing.assert_allclose(lens[0], row0, rtol=0, atol=1e-3)
    assert smollm2.logit_lens("日本").shape == (31, 49152)  # byte pieces: still a reading
    assert smollm2.logit_lens("The").shape == (31, 49152)  # one token
    with pytest.raises(ValueError, match="empty"):
        smollm2.logit_lens("")
    with pytest.raises(ValueError, match="at most"):
        smollm2.logit_lens(" the" * (iv.MAX_TOKENS + 1))


@needs_model
@pytest.mark.slow
def test_ablation_on_the_real_model_matches_the_float64_reference():
    from attention_core import smollm2

    weights, tokenizer = smollm2.default_model()
    ids = tokenizer.encode("The animal didn't cross the street because it was too tired.")
    chosen = ((0, 4), (16, 0), (20, 5))
    zeros = {(l, h, i): np.zeros(64) for l, h in chosen for i in range(len(ids))}
    expected, _ = reference_gpt.forward(reference_gpt.GGUFTensors(smollm2.gguf_path()), ids, head_override=zeros)
    mine = iv.run(weights, ids, iv.zero_ablation(chosen)).logits[0]
    assert np.abs(mine - expected).max() < 2e-3
    assert np.array_equal(mine.argmax(axis=1), expected.argmax(axis=1))


# ---------------------------------------------------------------- composition: one head's input with another's output removed

def test_head_attention_on_its_own_stream_is_the_heads_map_and_removal_matches_the_reference():
    weights, ids = random_weights(18), sequences(20, 2)
    out = iv.run(weights, ids, record=True, maps=((2, 4),))
    resid = out.trace.resid[2]
    close(iv.head_attention(weights, resid, resid, 2, 4), out.maps[(2, 4)])
    removed = resid - iv.head_contribution(weights, out.trace, 0, 1)
    key_side = iv.head_attention(weights, resid, removed, 2, 4)
    tensors = as_reference_tensors(weights)
    for b in range(len(ids)):  # by hand: queries from the full stream, keys from the stream without L0H1's output
        record = {}
        reference(weights, ids[b], record)
        w_o = tensors["blk.0.attn_output.weight"].T
        without = record["resid"][2] - record["heads"][(0, 1)] @ w_o[8:16]
        norm = tensors["blk.2.attn_norm.weight"]
        q = reference_gpt.rms_norm(record["resid"][2], norm, 1e-5) @ tensors["blk.2.attn_q.weight"].T
        k = reference_gpt.rms_norm(without, norm, 1e-5) @ tensors["blk.2.attn_k.weight"].T
        qh = reference_gpt.rotate_half_rope(q[:, 4 * 8:5 * 8], 10.0)
        kh = reference_gpt.rotate_half_rope(k[:, (4 // 3) * 8:(4 // 3 + 1) * 8], 10.0)
        scores = qh @ kh.T / np.sqrt(8)
        close(key_side[b], np.stack([reference_gpt.softmax_causal_row(scores[i], i) for i in range(N)]))


def test_a_run_until_a_layer_keeps_that_layers_maps():
    weights, ids = random_weights(19), sequences(21, 2)
    writes = iv.zero_ablation([(0, 3)])
    full = iv.run(weights, ids, writes, maps=((1, 2),))
    short = iv.run(weights, ids, writes, maps=((1, 2),), until=1)
    assert short.logits is None
    assert np.array_equal(short.maps[(1, 2)], full.maps[(1, 2)])
