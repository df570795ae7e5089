"""head_effects against loops written here: the high random draws' holders, and the induction split's medians and
permutation baseline."""

from __future__ import annotations

import numpy as np

from attention_core.gpt_studies import causal_study as cs
from attention_core.gpt_studies import head_effects as he


def small_study(rng) -> cs.AblationStudy:
    ks = (1, 2)
    sets = tuple(cs.random_head_sets(k, 20, 7, (3, 4)) for k in ks)
    zeros = np.zeros((2, 4))
    return cs.AblationStudy(ks, ((2, 1), (2, 3)), ((0, 0), (0, 1)), np.zeros(4), 1.0, zeros, zeros, zeros, zeros,
                            rng.normal(size=(2, 20)), rng.normal(size=(2, 20)), sets, np.zeros((3, 4)),
                            np.zeros((3, 4)), (4, 4), 5)


def test_high_draw_holders_against_a_loop():
    rng = np.random.default_rng(0)
    a = small_study(rng)
    single = rng.normal(size=(3, 4))
    found = he.high_draw_holders(a, single, (1, 2), induction_top=2, early_layers=1)
    expected = []
    for row, k in enumerate(a.ks):
        cut = np.quantile(a.random_zero[row], 0.95)
        for d in range(20):
            if a.random_zero[row, d] < cut:
                continue
            best = None
            for head in a.random_sets[row][d]:
                if best is None or single[head] > single[best]:
                    best = head
            kind = "previous" if best == (1, 2) else ("induction" if best in {(2, 1), (2, 3)} else
                                                      ("early" if best[0] == 0 else "other"))
            expected.append((k, best, kind))
    assert found == expected and len(found) >= 2


def test_the_induction_split_against_a_loop():
    rng = np.random.default_rng(1)
    induction = rng.uniform(size=40)
    effect = rng.normal(size=40) + 2 * (induction > 0.7)
    split = he.effect_by_induction(induction, effect, threshold=0.7, permutations=300, seed=5)
    strong = [e for i, e in zip(induction, effect) if i > 0.7]
    rest = [e for i, e in zip(induction, effect) if i <= 0.7]
    assert (split.strong, split.rest) == (len(strong), len(rest))
    assert split.strong_median == np.median(strong) and split.rest_median == np.median(rest)
    shuffles = np.random.default_rng(5)
    null = []
    labels = induction > 0.7
    for _ in range(300):
        p = shuffles.permutation(labels)
        null.append(np.median(effect[p]) - np.median(effect[~p]))
    assert split.permuted_p95 == np.quantile(null, 0.95)
    reached = sum(n >= np.median(strong) - np.median(rest) for n in null)
    assert split.p_value == (1 + reached) / 301 and split.p_value < 0.05  # a planted difference is found


def test_no_difference_gives_a_large_p_value():
    rng = np.random.default_rng(2)
    split = he.effect_by_induction(rng.uniform(size=60), rng.normal(size=60), threshold=0.5, permutations=500)
    assert split.p_value > 0.05


def test_the_copied_tokens_attribution_is_the_row_by_row_one_and_adds_up_to_the_logit():
    """Against interventions.direct_logit_attribution called row by row (tested there against float64 loops), and
    the identity: embedding + heads + MLPs = the copied token's logit, itself the run's own logit."""
    from attention_core.smollm2 import interventions as iv
    from tests.test_gpt_interventions import CONFIG, random_weights

    weights, period = random_weights(21), 4
    rng = np.random.default_rng(3)
    half = rng.integers(0, CONFIG.vocab, size=(2, period))
    ids = np.concatenate([half, half], axis=1)  # (2, 2 period): each sequence written twice
    out = iv.run(weights, ids, record=True)
    found = he.copied_token_attribution(weights, out.trace, period)
    rows = [(b, p) for b in range(2) for p in range(period, 2 * period - 1)]
    parts = [iv.direct_logit_attribution(weights, out.trace, int(ids[b, p + 1]), p, b) for b, p in rows]
    np.testing.assert_allclose(found.heads, np.mean([x.heads for x in parts], axis=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(found.mlps, np.mean([x.mlps for x in parts], axis=0), rtol=1e-5, atol=1e-6)
    logits = [float(out.logits[b, p, ids[b, p + 1]]) for b, p in rows]
    total = found.embedding + found.heads.sum() + found.mlps.sum()
    assert abs(total - found.logit) < 1e-6 * max(1.0, abs(found.logit))
    assert abs(found.logit - np.mean(logits)) < 1e-3 * max(1.0, abs(found.logit))
