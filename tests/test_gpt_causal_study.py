"""The lesson "What heads do"'s experiments (attention_core/gpt_studies/causal_study.py) on a tiny random model, each
against the same quantity computed another way: whole runs instead of runs started at a layer, heads.py's losses
and scores, scipy's rank correlation, loops."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.attention import log_softmax
from attention_core.blas import single_blas_thread
from attention_core.gpt_studies import causal_study as cs
from attention_core.gpt_studies import heads
from attention_core.smollm2 import interventions as iv
from attention_core.measure import head_stats
from tests.test_gpt_interventions import CONFIG, random_weights

PERIOD = 5


@pytest.fixture(scope="module", autouse=True)
def one_blas_thread():
    with single_blas_thread():
        yield


@pytest.fixture(scope="module")
def setup():
    weights = random_weights(21, scale=0.5)
    picking = heads.repeated_random_sequences(1, 3, PERIOD, low=0, high=CONFIG.vocab)
    scoring = heads.repeated_random_sequences(2, 3, PERIOD, low=0, high=CONFIG.vocab)
    return weights, cs.run_set(weights, picking, PERIOD), cs.run_set(weights, scoring, PERIOD)


def test_second_copy_losses_are_heads_copy_losses():
    weights, ids = random_weights(22), heads.repeated_random_sequences(3, 2, PERIOD, low=0, high=CONFIG.vocab)
    full = iv.run(weights, ids).logits
    mine = cs.second_copy_losses(full[:, cs.second_copy_rows(PERIOD)], ids, PERIOD)
    for b in range(2):
        assert mine[b] == pytest.approx(heads.copy_losses(heads.token_losses(full[b], ids[b]), PERIOD)[1], abs=1e-9)


def test_run_set_scores_are_heads_scores_of_the_models_maps(setup):
    weights, picking, _ = setup
    out = iv.run(weights, picking.trace.ids, maps=[(1, 2)])
    np.testing.assert_allclose(picking.induction[:, 1, 2], heads.induction_score(out.maps[(1, 2)], PERIOD))
    np.testing.assert_allclose(picking.sink[:, 1, 2], heads.sink_share(out.maps[(1, 2)]))
    np.testing.assert_allclose(picking.previous[:, 1, 2], heads.previous_token_score(out.maps[(1, 2)]))


def test_top_heads_and_random_sets():
    scores = np.array([[0.1, 0.9, 0.3], [0.9, 0.2, 0.5]])
    assert cs.top_heads(scores, 3) == ((0, 1), (1, 0), (1, 2))
    drawn = cs.random_head_sets(4, 30, seed=5, shape=(3, 6))
    assert drawn == cs.random_head_sets(4, 30, seed=5, shape=(3, 6))
    assert all(len(set(s)) == 4 and all(0 <= l < 3 and 0 <= h < 6 for l, h in s) for s in drawn)
    assert len(set(drawn)) > 20  # different draws
    assert cs.percentile_among(5.0, np.array([1, 2, 6, 7])) == 50.0
    assert cs.percentile_among(9.0, np.array([1, 2, 6, 7])) == 100.0


def test_the_ablation_study_equals_whole_runs(setup):
    weights, picking, scoring = setup
    study = cs.ablation_study(weights, picking, scoring, PERIOD, ks=(1, 2), draws=3)
    ids = scoring.trace.ids

    def whole(writes):  # the whole pass from the embeddings, every logit, then the copy loss per sequence
        logits = iv.run(weights, ids, writes).logits
        return np.array([heads.copy_losses(heads.token_losses(logits[b], ids[b]), PERIOD)[1] for b in range(len(ids))])

    best = cs.top_heads(picking.induction.mean(axis=0), 2)
    assert study.induction_heads == best
    means = iv.head_means(picking.trace)
    np.testing.assert_allclose(study.clean, whole(()), atol=1e-6)
    np.testing.assert_allclose(study.induction_zero[1], whole(iv.zero_ablation(best)), atol=1e-6)
    np.testing.assert_allclose(study.induction_mean[0], whole(iv.mean_ablation(best[:1], means)), atol=1e-6)
    sinks = cs.top_heads(picking.sink.mean(axis=0), 2)
    np.testing.assert_allclose(study.sink_zero[1], whole(iv.zero_ablation(sinks)), atol=1e-6)
    drawn = study.random_sets[1][2]
    assert study.random_zero[1, 2] == pytest.approx(whole(iv.zero_ablation(drawn)).mean(), abs=1e-6)
    assert study.random_mean[1, 2] == pytest.approx(whole(iv.mean_ablation(drawn, means)).mean(), abs=1e-6)
    assert study.random_zero.shape == (2, 3) and study.sequences == (3, 3)
    assert study.percentile(1) == cs.percentile_among(float(study.induction_zero[1].mean()), study.random_zero[1])
    assert study.rose(0).n == 3


def test_the_composition_study_against_whole_runs(setup):
    weights, picking, scoring = setup
    comp = cs.composition_study(weights, picking, scoring, PERIOD, controls=4)
    layer, head = comp.induction_head
    assert comp.previous_head[0] < layer
    ids = scoring.trace.ids
    clean_maps = iv.run(weights, ids, maps=[comp.induction_head]).maps[comp.induction_head]
    np.testing.assert_allclose(comp.clean, heads.induction_score(clean_maps, PERIOD), atol=1e-6)
    off = iv.run(weights, ids, iv.zero_ablation([comp.previous_head]), maps=[comp.induction_head])
    np.testing.assert_allclose(comp.switched_off, heads.induction_score(off.maps[comp.induction_head], PERIOD),
                               atol=1e-6)
    assert len(comp.control_heads) == 4 and comp.previous_head not in comp.control_heads
    assert all(l < layer for l, _ in comp.control_heads)


def test_reading_the_layers():
    weights, ids = random_weights(23), [3, 14, 15, 9, 26]
    reading = cs.read_layers(weights, ids)
    lens = iv.lens(weights, iv.run(weights, np.array([ids]), record=True).trace)
    assert reading.answer == int(np.argmax(lens[-1])) and reading.ranks[-1] == 0
    for layer in range(CONFIG.n_layer + 1):
        assert reading.ranks[layer] == int(np.sum(lens[layer] > lens[layer, reading.answer]))
        assert reading.top[layer, 0] == int(np.argmax(lens[layer]))
    late = cs.Reading(0, np.array([50, 3, 40, 5, 0]), np.zeros((5, 1)))
    assert late.first_in_top(10) == 3 and cs.Reading(0, np.zeros(3), np.zeros((3, 1))).first_in_top() == 0


def test_rank_correlation_is_spearmans_with_a_bootstrap_interval():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    y = 0.5 * x + rng.normal(size=60)
    y[:5] = y[5]  # ties
    rho, low, high = head_stats.rank_correlation(x, y, cs.RANDOM_SEED, resamples=500)
    assert rho == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    assert low < rho < high and 0 < low


def test_ranks_of_many_rows_at_once_are_scipys_with_ties():
    from scipy.stats import rankdata

    rng = np.random.default_rng(1)
    rows = np.round(rng.normal(size=(200, 41)), 0)  # many ties in every row
    assert np.array_equal(head_stats._ranks(rows), rankdata(rows, axis=-1))
    assert np.array_equal(head_stats._ranks(np.ones(7)), rankdata(np.ones(7)))


def test_the_bootstrap_interval_is_the_loop_over_resamples():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(2)
    x, y = rng.normal(size=40), rng.normal(size=40)
    idx = np.random.default_rng(cs.RANDOM_SEED).integers(0, 40, size=(300, 40))
    loop = [spearmanr(x[i], y[i]).statistic for i in idx]
    _, low, high = head_stats.rank_correlation(x, y, cs.RANDOM_SEED, resamples=300)
    assert (low, high) == pytest.approx(tuple(np.quantile(loop, [0.025, 0.975])), abs=1e-12)


def test_single_head_effects_are_whole_runs_minus_the_clean_one(setup):
    weights, _, scoring = setup
    effects = cs.single_head_effects(weights, scoring, PERIOD)
    ids = scoring.trace.ids
    clean = iv.run(weights, ids).logits
    base = np.mean([heads.copy_losses(heads.token_losses(clean[b], ids[b]), PERIOD)[1] for b in range(len(ids))])
    for layer, head in [(0, 0), (2, 5)]:
        off = iv.run(weights, ids, iv.zero_ablation([(layer, head)])).logits
        loss = np.mean([heads.copy_losses(heads.token_losses(off[b], ids[b]), PERIOD)[1] for b in range(len(ids))])
        assert effects[layer, head] == pytest.approx(loss - base, abs=1e-6)


def test_the_sink_reading_against_loops():
    weights = random_weights(24)
    texts = [[5, 9, 2, 33, 7, 1], [40, 3, 3, 8]]
    reading = cs.sink_reading(weights, texts)
    weight, tokens, losses = np.zeros((3, 6)), 0, {(): [], (0,): [], (1,): []}
    every = [(l, h) for l in range(3) for h in range(6)]
    for ids in texts:
        out = iv.run(weights, np.array([ids]), maps=every)
        for l, h in every:
            weight[l, h] += sum(out.maps[(l, h)][0, i, 0] for i in range(1, len(ids)))
        tokens += len(ids) - 1
        for hidden in losses:
            logits = iv.run(weights, np.array([ids]), hidden=hidden).logits[0]
            for i in range(1, len(ids) - 1):
                losses[hidden].append(-log_softmax(logits[i].astype(np.float64))[ids[i + 1]])
    np.testing.assert_allclose(reading.weight, weight / tokens, atol=1e-6)
    assert reading.loss == pytest.approx(np.mean(losses[()]))
    assert reading.loss_without_first == pytest.approx(np.mean(losses[(0,)]))
    assert reading.loss_without_second == pytest.approx(np.mean(losses[(1,)]))
    assert reading.tokens == 4 + 2 and reading.texts == 2
    assert np.all((0 <= reading.norm_share) & (reading.norm_share <= 1 + 1e-9))


def test_a_copied_name_against_a_whole_run():
    weights = random_weights(25, scale=0.5)
    piece = [7, 30, 12]
    ids = [3, 4] + piece + [9, 1, 2] + piece + [5]
    chosen = [(1, 2), (2, 0)]
    copied = cs.copied_name(weights, ids, piece, chosen)
    logits = iv.run(weights, np.array([ids]), iv.zero_ablation(chosen)).logits[0].astype(np.float64)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    assert copied.tokens == (30, 12)
    np.testing.assert_allclose(copied.first, [probs[2, 30], probs[3, 12]], atol=1e-6)
    np.testing.assert_allclose(copied.second, [probs[8, 30], probs[9, 12]], atol=1e-6)
    assert copied.written == (int(np.argmax(logits[8])), int(np.argmax(logits[9])))  # the top guesses, second time
    assert cs.copied_name(weights, [1, 7, 2], [7]) is None  # one token
    assert cs.copied_name(weights, [1, 7, 30, 2], piece) is None  # not there twice


def test_switched_off_losses_zero_and_mean(setup):
    weights, picking, scoring = setup
    means = iv.head_means(picking.trace)
    chosen = [(0, 1), (2, 3)]
    study_zero = cs.ablated_losses(weights, scoring.trace, PERIOD, iv.zero_ablation(chosen))
    np.testing.assert_array_equal(cs.switched_off_losses(weights, scoring.trace, PERIOD, chosen), study_zero)
    np.testing.assert_array_equal(cs.switched_off_losses(weights, scoring.trace, PERIOD, chosen, means),
                                  cs.ablated_losses(weights, scoring.trace, PERIOD, iv.mean_ablation(chosen, means)))
    clean = cs.switched_off_losses(weights, scoring.trace, PERIOD, [])
    assert not np.allclose(clean, study_zero)
