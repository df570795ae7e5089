"""The tiny GPT's core (attention_core.tiny_gpt) against independent references: gradients against central finite
differences in float64 for every parameter, the forward pass against attention_core.attention's functions head by
head, the scores and losses against loops, Adam against its textbook update, the data generator's property, and a
run reproduced by its seed."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.attention import causal_mask, log_softmax, scaled_dot_product_attention
from attention_core.tiny_gpt import (Adam, Buffers, Cancelled, Config, attention_maps, batch, cache_root, cached_run,
                                     eval_set, formation_step, forward, grads, init, initial_params, load_run, loss,
                                     measure, plateau_loss, run_path, save_run, sequences, shapes, train)
from attention_core.tiny_gpt.measure import induction_scores, previous_token_scores
from tests.hypothesis_budget import examples


def tiny(n_layer=2, n_head=2, d_head=2, vocab=5, segment=(1, 3), seq_len=7, batch_size=2, **kw) -> Config:
    """A tiny float64 configuration (large init so every gradient is far from 0)."""
    return Config(n_layer=n_layer, n_head=n_head, d_model=n_head * d_head, vocab=vocab, seq_len=seq_len,
                  segment_min=segment[0], segment_max=segment[1], batch_size=batch_size, init_std=0.7,
                  dtype="float64", **kw)


configs = st.builds(
    lambda L, H, dh, V, R, extra, B: tiny(L, H, dh, V + R, (1, R), 2 * R + extra, B),
    st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.integers(0, 3), st.integers(1, 3),
    st.integers(0, 3), st.integers(1, 3))


def reference_forward(params, tokens, knock_out=None):
    """(logits (B, T, V), maps (B, L, H, T, T)), a sequence and a head at a time with attention_core.attention."""
    L, H = params["W_Q"].shape[:2]
    logits, maps = [], []
    for seq in np.asarray(tokens):
        T = len(seq)
        x = params["W_E"][seq] + params["W_pos"][:T]
        seq_maps = []
        for layer in range(L):
            heads = []
            added = np.zeros_like(x)
            for h in range(H):
                out, weights = scaled_dot_product_attention(x @ params["W_Q"][layer, h], x @ params["W_K"][layer, h],
                                                            x @ params["W_V"][layer, h], mask=causal_mask(T))
                heads.append(weights)
                if knock_out is None or not knock_out[layer][h]:
                    added += out @ params["W_O"][layer, h]
            x = x + added
            seq_maps.append(heads)
        logits.append(x @ params["W_U"])
        maps.append(seq_maps)
    return np.array(logits), np.array(maps)


def reference_loss(params, tokens) -> float:
    logits, _ = reference_forward(params, tokens)
    logp = log_softmax(logits, axis=-1)
    tokens = np.asarray(tokens)
    return -float(np.mean([logp[b, t, tokens[b, t + 1]]
                           for b in range(tokens.shape[0]) for t in range(tokens.shape[1] - 1)]))


# --- the model -----------------------------------------------------------------------------------------------------

@settings(max_examples=examples(30), deadline=None)
@given(configs, st.integers(0, 2**31 - 1))
def test_gradients_match_central_finite_differences_for_every_parameter(config, seed):
    params = init(config, seed)
    tokens = batch(config, seed + 1)
    g = grads(params, tokens)
    assert set(g) == set(params)
    eps = 1e-6
    for name, p in params.items():
        assert g[name].shape == p.shape and g[name].dtype == np.float64, name
        numeric = np.empty_like(p)
        for i in np.ndindex(p.shape):
            keep = p[i]
            p[i] = keep + eps
            up = loss(params, tokens)
            p[i] = keep - eps
            down = loss(params, tokens)
            p[i] = keep
            numeric[i] = (up - down) / (2 * eps)
        np.testing.assert_allclose(g[name], numeric, rtol=1e-5, atol=1e-8, err_msg=name)


def test_gradients_of_unused_tokens_and_positions_are_zero():
    config = tiny(vocab=9, seq_len=7)
    params = init(config, 3)
    tokens = np.array([[0, 1, 2, 0, 1, 2, 0], [1, 2, 0, 1, 2, 0, 1]])  # tokens 3..8 never appear
    g = grads(params, tokens)
    assert np.all(g["W_E"][3:] == 0) and np.all(np.abs(g["W_E"][:3]) > 0)


@settings(max_examples=examples(30), deadline=None)
@given(configs, st.integers(0, 2**31 - 1), st.data())
def test_forward_matches_attention_core_head_by_head(config, seed, data):
    params = init(config, seed)
    tokens = batch(config, seed + 1)
    knock_out = np.array(data.draw(st.lists(st.lists(st.booleans(), min_size=config.n_head, max_size=config.n_head),
                                            min_size=config.n_layer, max_size=config.n_layer)))
    for switched_off in (None, knock_out):
        logits, maps, _ = forward(params, tokens, switched_off)
        want_logits, want_maps = reference_forward(params, tokens, switched_off)
        np.testing.assert_allclose(logits, want_logits, rtol=1e-10, atol=1e-12)
        assert len(maps) == config.n_layer
        for layer, a in enumerate(maps):
            assert a.shape == (config.batch_size, config.n_head, config.seq_len, config.seq_len)
            np.testing.assert_allclose(a, want_maps[:, layer], rtol=1e-10, atol=1e-12)
    assert loss(params, tokens) == pytest.approx(reference_loss(params, tokens), rel=1e-12)


def test_a_knocked_out_head_changes_nothing_when_its_output_weights_are_zero():
    config = tiny()
    params = init(config, 5)
    params["W_O"][1, 0] = 0
    tokens = batch(config, 6)
    off = np.zeros((2, 2), dtype=bool)
    off[1, 0] = True
    np.testing.assert_allclose(forward(params, tokens, off)[0], forward(params, tokens)[0], rtol=0, atol=0)
    off[0, 1] = True
    assert not np.allclose(forward(params, tokens, off)[0], forward(params, tokens)[0])


def test_float32_forward_agrees_with_float64():
    config = Config()
    params = init(config, 0)
    assert all(p.dtype == np.float32 for p in params.values())
    tokens = batch(config, 1)
    wide = {name: p.astype(np.float64) for name, p in params.items()}
    assert forward(params, tokens)[0].dtype == np.float32
    np.testing.assert_allclose(forward(params, tokens)[0], forward(wide, tokens)[0], rtol=1e-4, atol=1e-5)
    assert loss(params, tokens) == pytest.approx(math.log(config.vocab), abs=0.05)  # at the start: nearly uniform


def test_init_draws_every_shape_from_the_seed():
    config = Config()
    a, b, c = init(config, 1), init(config, 1), init(config, 2)
    assert {name: p.shape for name, p in a.items()} == shapes(config)
    assert shapes(config)["W_Q"] == (config.n_layer, config.n_head, config.d_model, config.d_head)
    for name in a:
        assert np.array_equal(a[name], b[name]) and not np.array_equal(a[name], c[name])
        assert np.std(a[name]) == pytest.approx(config.init_std, rel=0.35)
    with pytest.raises(ValueError, match="seed"):
        init(config, None)


@pytest.mark.parametrize("bad", [dict(n_head=3), dict(n_layer=0), dict(segment_max=13), dict(segment_min=0),
                                 dict(learning_rate=0.0), dict(batch_size=0), dict(steps=-1),
                                 dict(vocab=8, segment_max=9, seq_len=24)])
def test_config_refuses_sizes_that_cannot_work(bad):
    with pytest.raises(ValueError):
        Config(**bad)


# --- Adam ----------------------------------------------------------------------------------------------------------

def test_adam_matches_the_textbook_update_step_by_step():
    rng = np.random.default_rng(0)
    params = {"a": rng.normal(size=(3, 2)), "b": rng.normal(size=4)}
    want = {name: p.copy() for name, p in params.items()}
    m = {name: np.zeros_like(p) for name, p in params.items()}
    v = {name: np.zeros_like(p) for name, p in params.items()}
    adam = Adam(params, 0.01)
    for t in range(1, 6):
        g = {name: rng.normal(size=p.shape) for name, p in params.items()}
        adam.step(params, g)
        for name in want:  # Kingma & Ba 2015, Algorithm 1, written entry by entry
            for i in np.ndindex(want[name].shape):
                m[name][i] = 0.9 * m[name][i] + 0.1 * g[name][i]
                v[name][i] = 0.999 * v[name][i] + 0.001 * g[name][i] ** 2
                m_hat, v_hat = m[name][i] / (1 - 0.9 ** t), v[name][i] / (1 - 0.999 ** t)
                want[name][i] -= 0.01 * m_hat / (math.sqrt(v_hat) + 1e-8)
        for name in want:
            np.testing.assert_allclose(params[name], want[name], rtol=1e-12, atol=1e-15)


# --- the data ------------------------------------------------------------------------------------------------------

@settings(max_examples=examples(100), deadline=None)
@given(st.integers(1, 12), st.integers(0, 12), st.integers(0, 6), st.integers(1, 20), st.integers(0, 2**31 - 1))
def test_the_second_copy_is_exactly_the_first_and_the_segment_is_distinct(low, spread, extra, count, seed):
    high = min(low + spread, 12)
    config = Config(seq_len=2 * high + extra, segment_min=low, segment_max=high, vocab=high + extra + 1)
    seqs = sequences(config, count, seed)
    assert seqs.tokens.shape == (count, config.seq_len)
    assert seqs.tokens.min() >= 0 and seqs.tokens.max() < config.vocab
    for row, start, period in zip(seqs.tokens, seqs.offset, seqs.period):
        assert low <= period <= high and start == config.seq_len - 2 * period
        segment = row[start:start + period]
        assert len(set(segment.tolist())) == period
        assert row[start + period:].tolist() == segment.tolist()
    t = np.arange(1, config.seq_len)
    for b in range(count):
        o, r = seqs.offset[b], seqs.period[b]
        assert seqs.repeated()[b].tolist() == [o + r < s for s in t]
        assert seqs.unrepeated()[b].tolist() == [s < o + r for s in t]


def test_the_random_part_and_the_segments_are_uniform_over_the_vocabulary():
    config = Config()
    seqs = sequences(config, 20000, 11)
    prefix = np.concatenate([row[:o] for row, o in zip(seqs.tokens, seqs.offset)])
    segment = np.concatenate([row[o:o + r] for row, o, r in zip(seqs.tokens, seqs.offset, seqs.period)])
    periods = np.bincount(seqs.period, minlength=13)[config.segment_min:]
    for values, bins in ((prefix, config.vocab), (segment, config.vocab), (seqs.period - 3, 10)):
        counts = np.bincount(values, minlength=bins)
        expected = len(values) / bins
        chi2 = float(np.sum((counts - expected) ** 2 / expected))
        assert chi2 < bins + 6 * math.sqrt(2 * bins), chi2  # ~6 sigma above the chi-square's mean
    assert len(periods) == 10 and periods.min() > 0
    # a prefix token is independent of the segment: it is in the segment as often as chance says
    hits = np.mean([np.isin(row[:o], row[o:o + r]).mean() for row, o, r in zip(seqs.tokens, seqs.offset, seqs.period)
                    if o > 0 and r > 0])
    expected_share = np.mean(seqs.period[seqs.offset > 0] / config.vocab)
    assert hits == pytest.approx(expected_share, abs=0.01)


def test_batches_and_the_evaluation_set_come_from_their_seeds():
    config = Config()
    assert np.array_equal(batch(config, 4), batch(config, 4)) and not np.array_equal(batch(config, 4), batch(config, 5))
    assert batch(config, 4).shape == (config.batch_size, config.seq_len)
    one, two = eval_set(config), eval_set(config)
    assert np.array_equal(one.tokens, two.tokens) and one.tokens.shape == (config.eval_size, config.seq_len)
    assert not np.array_equal(eval_set(replace(config, eval_seed=1)).tokens, one.tokens)


# --- the measurements ----------------------------------------------------------------------------------------------

def loop_scores(maps, seqs):
    """(previous-token, induction) score of one head's maps (N, T, T), by loops over rows."""
    prev, ind = [], []
    for n, (a, o, r) in enumerate(zip(maps, seqs.offset, seqs.period)):
        prev += [a[i, i - 1] for i in range(1, a.shape[0])]
        for i in range(o + r, o + 2 * r):
            token = seqs.tokens[n, i]
            earlier = [j for j in range(o, o + r) if seqs.tokens[n, j] == token]
            assert len(earlier) == 1
            ind.append(a[i, earlier[0] + 1])
    return np.mean(prev), np.mean(ind)


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_scores_match_loops_over_rows(seed):
    config = Config(seq_len=10, segment_min=2, segment_max=5, vocab=8)
    seqs = sequences(config, 6, seed)
    rng = np.random.default_rng(seed)
    maps = rng.random((3, 6, 10, 10)) * causal_mask(10)
    maps /= maps.sum(axis=-1, keepdims=True)
    prev, ind = previous_token_scores(maps), induction_scores(maps, seqs)
    assert prev.shape == ind.shape == (3,)
    for h in range(3):
        assert (prev[h], ind[h]) == pytest.approx(loop_scores(maps[h], seqs), rel=1e-12)


