"""The lesson "Attention as it is built today"'s measurements (attention_core.gpt_studies.modern) against naive loops,
the models' configs and Gemma's own pass."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.gemma.weights import GemmaConfig
from attention_core.gpt_studies import modern as m
from attention_core.smollm2.weights import GPTConfig


def random_causal_maps(L, H, n, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(L, H, n, n)) * 3
    scores = np.where(np.tril(np.ones((n, n), bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_head_distances_equal_a_loop_over_pairs_and_rows():
    maps = random_causal_maps(3, 4, 6)
    got = m.head_distances(maps)
    flat = maps.reshape(12, 6, 6)
    for a in range(12):
        for b in range(12):
            rows = [sum(abs(flat[a, i, j] - flat[b, i, j]) for j in range(6)) / 2 for i in range(1, 6)]
            assert got[a, b] == pytest.approx(sum(rows) / len(rows), abs=1e-12)


def test_group_spread_separates_pairs_that_share_a_key_value_head():
    maps = random_causal_maps(2, 4, 5, seed=1)
    d = m.head_distances(maps)
    spread = m.group_spread(maps, n_kv_head=2)  # heads 0,1 share kv head 0; heads 2,3 kv head 1, per layer
    groups = [h // 2 + 2 * layer for layer in range(2) for h in range(4)]
    within = [d[a, b] for a in range(8) for b in range(a + 1, 8) if groups[a] == groups[b]]
    between = [d[a, b] for a in range(8) for b in range(a + 1, 8) if groups[a] != groups[b]]
    assert spread.within_pairs == len(within) == 4 and spread.between_pairs == len(between) == 24
    assert spread.within == pytest.approx(np.mean(within)) and spread.between == pytest.approx(np.mean(between))
    assert spread.by_group[1, 0] == pytest.approx(d[4, 5])


def test_identical_heads_in_a_group_are_at_distance_zero():
    maps = np.repeat(random_causal_maps(2, 1, 5), 4, axis=1)
    assert m.group_spread(maps, 1).within == 0.0 and m.group_spread(maps, 1).between > 0


def test_kv_bytes_follow_the_configs():
    g, s = GemmaConfig(), GPTConfig()
    assert m.kv_bytes_per_token(g.n_layer, g.n_kv_head, g.head_dim) == 18 * 2 * 1 * 256 * 4 == 36_864
    assert m.kv_bytes_per_token(s.n_layer, s.n_kv_head, s.head_dim) == 30 * 2 * 3 * 64 * 4 == 46_080
    assert m.kv_bytes_per_token(g.n_layer, g.n_head, g.head_dim) == 4 * 36_864


def test_window_cache_counts_each_layers_kept_tokens():
    g = GemmaConfig()
    expected = sum((32768 if layer in g.global_layers else 512) * 2 * 256 * 4 for layer in range(18))
    assert m.window_cache_bytes(32768, 18, g.global_layers, g.window, 1, 256) == expected
    assert m.window_cache_bytes(32768, 18, g.global_layers, None, 1, 256) == 18 * 32768 * 2048
    assert m.window_cache_bytes(100, 18, g.global_layers, 512, 1, 256) == 18 * 100 * 2048


def test_window_reading_equals_a_loop():
    maps = random_causal_maps(2, 2, 9, seed=3)
    w = m.window_reading(maps, 4)
    for layer in range(2):
        for h in range(2):
            past = [sum(maps[layer, h, i, j] for j in range(9) if i - j >= 4) for i in range(4, 9)]
            assert w.past[layer, h] == pytest.approx(np.mean(past))
            assert w.past_max[layer, h] == pytest.approx(max(past))
            assert w.on_start[layer, h] == pytest.approx(np.mean([maps[layer, h, i, 0] for i in range(4, 9)]))
    assert w.queries == 5
    with pytest.raises(ValueError):
        m.window_reading(maps, 9)


def naive_rope(x, position, base):
    """Rotate-half RoPE written pair by pair: number i and i + hd/2 turn by position * base^(-2i/hd)."""
    hd = len(x)
    out = np.array(x, dtype=np.float64)
    for i in range(hd // 2):
        angle = position * base ** (-2 * i / hd)
        a, b = x[i], x[i + hd // 2]
        out[i], out[i + hd // 2] = a * math.cos(angle) - b * math.sin(angle), b * math.cos(angle) + a * math.sin(angle)
    return out


@pytest.mark.parametrize("base", [10_000.0, 1_000_000.0])
def test_score_by_distance_equals_rotating_both_at_any_absolute_position(base):
    rng = np.random.default_rng(4)
    q, k = rng.normal(size=16), rng.normal(size=16)
    distances = [0, 1, 7, 300, 5000]
    got = m.score_by_distance(q, k, distances, base)
    for d, s in zip(distances, got):
        key_at = 123  # the score depends on the distance only
        want = naive_rope(q, key_at + d, base) @ naive_rope(k, key_at, base) / 4
        assert s == pytest.approx(want, rel=1e-4, abs=1e-4)


def test_slow_pairs_counts_pairs_under_one_turn():
    for base, tokens in ((1e4, 512), (1e6, 32768)):
        want = sum(tokens * base ** (-2 * i / 256) < 2 * math.pi for i in range(128))
        assert m.slow_pairs(256, base, tokens) == want


def test_norm_spread_leaves_out_the_start_token():
    v = np.zeros((2, 3, 4))
    v[:, 0, 0], v[:, 1, 0], v[:, 2, 1] = 100, 3, 5
    assert m.norm_spread(v) == (4.0, 3.0, 5.0)


def test_previous_token_hits_and_chance_equal_loops():
    maps = random_causal_maps(2, 3, 7, seed=5)
    hits, n = m.previous_token_hits(maps)
    assert n == 5
    for layer in range(2):
        for h in range(3):
            assert hits[layer, h] == sum(int(np.argmax(maps[layer, h, i]) == i - 1) for i in range(2, 7))
    assert m.chance_hits([4, 3]) == pytest.approx(1 / 3 + 1 / 4 + 1 / 3)


def test_a_pure_previous_token_head_is_picked_and_scores_every_query():
    sentences = []
    for n in (5, 6, 7, 5):
        maps = random_causal_maps(2, 2, n, seed=n) * 0.5
        maps[1, 0] = np.eye(n, k=-1)
        maps[1, 0, 0, 0] = 1
        sentences.append(maps)
    r = m.pick_previous_token_head(sentences, [0, 2], [1, 3])
    assert r.head == (1, 0) and r.pick_share == 1.0
    assert (r.held_out.k, r.held_out.n) == (4 + 3, 4 + 3)


# ---------------------------------------------------------------- on the model itself

@pytest.fixture(scope="module")
def gemma_model():
    from attention_core.blas import single_blas_thread
    from attention_core.gemma import model as gemma
    from attention_core.gemma.weights import GemmaUnavailable

    try:
        weights, tokenizer = gemma.default_model()
    except GemmaUnavailable as missing:
        pytest.skip(f"Gemma's packages are absent: {missing}")
    with single_blas_thread():
        yield gemma, weights, tokenizer


def test_read_text_is_gemmas_own_pass_with_its_queries_and_keys(gemma_model):
    gemma, weights, tokenizer = gemma_model
    ids = tokenizer.encode("The cat sat on the mat because it was warm.")
    r = m.read_text(weights, ids)
    out = gemma.forward(weights, ids, all_logits=False)
    np.testing.assert_allclose(r.maps, out.attention, atol=1e-6)
    np.testing.assert_allclose(r.logits, out.logits[0], atol=1e-4)
    c = weights.config
    assert r.cache_bytes == len(ids) * 2 * c.n_layer * c.n_kv_head * c.head_dim * 4  # the arrays, measured
    q = np.asarray(r.q_raw[3, 1], dtype=np.float64)  # QK-norm by hand: each vector over its RMS, times the gain
    want = q / np.sqrt((q * q).mean(axis=-1, keepdims=True) + c.norm_eps) * weights.attn_q_norm[3]
    np.testing.assert_allclose(r.q_normed[3, 1], want, rtol=1e-4, atol=1e-4)
    numbers = m.text_numbers(weights, ids, rope_layer=5)
    assert numbers.cache_bytes_per_token == m.kv_bytes_per_token(c.n_layer, c.n_kv_head, c.head_dim)
    assert numbers.scores_local_base[0] == pytest.approx(numbers.scores_global_base[0], rel=1e-5)  # d = 0: no turn
