"""The GPT lesson's head findings on the real model at the defaults (induction_sets(): 8 sequences of 20 random
tokens repeated pick the heads, 8 others score them), set against the uniform head and the untrained copy.

What this cannot show: that a head with a high induction score *causes* the copying (no ablation here), or how the
original (not 4-bit) SmolLM2 scores; random-token sequences are not natural text.
"""

from __future__ import annotations

import pytest

from attention_core.gpt_studies import heads
from attention_core.blas import single_blas_thread

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def studies():
    gpt = pytest.importorskip("attention_core.smollm2")
    from attention_core.smollm2.weights import untrained_weights

    weights, _ = gpt.default_model()
    sets = heads.induction_sets()
    with single_blas_thread():
        trained = heads.head_study(heads.gpt_forward(weights), sets)
        untrained = heads.head_study(heads.gpt_forward(untrained_weights(weights.config, seed=0)), sets)
    return trained, untrained, sets


def test_an_induction_head_picked_on_one_set_holds_on_the_other(studies):
    trained, untrained, sets = studies
    uniform = heads.uniform_induction_score(sets.period)
    assert trained.sequences == (8, 8) and trained.induction.held_out_items == 8
    assert trained.induction.held_out_mean > 10 * uniform  # far above a head that spreads its weight evenly
    assert trained.induction.held_out_mean > untrained.induction.held_out_mean + 0.3
    assert untrained.induction.held_out_mean < 3 * uniform  # the untrained copy's best is near uniform
    # the same pick-then-score procedure aimed at the wrong target (the token 10 places on) finds far less
    assert trained.induction.held_out_mean > 3 * trained.wrong_target.held_out_mean
    assert heads.heads_over(trained.induction_means, 0.3) >= 3 > heads.heads_over(untrained.induction_means, 0.3)


def test_the_second_copy_is_predicted_far_better_than_the_first(studies):
    trained, untrained, _ = studies
    assert trained.second_copy_loss < 0.5 * trained.first_copy_loss
    # the untrained copy cannot copy: both copies cost about the same
    assert untrained.second_copy_loss == pytest.approx(untrained.first_copy_loss, rel=0.1)


def test_most_heads_put_more_than_half_their_weight_on_the_first_token(studies):
    trained, untrained, _ = studies
    n_heads = trained.sink_means.size
    assert heads.heads_over(trained.sink_means) > n_heads / 2
    assert heads.heads_over(untrained.sink_means) < heads.heads_over(trained.sink_means) / 2


def test_a_previous_token_head_holds_out(studies):
    trained, untrained, _ = studies
    uniform = heads.uniform_previous_token_score(2 * 20)
    assert trained.previous_token.held_out_mean > 5 * uniform
    assert trained.previous_token.held_out_mean > untrained.previous_token.held_out_mean + 0.3