def test_a_perfect_previous_token_head_and_a_perfect_induction_head_score_one():
    config = Config()
    seqs = eval_set(config)
    T = config.seq_len
    previous = np.zeros((len(seqs.tokens), T, T))
    previous[:, 0, 0] = 1
    previous[:, np.arange(1, T), np.arange(T - 1)] = 1
    induction = np.zeros_like(previous)
    for n, (row, o, r) in enumerate(zip(seqs.tokens, seqs.offset, seqs.period)):
        induction[n, np.arange(T), np.arange(T)] = 1
        for i in range(o + r, o + 2 * r):
            induction[n, i] = 0
            induction[n, i, i - r + 1] = 1  # the token after the earlier occurrence, r positions back
    assert previous_token_scores(previous) == 1 and induction_scores(induction, seqs) == 1
    assert induction_scores(previous, seqs) == pytest.approx(np.mean(seqs.period == 1))  # R = 1: the same key
    assert previous_token_scores(induction) < 0.2


def test_plateau_is_the_loss_of_spreading_over_the_tokens_seen():
    config = Config(seq_len=10, segment_min=2, segment_max=5, vocab=8)
    seqs = sequences(config, 30, 2)
    want = []
    for row, o, r in zip(seqs.tokens, seqs.offset, seqs.period):
        for t in range(o + r + 1, config.seq_len):  # a repeated target at t, predicted at t - 1
            want.append(math.log(len(set(row[:t].tolist()))))
    assert plateau_loss(seqs) == pytest.approx(np.mean(want), rel=1e-12)


