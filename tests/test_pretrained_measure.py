"""Lesson 8's measurements (attention_core.pretrained.measure) on hand-made outcomes, against naive loops."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.measure import head_stats as hs
from attention_core.pretrained import measure as pm
from attention_core.pretrained.sets import KINDS, MinimalPair, PretrainedSets, ReferentItem

RNG = np.random.default_rng(24)
L, H = 2, 3


def loop_pick(scores, pick, score):
    """The head with the highest mean over ``pick`` (first in layer, head order on ties), its sum over ``score``."""
    best, best_mean = None, -1.0
    for layer in range(scores.shape[0]):
        for head in range(scores.shape[1]):
            mean = sum(scores[layer, head, i] for i in pick) / len(pick)
            if mean > best_mean:
                best, best_mean = (layer, head), mean
    return best, sum(scores[best][i] for i in score)


def test_item_split_keeps_each_sentence_on_one_side():
    sentence = np.array([0, 0, 0, 1, 1, 2, 3, 3, 3, 3, 4])
    split = pm.item_split(sentence)
    picked = {int(sentence[i]) for i in split.pick_idx}
    scored = {int(sentence[i]) for i in split.score_idx}
    assert picked == {0, 2, 4} and scored == {1, 3}  # sentences 1st, 3rd, 5th pick
    assert sorted(split.pick_idx + split.score_idx) == list(range(len(sentence)))


def test_referent_scores_against_a_loop():
    referent = RNG.random((L, H, 7, 2))
    referent[0, 0, 3] = [0.4, 0.4]  # a tie is no hit for either target
    targets = np.array([0, 1, 1, 0, 1, 0, 0])
    out = pm.referent_scores(referent, targets)
    for l in range(L):
        for h in range(H):
            for i in range(7):
                right, wrong = referent[l, h, i, targets[i]], referent[l, h, i, 1 - targets[i]]
                assert out[l, h, i] == (1.0 if right > wrong else 0.0)


def tiny_sets(n_agreement=4, n_referent=8) -> PretrainedSets:
    agreement = tuple(MinimalPair((f"A told B that she left {i}", f"A told B that he left {i}"), ("she", "he"),
                                  ("A", "B"), ("A", "B") if i % 2 else ("B", "A")) for i in range(n_agreement))
    referent = tuple(ReferentItem(f"the x met the y because it {i}", "it", ("x", "y"), "x" if i % 2 else "y",
                                  "x" if i % 4 < 2 else "y") for i in range(n_referent))
    return PretrainedSets((), {}, (), agreement, referent)


def outcomes(sets: PretrainedSets, seed: int) -> pm.SetOutcomes:
    rng = np.random.default_rng(seed)
    kinds = {}
    for kind in KINDS:
        sentence = np.repeat(np.arange(6), 2)
        scores = rng.random((L, H, 12)) if kind == "sink" else (rng.random((L, H, 12)) < 0.5).astype(float)
        links = () if kind == "sink" else tuple((int(a), int(a) + int(b)) for a, b in zip(rng.integers(0, 4, 12),
                                                                                             rng.integers(1, 3, 12)))
        kinds[kind] = pm.KindOutcomes(scores, sentence, links)
    return pm.SetOutcomes(kinds, rng.normal(size=(6, 2, L, H)), rng.normal(size=(len(sets.agreement), 2, L, H)),
                          rng.random((L, H, len(sets.it_referent), 2)))


def test_catalogue_rows_against_loops():
    sets = tiny_sets()
    mine, control = outcomes(sets, 1), outcomes(sets, 2)
    rows = pm.catalogue_rows(mine, control, sets)
    assert list(rows) == list(pm.ROWS)
    for kind in KINDS:
        row, scores = rows[kind], mine.kinds[kind].scores
        pick = [i for i in range(12) if mine.kinds[kind].sentence[i] in (0, 2, 4)]
        score = [i for i in range(12) if i not in pick]
        head, total = loop_pick(scores, pick, score)
        assert row.trained.head == head and row.trained.held_out_mean == pytest.approx(total / len(score))
        assert row.untrained.head == loop_pick(control.kinds[kind].scores, pick, score)[0]
        if kind == "sink":
            assert row.trained.held_out_count is None and row.baseline is None
        else:
            assert row.trained.held_out_count == hs.Count(int(total), len(score))
        if kind in ("subject_verb", "determiner_noun"):
            links = mine.kinds[kind].links
            assert row.baseline == hs.Count(sum(links[i][0] + 1 == links[i][1] for i in score), len(score))
    # agreement: pairs 0, 2 pick; a sentence is right when its margin > 0
    hits = np.zeros((L, H, 4))
    for p in range(4):
        for l in range(L):
            for h in range(H):
                hits[l, h, p] = sum(mine.agreement[p, s, l, h] > 0 for s in range(2))
    head, total = loop_pick(hits, [0, 2], [1, 3])
    row = rows["pronoun_agreement"]
    assert row.trained.head == head and row.trained.held_out_count == hs.Count(int(total), 4)
    assert row.baseline == hs.Count(2, 4)  # the first name is right in one sentence of each pair
    # "it": stratified by (answer first, subject first); groups of 2 here, the first of each picks
    row = rows["it_referent"]
    groups = [item.group for item in sets.it_referent]
    pick = [i for i in range(8) if i == groups.index(groups[i])]
    assert row.split.pick_idx == tuple(pick)
    targets = np.array([0 if item.answer == "x" else 1 for item in sets.it_referent])
    scores = pm.referent_scores(mine.referent, targets)
    head, total = loop_pick(scores, pick, [i for i in range(8) if i not in pick])
    assert row.trained.head == head and row.trained.held_out_count == hs.Count(int(total), 4)


def test_pair_study_against_loops():
    margins = RNG.normal(size=(10, 2, L, H))
    margins[:, 1, 1, 1] = -margins[:, 0, 1, 1]  # head L1H1 prefers the same noun in both sentences of every pair
    control = RNG.normal(size=(10, 2, L, H))
    study = pm.pair_study(margins, control, seed=3, draws=400)
    right = np.zeros((L, H))
    for p in range(10):
        for s in range(2):
            right += margins[p, s] > 0
    np.testing.assert_allclose(study.accuracy, right / 20)
    best = np.unravel_index(int(np.argmax(right)), right.shape)
    assert study.best == best and study.best_count == hs.Count(int(right[best]), 20)
    assert study.accuracy[1, 1] == 0.5 and study.same_noun_heads >= 1
    assert study.half_cells == int((right == 10).sum())
    # the chance level: the same draws, scored head by head in a loop
    flips = np.random.default_rng(3).choice(np.array([-1.0, 1.0]), size=(400, 10))
    bests = []
    for f in flips:
        scores = []
        for l in range(L):
            for h in range(H):
                signed = [(np.sign(margins[p, 0, l, h]) + np.sign(margins[p, 1, l, h])) / 2 * f[p] for p in range(10)]
                scores.append((1 + sum(signed) / 10) / 2)
        bests.append(max(scores))
    assert study.chance.mean == pytest.approx(np.mean(bests))
    assert study.chance.p_value == pytest.approx(np.mean(np.array(bests) >= right.max() / 20 - 1e-12))


def test_referent_study_counts_each_target_for_a_head_chosen_elsewhere():
    sets = tiny_sets()
    mine = outcomes(sets, 5)
    study = pm.referent_study(mine, sets, (1, 2))
    for target, which in (("referent", [0 if it.answer == "x" else 1 for it in sets.it_referent]),
                          ("first_noun", [0] * 8),
                          ("subject", [0 if it.subject == "x" else 1 for it in sets.it_referent])):
        k = sum(mine.referent[1, 2, i, which[i]] > mine.referent[1, 2, i, 1 - which[i]] for i in range(8))
        assert study.counts[target] == hs.Count(int(k), 8)
    assert study.person_items == 0 and study.subject_among_rest.n == 8
