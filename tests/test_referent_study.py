"""attention_core/gpt_studies/referent_study.py against the separately written float64 forward (tests/reference_gpt.py, its
patches done by naive loops over heads, positions and layers) on a tiny random model, and the identities: patching
nothing changes nothing, every head at the last position (or the whole residual) from the clean run gives the clean
run, positions before the word the two runs differ at carry nothing; the counts against counting by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.blas import single_blas_thread
from attention_core.smollm2 import interventions as iv
from attention_core.gpt_studies import referent_study as rs
from tests.test_gpt_interventions import CONFIG, N, random_weights, reference

L, H = CONFIG.n_layer, CONFIG.n_head
NOUNS = (3, 7)
WORD = 4  # the position where the clean and corrupted sequences differ


@pytest.fixture(scope="module", autouse=True)
def one_blas_thread():
    with single_blas_thread():
        yield


def pair(seed: int, count: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """count pairs of sequences (count, N) identical except at WORD."""
    rng = np.random.default_rng(seed + 200)
    clean = rng.integers(0, CONFIG.vocab, size=(count, N))
    corrupted = clean.copy()
    corrupted[:, WORD] = (clean[:, WORD] + 1 + rng.integers(0, CONFIG.vocab - 1, size=count)) % CONFIG.vocab
    return clean, corrupted


def reference_lead(weights, ids, **edits) -> float:
    logits = reference(weights, ids, **edits)[0][-1]
    return float(logits[NOUNS[0]] - logits[NOUNS[1]])


def close(mine, expected, scale: float = 1.0):
    np.testing.assert_allclose(mine, expected, rtol=0, atol=5e-4 * max(1.0, scale))


# ---------------------------------------------------------------- against the float64 reference

def test_leads_and_probabilities_match_the_reference():
    weights = random_weights(20)
    ids = np.concatenate(pair(20, 2))
    asked = rs.ask(weights, ids, NOUNS, [True, True, False, False])
    for b, seq in enumerate(ids):
        logits = reference(weights, seq)[0][-1]
        e = np.exp(logits - logits.max())
        close(asked.probabilities[b], (e / e.sum())[list(NOUNS)])
        close(asked.lead[b], logits[NOUNS[0]] - logits[NOUNS[1]])
    close(rs.leads(weights, ids, NOUNS), asked.lead)


def test_each_head_patched_at_the_last_position_matches_the_reference():
    weights = random_weights(21)
    clean, corrupted = pair(21)
    record = {}
    clean_lead = reference_lead(weights, clean[0], record=record)
    corrupted_lead = reference_lead(weights, corrupted[0])
    mine = rs.head_patching(weights, rs.record(weights, clean), rs.record(weights, corrupted), NOUNS)
    assert mine.shape == (L, H)
    gap = clean_lead - corrupted_lead
    assert abs(gap) > 0.05  # the two runs do differ
    for layer in range(L):
        for head in range(H):
            patched = reference_lead(weights, corrupted[0],
                                     head_override={(layer, head, N - 1): record["heads"][(layer, head)][N - 1]})
            close(mine[layer, head], (patched - corrupted_lead) / gap, 1 / abs(gap))


def test_each_residual_state_and_position_patched_matches_the_reference():
    weights = random_weights(22)
    clean, corrupted = pair(22)
    record = {}
    clean_lead = reference_lead(weights, clean[0], record=record)
    corrupted_lead = reference_lead(weights, corrupted[0])
    mine = rs.resid_patching(weights, rs.record(weights, clean), rs.record(weights, corrupted), NOUNS)
    assert mine.shape == (L + 1, N)
    gap = clean_lead - corrupted_lead
    for layer in range(L + 1):
        for position in range(N):
            patched = reference_lead(weights, corrupted[0],
                                     resid_override={(layer, position): record["resid"][layer][position]})
            close(mine[layer, position], (patched - corrupted_lead) / gap, 1 / abs(gap))


@pytest.mark.parametrize("heads", [[(0, 1)], [(1, 4), (2, 2)], [(0, 5), (1, 1), (2, 3), (2, 0)]])
def test_heads_patched_together_on_several_pairs_match_the_reference(heads):
    weights = random_weights(23)
    clean, corrupted = pair(23, 3)
    mine = rs.patched_together(weights, rs.record(weights, clean), rs.record(weights, corrupted), NOUNS, heads)
    for b in range(3):
        record = {}
        clean_lead = reference_lead(weights, clean[b], record=record)
        corrupted_lead = reference_lead(weights, corrupted[b])
        override = {(l, h, N - 1): record["heads"][(l, h)][N - 1] for l, h in heads}
        patched = reference_lead(weights, corrupted[b], head_override=override)
        gap = clean_lead - corrupted_lead
        close(mine[b], (patched - corrupted_lead) / gap, 1 / abs(gap))


# ---------------------------------------------------------------- identities

def test_patching_nothing_changes_nothing():
    weights = random_weights(24)
    clean, corrupted = pair(24, 2)
    traces = rs.record(weights, clean), rs.record(weights, corrupted)
    assert np.array_equal(rs.patched_together(weights, *traces, NOUNS, []), np.zeros(2))
    assert np.array_equal(rs.leads(weights, corrupted, NOUNS, start=traces[1]), rs.leads(weights, corrupted, NOUNS))
    # a head patched from the run itself: the same lead exactly
    own = iv.head_patches(traces[1], [(1, 2, N - 1), (0, 0, 3)])
    assert np.array_equal(rs.leads(weights, corrupted, NOUNS, own, start=traces[1]), rs.leads(weights, corrupted, NOUNS))


def test_every_head_at_the_last_position_from_the_clean_run_gives_the_clean_lead():
    """The last position's stream is its own token plus what its heads bring (the MLPs read only that stream): all of
    its heads from the clean run make it the clean run's, whatever happened elsewhere."""
    weights = random_weights(25)
    clean, corrupted = pair(25, 2)
    every = [(l, h) for l in range(L) for h in range(H)]
    fraction = rs.patched_together(weights, rs.record(weights, clean), rs.record(weights, corrupted), NOUNS, every)
    np.testing.assert_allclose(fraction, 1.0, atol=1e-4)


