"""attention_core.gpt_studies.heads' functions added for lesson 9's issue-33 items, against loops written here: flips between
sentences, the seeds' first draws, the filled text, the previous-token score with filler before the text, the random
first token, the uniform loss and e^H, and the rotary scores' shift (on the small untrained copy)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.gpt_studies import heads


def test_noun_flips_counts_heads_preferring_the_other_noun():
    rng = np.random.default_rng(3)
    rows = rng.random((4, 3, 5, 2))
    got = heads.noun_flips(rows)
    for a in range(4):
        for b in range(4):
            want = sum(int((rows[a, i, j, 1] > rows[a, i, j, 0]) != (rows[b, i, j, 1] > rows[b, i, j, 0]))
                       for i in range(3) for j in range(5))
            assert got[a, b] == want
    assert np.all(np.diag(got) == 0)


def test_first_draws_follow_the_generation_servers_rule():
    probs = np.array([0.5, 0.25, 0.125, 0.125])
    got = heads.first_draws(probs, range(20))
    for seed, token in enumerate(got):
        word = int(np.random.SeedSequence([seed, 0]).generate_state(1)[0])
        assert token == int(np.random.default_rng(word).choice(4, p=probs))
    assert set(got) <= {0, 1, 2, 3}


def test_first_draws_equal_numpys_choice_over_a_vocabulary_of_gemmas_size():
    rng = np.random.default_rng(7)
    probs = rng.gamma(0.05, size=262_144)  # spiky, as a model's: most mass on few tokens, many tiny values
    probs /= probs.sum()
    got = heads.first_draws(probs, range(200))
    want = [int(np.random.default_rng(int(np.random.SeedSequence([seed, 0]).generate_state(1)[0])).choice(
        probs.size, p=probs)) for seed in range(200)]
    assert got.tolist() == want


def test_filled_to_repeats_the_ids():
    assert heads.filled_to([5, 6, 7], 8) == [5, 6, 7, 5, 6, 7, 5, 6]
    assert heads.filled_to([1, 2, 3], 2) == [1, 2, 3]
    with pytest.raises(ValueError):
        heads.filled_to([], 4)


def test_shifted_previous_token_reads_the_same_rows_after_the_filler():
    rng = np.random.default_rng(1)
    a, b = rng.random((2, 2, 4, 4)), rng.random((2, 2, 7, 7))
    before, after = heads.shifted_previous_token(a, b, 3)
    for layer in range(2):
        for head in range(2):
            assert before[layer, head] == pytest.approx(np.mean([a[layer, head, i, i - 1] for i in range(1, 4)]))
            assert after[layer, head] == pytest.approx(np.mean([b[layer, head, i + 3, i + 2] for i in range(1, 4)]))


def test_random_first_token_changes_only_the_first_to_an_ordinary_token():
    ids = [20, 30, 40]
    for seed in range(30):
        out = heads.random_first_token(ids, seed, 50)
        assert out[1:] == [30, 40] and out[0] != 20 and 17 <= out[0] < 50
    assert heads.random_first_token(ids, 4, 50) == heads.random_first_token(ids, 4, 50)  # seeded


def test_uniform_loss_and_equally_likely():
    assert heads.uniform_loss(49152) == pytest.approx(math.log(49152))
    assert heads.equally_likely(math.log(4.0)) == pytest.approx(4.0)
    assert heads.equally_likely(0.0) == 1.0


def test_rotary_scores_depend_on_the_distance_only():
    from attention_core.smollm2.weights import GPTConfig, untrained_weights

    weights = untrained_weights(GPTConfig(), 0)
    diff, largest = heads.rotary_shift_difference(weights, [100, 2000, 31, 4000], (5, 700))
    assert largest > 0 and diff < 1e-4 * largest
    scores = heads.first_layer_scores(weights, [100, 2000, 31, 4000])
    assert scores.shape == (9, 4, 4)
