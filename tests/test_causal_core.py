"""Attention_core.causal against independent references: naive loops with math.exp, exact identities, properties."""

import csv
import io
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.causal import (
    MODES,
    RANDOM_DIM,
    attend,
    causal_vs_bidirectional,
    generation_frames,
    leak_test,
    mask_facts,
    matrices_csv,
    qkv_projections,
    random_word_vectors,
    repeated_word,
    replacement_vector,
)
from tests.hypothesis_budget import examples

WORDS = "the animal did n't cross the street because it was too tired".split()


def naive_causal_weights(Q, K):
    """Row i: softmax over keys 0..i only, with Python loops and math.exp; keys after i get exactly 0."""
    n, d = Q.shape
    W = np.zeros((n, n))
    for i in range(n):
        scores = [sum(Q[i, c] * K[j, c] for c in range(d)) / math.sqrt(d) for j in range(i + 1)]
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        for j in range(i + 1):
            W[i, j] = exps[j] / sum(exps)
    return W


def projected(X, seed):
    W_q, W_k, W_v = qkv_projections(X.shape[1], seed)
    return X @ W_q, X @ W_k, X @ W_v


@pytest.mark.parametrize("n", [1, 2, 5, 12, 40])
@pytest.mark.parametrize("seed", [0, 3])
def test_causal_weights_lower_triangular_and_first_row_one_hot(n, seed):
    X = random_word_vectors([f"w{i}" for i in range(n)], RANDOM_DIM, seed)
    W = causal_vs_bidirectional(X, seed)["causal"].weights
    assert np.all(W[np.triu_indices(n, k=1)] == 0.0), "exactly 0 above the diagonal"
    expected_first = np.zeros(n)
    expected_first[0] = 1.0
    assert np.array_equal(W[0], expected_first), "first row exactly one-hot"
    np.testing.assert_allclose(W.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(W[np.tril_indices(n)] > 0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_causal_matches_naive_loop_and_bidirectional_is_unmasked(seed):
    X = random_word_vectors(WORDS, RANDOM_DIM, seed)
    res = causal_vs_bidirectional(X, seed)
    Q, K, V = projected(X, seed)
    ref = naive_causal_weights(Q, K)
    np.testing.assert_allclose(res["causal"].weights, ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res["causal"].output, ref @ V, rtol=1e-10, atol=1e-12)
    bi = res["bidirectional"]
    assert bi.mask.all() and np.isfinite(bi.scores).all()
    np.testing.assert_allclose(bi.weights.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(bi.weights > 0), "bidirectional: every token sees every token"


def test_masked_scores_are_minus_inf_and_others_match_bidirectional():
    X = random_word_vectors(WORDS, RANDOM_DIM, 5)
    res = causal_vs_bidirectional(X, 5)
    n = len(WORDS)
    above = np.triu(np.ones((n, n), dtype=bool), k=1)
    assert np.all(np.isneginf(res["causal"].scores[above]))
    assert np.array_equal(res["causal"].scores[~above], res["bidirectional"].scores[~above])


def test_random_word_vectors_are_per_word_and_seeded():
    X = random_word_vectors(WORDS, 8, 0)
    assert X.shape == (len(WORDS), 8)
    assert np.array_equal(X[0], X[5]), "the same word gets the same vector"
    assert not np.array_equal(X[0], X[1])
    assert np.array_equal(X, random_word_vectors(WORDS, 8, 0))
    assert not np.array_equal(X, random_word_vectors(WORDS, 8, 1))
    assert random_word_vectors([], 8, 0).shape == (0, 8)
    assert np.isfinite(random_word_vectors(["🙂", "<script>", "猫"], 8, 0)).all()


def test_replacement_vector_is_seeded_and_sized_like_x():
    X = random_word_vectors(WORDS, 16, 0) * 3.0
    v = replacement_vector(X, 4)
    assert v.shape == (16,) and np.array_equal(v, replacement_vector(X, 4))
    assert not np.array_equal(v, replacement_vector(X, 5))
    assert 0.3 < np.sqrt(np.mean(v**2)) / np.sqrt(np.mean(X**2)) < 3


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("j", list(range(len(WORDS))))
def test_leak_rows_before_j_exactly_unchanged(seed, j):
    X = random_word_vectors(WORDS, RANDOM_DIM, seed)
    result = leak_test(X, j, replacement_vector(X, seed + 100), seed)
    n = len(WORDS)
    # exact, bit for bit: == and not allclose
    assert np.all(result.delta["causal"][:j] == 0.0)
    assert result.unchanged_before("causal")
    assert result.max_change_before("causal") == (0.0 if j > 0 else None)
    assert result.rows_unchanged("causal")[:j].all()
    # from j on the change arrives (in general; these seeds are generic)
    assert np.all(result.row_change["causal"][j:] > 0)
    assert result.rows_changed("causal", j) == n - j
    # bidirectional: every row changes
    assert np.all(result.row_change["bidirectional"] > 0)
    assert result.rows_changed("bidirectional") == n
    if j > 0:
        assert not result.unchanged_before("bidirectional")


def test_leak_against_recomputation_by_hand():
    X = random_word_vectors(WORDS, RANDOM_DIM, 2)
    new = random_word_vectors(["dog"], RANDOM_DIM, 2)[0]
    j = 4
    result = leak_test(X, j, new, 2)
    Xc = X.copy()
    Xc[j] = new
    for mode in MODES:
        before = causal_vs_bidirectional(X, 2)[mode].output
        after = causal_vs_bidirectional(Xc, 2)[mode].output
        assert np.array_equal(result.delta[mode], after - before)
        np.testing.assert_array_equal(result.row_change[mode], np.abs(after - before).max(axis=1))


def test_leak_same_vector_changes_nothing_and_bad_position_raises():
    X = random_word_vectors(WORDS, RANDOM_DIM, 0)
    result = leak_test(X, 3, X[3], 0)
    assert result.rows_changed("causal") == 0 and result.rows_changed("bidirectional") == 0
    with pytest.raises(ValueError):
        leak_test(X, len(WORDS), X[0], 0)
    with pytest.raises(ValueError):
        attend(np.zeros((0, 4)), qkv_projections(4, 0), causal=True)


@settings(max_examples=examples(40), deadline=None, derandomize=True)
@given(n=st.integers(1, 9), d=st.integers(1, 6), seed=st.integers(0, 2**31 - 1), data=st.data())
def test_leak_property(n, d, seed, data):
    j = data.draw(st.integers(0, n - 1))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * data.draw(st.sampled_from([0.1, 1.0, 10.0]))
    result = leak_test(X, j, rng.normal(size=d), seed)
    assert np.all(result.delta["causal"][:j] == 0.0)
    W = causal_vs_bidirectional(X, seed)["causal"].weights
    assert np.all(W[np.triu_indices(n, k=1)] == 0.0) and W[0, 0] == 1.0


def test_generation_frames_against_naive_prefix_construction():
    """Frame k: the rows a model has after generating k tokens, computed from the prefix alone."""
    seed = 3
    X = random_word_vectors(WORDS, RANDOM_DIM, seed)
    n = len(WORDS)
    frames = generation_frames(causal_vs_bidirectional(X, seed)["causal"].weights)
    assert frames.shape == (n, n, n)
    for k in range(1, n + 1):
        Q, K, _ = projected(X[:k], seed)  # only the first k tokens exist
        prefix = naive_causal_weights(Q, K)
        for i in range(n):
            for j in range(n):
                value = frames[k - 1, i, j]
                if i < k and j <= i:
                    assert value == pytest.approx(prefix[i, j], rel=1e-12, abs=1e-15)
                else:
                    assert math.isnan(value), (k, i, j)
    # the last frame is the whole causal matrix; earlier rows never change between frames
    for k in range(1, n):
        assert np.array_equal(frames[k - 1][:k], frames[k][:k], equal_nan=True)


def test_generation_frames_one_token():
    frames = generation_frames(np.ones((1, 1)))
    assert frames.shape == (1, 1, 1) and frames[0, 0, 0] == 1.0


def test_mask_facts():
    X = random_word_vectors(WORDS, RANDOM_DIM, 0)
    facts = mask_facts(causal_vs_bidirectional(X, 0))
    n = len(WORDS)
    assert facts["masked"] == n * (n - 1) // 2
    assert facts["causal_max_above"] == 0.0 and facts["first_self"] == 1.0
    assert facts["bidirectional_min_above"] > 0 and facts["row_sum_error"] < 1e-12
    one = mask_facts(causal_vs_bidirectional(X[:1], 0))
    assert one["masked"] == 0 and one["causal_max_above"] is None and one["first_self"] == 1.0


def test_matrices_csv_round_trips_and_defuses_formulas():
    words = ["=cmd", "a,b", "-1", '"q"']
    X = random_word_vectors(words, RANDOM_DIM, 0)
    res = causal_vs_bidirectional(X, 0)
    rows = list(csv.DictReader(io.StringIO(matrices_csv(words, res))))
    assert len(rows) == 4 * len(words) ** 2
    assert {r["query_token"] for r in rows} == {"'=cmd", "a,b", "'-1", '"q"'}
    by_matrix = {}
    for r in rows:
        by_matrix.setdefault(r["matrix"], {})[(int(r["query_position"]) - 1, int(r["key_position"]) - 1)] = float(r["value"])
    for mode in MODES:
        for kind in ("scores", "weights"):
            M = getattr(res[mode], kind)
            for (i, j), v in by_matrix[f"{kind}_{mode}"].items():
                assert v == M[i, j]  # repr round-trips exactly, -inf included
    assert by_matrix["scores_causal"][(0, 1)] == -np.inf


def test_glove_vectors_work_too(glove):
    from attention_core.glove import embed

    X, unknown = embed(WORDS, glove)
    assert unknown == [] and X.shape == (len(WORDS), 50)
    result = leak_test(X, 8, embed(["dog"], glove)[0][0], 0)
    assert np.all(result.delta["causal"][:8] == 0.0)
    assert result.rows_changed("bidirectional") == len(WORDS)


@pytest.mark.parametrize("use_glove", [True, False])
def test_without_the_mask_row_i_sees_token_i_plus_1_with_it_never(use_glove, glove):
    """The page's claim: training without the mask would be cheating. At the page's defaults
    (GloVe or random vectors, seed 0, the replacement word "dog") changing token i+1 moves output row i when there is
    no mask, and leaves it bit-for-bit unchanged under the causal mask, for every i."""
    from attention_core.glove import embed

    if use_glove:
        X, new = embed(WORDS, glove)[0], embed(["dog"], glove)[0][0]
    else:
        X, new = random_word_vectors(WORDS, RANDOM_DIM, 0), random_word_vectors(["dog"], RANDOM_DIM, 0)[0]
    for j in range(1, len(WORDS)):
        result = leak_test(X, j, new, 0)
        assert result.row_change["bidirectional"][j - 1] > 1e-6, j  # row j-1 (predicting token j) sees token j
        assert result.row_change["causal"][j - 1] == 0.0, j  # exactly, with the mask
        assert np.all(result.delta["causal"][:j] == 0.0)  # every row before j: exactly unchanged (the KV cache)


@pytest.mark.parametrize("use_glove", [True, False])
def test_the_kv_cache_holds_in_a_stack_of_layers_not_in_this_single_one(use_glove, glove):
    """The page's KV-cache sentence at its defaults (the preset sentence, seed 0), a token arriving at the end:
    in this one layer K = X W_K and V = X W_V of the earlier tokens never change, mask or not (they are made from
    each token's own vector); a second layer makes its K and V from the first layer's outputs, and those stay
    bit-for-bit the same for the earlier tokens only under the causal mask."""
    from attention_core.glove import embed

    words = WORDS + ["and"]
    X = embed(words, glove)[0] if use_glove else random_word_vectors(words, RANDOM_DIM, 0)
    n, d = X.shape
    first, second = qkv_projections(d, 0), qkv_projections(d, 1)
    before, after = X[: n - 1], X  # the sentence without and with its new last token
    for W in (first[1], first[2]):  # one layer: the earlier tokens' keys and values
        assert np.array_equal((after @ W)[: n - 1], before @ W)
    for causal in (True, False):
        out_before, out_after = attend(before, first, causal).output, attend(after, first, causal).output
        for W in (second[1], second[2]):  # layer 2's keys and values of the earlier tokens
            same = np.array_equal((out_after @ W)[: n - 1], out_before @ W)
            assert same == causal, ("causal" if causal else "bidirectional", same)


@pytest.mark.parametrize("seed", [0, 3])
def test_a_repeated_word_has_one_output_without_the_mask_and_two_with_it(seed):
    words = "she went to the bank to pay before walking along the river bank".split()
    X = random_word_vectors(words, RANDOM_DIM, seed)
    found = repeated_word(words, causal_vs_bidirectional(X, seed))
    assert (found["word"], found["first"], found["last"]) == ("bank", 4, 12)  # the later repeat wins over "to", "the"
    Q, K, V = projected(X, seed)
    by_hand = naive_causal_weights(Q, K) @ V
    assert found["causal"] == pytest.approx(np.max(np.abs(by_hand[12] - by_hand[4])), rel=1e-9)
    assert found["causal"] > 0.01
    assert found["bidirectional"] < 1e-12  # the same query against the same keys: one row, whatever its position


def test_no_repeated_word_no_comparison():
    words = ["one", "two", "three"]
    X = random_word_vectors(words, RANDOM_DIM, 0)
    assert repeated_word(words, causal_vs_bidirectional(X, 0)) is None