def test_the_whole_residual_from_the_clean_run_gives_the_clean_lead_and_earlier_positions_carry_nothing():
    weights = random_weights(26)
    clean, corrupted = pair(26)
    traces = rs.record(weights, clean), rs.record(weights, corrupted)
    for layer in range(L + 1):
        writes = iv.resid_patches(traces[0], [(layer, p) for p in range(N)])
        assert np.array_equal(rs.leads(weights, corrupted, NOUNS, resid_writes=writes), rs.leads(weights, clean, NOUNS))
    resid = rs.resid_patching(weights, *traces, NOUNS)
    # (within float rounding: the patched runs go as a batch, the unpatched one alone)
    np.testing.assert_allclose(resid[:, :WORD], 0.0, atol=1e-5)  # before the word the runs are the same
    np.testing.assert_allclose(resid[0, WORD], 1.0, atol=1e-5)  # entering layer 0 the word is the only difference
    np.testing.assert_allclose(resid[L, N - 1], 1.0, atol=1e-5)  # after the last layer: the logits' own input
    np.testing.assert_allclose(resid[L, :N - 1], 0.0, atol=1e-5)
    assert abs(resid[1:L, WORD:]).max() > 0.05  # (the map is not all zeros and ones)
    heads = rs.head_patching(weights, *traces, NOUNS, position=WORD - 1)  # a position before the word
    np.testing.assert_allclose(heads, 0.0, atol=1e-5)


# ---------------------------------------------------------------- the study and its counts

def test_the_study_picks_on_its_pair_and_scores_on_the_others():
    weights = random_weights(27)
    (clean,), (corrupted,) = pair(27)
    held_clean, held_corrupted = pair(28, 4)
    seen = []
    study = rs.patching_study(weights, (clean, corrupted), (held_clean, held_corrupted), NOUNS, ks=(1, 3), draws=5,
                              progress=lambda done, total: seen.append((done, total)))
    assert study.word_position == WORD
    assert [d for d, _ in seen] == list(range(1, len(seen) + 1)) and seen[-1][0] == seen[-1][1]
    order = np.argsort(-study.heads.ravel(), kind="stable")
    assert study.picked == tuple(divmod(int(i), H) for i in order[:3])
    assert study.held_out.shape == (2, 4) and study.random.shape == (2, 5, 4)
    traces = rs.record(weights, held_clean), rs.record(weights, held_corrupted)
    np.testing.assert_allclose(study.held_out[1], rs.patched_together(weights, *traces, NOUNS, study.picked[:3]))
    np.testing.assert_allclose(study.all_heads_at_last, 1.0, atol=1e-4)
    assert study.gap == pytest.approx(study.clean_lead - study.corrupted_lead)
    medians = np.median(study.random[0], axis=-1)  # by hand: the share of random sets below the picked median
    assert study.percentile(0) == pytest.approx(100 * np.mean(medians < np.median(study.held_out[0])))
    beaten = sum(study.held_out[0, p] > np.median(study.random[0, :, p]) for p in range(4))
    assert study.beats_random(0).k == beaten and study.beats_random(0).n == 4


def test_carried_reads_where_the_difference_sits():
    resid = np.zeros((5, 4))
    resid[:3, 1] = [1.0, 0.7, 0.5]
    resid[3:, 3] = [0.6, 1.0]
    resid[1, 3] = 0.9  # an early high value that does not last does not count
    study = rs.PatchingStudy(1.0, 0.0, np.zeros((2, 2)), resid, 1, 0.0, 1.0, (1,), ((0, 0),), np.ones(1),
                             np.zeros(1), np.zeros((1, 1)), np.zeros((1, 1, 1)))
    assert study.carried(0.5) == (2, 3)


def test_behaviour_counts_by_hand():
    lead = np.array([2.0, 1.0, -0.5, 3.0, 0.5, -1.0])
    fits = np.array([True, True, True, False, False, False])
    b = rs.Behaviour(np.zeros((6, 2)), lead, fits)
    assert b.right().k == 2 + 1 and b.right().n == 6  # first kind: 2 named first; second kind: 1 named second
    assert (b.named_first(fits).k, b.named_first(~fits).k) == (2, 2)
    assert b.right(np.array([1, 1, 0, 0, 0, 1], dtype=bool)).k == 3
    low, high = b.right().interval  # Wilson, written out: centre (p + z²/2n) / (1 + z²/n)
    z, p, n = 1.959963984540054, 0.5, 6
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert (low, high) == pytest.approx(((p + z * z / (2 * n)) / (1 + z * z / n) - half,
                                         (p + z * z / (2 * n)) / (1 + z * z / n) + half))
    count = rs.paired_leads([3.0, 1.0, 2.0], [2.0, 1.5, 0.0])
    assert (count.k, count.n) == (2, 3)


def test_restored_and_bad_pairs():
    np.testing.assert_allclose(rs.restored([1.0, 2.0, 0.0], 0.0, 2.0), [0.5, 1.0, 0.0])
    assert rs.first_difference([1, 2, 3], [1, 5, 3]) == 1
    with pytest.raises(ValueError, match="differ"):
        rs.first_difference([1, 2], [1, 2])
    with pytest.raises(ValueError, match="same length"):
        rs.first_difference([1, 2], [1, 2, 3])