def test_measure_splits_the_losses_and_knocks_heads_out():
    config = tiny(vocab=6, segment=(2, 3), seq_len=8)
    params = init(config, 1)
    seqs = sequences(config, 5, 2)
    logits, maps = reference_forward(params, seqs.tokens)
    logp = log_softmax(logits, axis=-1)
    rep, unrep = [], []
    for b, (row, o, r) in enumerate(zip(seqs.tokens, seqs.offset, seqs.period)):
        for t in range(1, config.seq_len):
            nll = -logp[b, t - 1, row[t]]
            (rep if t > o + r else unrep if t < o + r else []).append(nll)
    m = measure(params, seqs)
    assert m.loss_repeated == pytest.approx(np.mean(rep)) and m.loss_unrepeated == pytest.approx(np.mean(unrep))
    assert m.previous_token.shape == m.induction.shape == (2, 2)
    for layer in range(2):
        for h in range(2):
            assert (m.previous_token[layer, h], m.induction[layer, h]) == pytest.approx(
                loop_scores(maps[:, layer, h], seqs))
    off = np.array([[True, False], [False, False]])
    logits_off, _ = reference_forward(params, seqs.tokens, off)
    knocked = measure(params, seqs, off)
    got = -log_softmax(logits_off, axis=-1)[:, :-1]
    assert knocked.loss_repeated == pytest.approx(np.mean(np.take_along_axis(got, seqs.tokens[:, 1:, None], -1)[
        ..., 0][seqs.repeated()]))
