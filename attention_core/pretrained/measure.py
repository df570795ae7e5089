"""Lesson 8's measurements: a model (trained or its untrained copy) run on the built-in sets, every head claim picked
on one split and scored on the other (attention_core.measure.head_stats), with counts, Wilson intervals, baselines and the
chance level of the best of N heads.

``set_outcomes(model, sets)`` reads every text once and keeps per-item outcomes (pure arrays); the ``*_rows`` /
``*_study`` functions turn the outcomes of the model and of its untrained copy into what the page shows. Splits:
``SPLIT_FRACTION`` of each stratum, in file order (head_stats.split), stated by ``Split.rule``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from attention_core.measure import head_stats as hs
from attention_core.pretrained import heads
from attention_core.pretrained import Model, Reading, read_text, read_texts
from attention_core.pretrained.sets import KINDS, PAIRLESS_KINDS, MinimalPair, PretrainedSets

SPLIT_FRACTION = 0.5
CHANCE_SEED = 0
CHANCE_DRAWS = 5000
ROWS = (*KINDS, "pronoun_agreement", "it_referent")  # the catalogue's rows, in order
RULE_OF_KIND = {"subject_verb": "next_word", "determiner_noun": "next_word", "pronoun_agreement": "first_noun",
                "it_referent": "first_noun"}  # the positional rule each kind is compared with

Readings = Mapping[str, Reading]


# ---------------------------------------------------------------- per-item outcomes of one model

@dataclass(frozen=True)
class KindOutcomes:
    """One kind over its set: scores (L, H, items) (hits 0/1, or weights for the sink), the sentence of each item,
    and for pair kinds the (source, target) word indices of each item."""

    scores: np.ndarray
    sentence: np.ndarray
    links: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class SetOutcomes:
    """A model on the sets: kinds {kind: KindOutcomes}; margins (P, 2, L, H) right-minus-wrong weight from the pronoun
    for the Winograd and the agreement pairs; referent (L, H, I, 2) weight from "it" to its two candidates."""

    kinds: dict[str, KindOutcomes]
    winograd: np.ndarray
    agreement: np.ndarray
    referent: np.ndarray


def _reading(text: str, model: Model, readings: Readings | None) -> Reading:
    found = None if readings is None else readings.get(text)
    return read_text(text, model) if found is None else found


def _spans(reading: Reading) -> list[tuple[int, int]]:
    return [(w.first, w.stop) for w in reading.words]


def pair_margins(model: Model, pairs, readings: Readings | None = None) -> np.ndarray:
    """model, P MinimalPairs -> (P, 2, L, H) right-minus-wrong weight from the pronoun, per pair and sentence."""
    return np.stack([minimal_pair(model, pair, readings).margins for pair in pairs])


def minimal_pair(model: Model, pair: MinimalPair, readings: Readings | None = None) -> heads.MinimalPairTest:
    """model, one pair -> MinimalPairTest: every head's weight from the pronoun to both candidates, twice."""
    attentions, pronouns, candidates = [], [], []
    for s in range(2):
        reading = _reading(pair.sentences[s], model, readings)
        spans = _spans(reading)
        attentions.append(reading.attentions)
        pronouns.append(spans[pair.word_index(s, pair.pronouns[s])])
        candidates.append([spans[pair.word_index(s, c)] for c in pair.candidates])
    return heads.minimal_pair_test(attentions, pronouns, candidates, pair.answer_indices)


def set_texts(sets: PretrainedSets) -> tuple[str, ...]:
    """sets -> every distinct text the measurements read."""
    texts = [s.text for kind in KINDS for s in sets.kinds[kind]]
    texts += [text for pair in (*sets.winograd, *sets.agreement) for text in pair.sentences]
    texts += [item.text for item in sets.it_referent]
    return tuple(dict.fromkeys(texts))


def set_outcomes(model: Model, sets: PretrainedSets) -> SetOutcomes:
    """model, sets -> SetOutcomes, every text of the sets through the model once (read_texts)."""
    texts = set_texts(sets)
    readings = dict(zip(texts, read_texts(texts, model)))
    kinds = {}
    for kind in KINDS:
        found = [readings[s.text] for s in sets.kinds[kind]]
        spanned = [heads.SpannedSentence(tuple(_spans(r)), s.pairs) for r, s in zip(found, sets.kinds[kind])]
        attentions = [r.attentions for r in found]
        if kind in PAIRLESS_KINDS:
            scores, sentence = heads.sink_outcomes(attentions, spanned)
            links = ()
        else:
            scores, _, sentence = heads.pair_outcomes(attentions, spanned)
            links = tuple(link for s in sets.kinds[kind] for link in s.pairs)
        kinds[kind] = KindOutcomes(scores.astype(np.float64), sentence, links)
    referent = []
    for item in sets.it_referent:
        reading = readings[item.text]
        spans = _spans(reading)
        referent.append(heads.word_weights(reading.attentions, spans[item.word_index(item.pronoun)],
                                           [spans[item.word_index(c)] for c in item.candidates]))
    return SetOutcomes(kinds, pair_margins(model, sets.winograd, readings),
                       pair_margins(model, sets.agreement, readings),
                       np.stack(referent, axis=2))


# ---------------------------------------------------------------- the catalogue: picked on one half, scored on the rest

@dataclass(frozen=True)
class CatalogueRow:
    """One kind: the split, the trained model's and the untrained copy's head picked on one half and scored on the
    other, and a positional rule's score on the same held-out items (None where no rule applies)."""

    kind: str
    split: hs.Split
    trained: hs.HeldOut
    untrained: hs.HeldOut
    rule: str | None
    baseline: hs.Count | None
    items: int


def item_split(sentence_of_item, fraction: float = SPLIT_FRACTION, strata=None) -> hs.Split:
    """sentence (items,) -> Split of the items that keeps each sentence's items on one side (sentences split)."""
    sentence_of_item = np.asarray(sentence_of_item)
    sentences = list(dict.fromkeys(sentence_of_item.tolist()))
    by_sentence = hs.split(len(sentences), fraction, strata)
    pick = {sentences[i] for i in by_sentence.pick_idx}
    pick_idx = tuple(int(i) for i in np.flatnonzero(np.isin(sentence_of_item, list(pick))))
    score_idx = tuple(int(i) for i in np.flatnonzero(~np.isin(sentence_of_item, list(pick))))
    return hs.Split(pick_idx, score_idx, f"by sentence: {by_sentence.rule}")


def referent_scores(referent, targets) -> np.ndarray:
    """referent: (L, H, I, 2), targets: (I,) 0 or 1 -> (L, H, I) 1 where the target gets strictly more weight."""
    referent = np.asarray(referent)
    targets = np.asarray(targets)
    right = np.take_along_axis(referent, targets[None, None, :, None], axis=-1)[..., 0]
    wrong = np.take_along_axis(referent, 1 - targets[None, None, :, None], axis=-1)[..., 0]
    return (right > wrong).astype(np.float64)


def referent_targets(sets: PretrainedSets) -> dict[str, np.ndarray]:
    """-> {target: (I,) which candidate it is}: the referent, the first noun (always 0), the subject."""
    items = sets.it_referent
    return {"referent": np.array([it.candidates.index(it.answer) for it in items]),
            "first_noun": np.zeros(len(items), dtype=int),
            "subject": np.array([it.candidates.index(it.subject) for it in items])}


def referent_split(sets: PretrainedSets) -> hs.Split:
    return hs.split(len(sets.it_referent), SPLIT_FRACTION, [item.group for item in sets.it_referent])


def catalogue_rows(trained: SetOutcomes, untrained: SetOutcomes, sets: PretrainedSets) -> dict[str, CatalogueRow]:
    """The outcomes of the model and of its untrained copy -> {kind: CatalogueRow} in ROWS order."""
    rows = {}
    for kind in KINDS:
        mine, control = trained.kinds[kind], untrained.kinds[kind]
        split = item_split(mine.sentence)
        rule = RULE_OF_KIND.get(kind)
        baseline = None
        if rule == "next_word":
            held = [mine.links[i] for i in split.score_idx]
            baseline = hs.rule_baseline([source + 1 for source, _ in held], [target for _, target in held])
        rows[kind] = CatalogueRow(kind, split, hs.pick_on_score_on(mine.scores, split.pick_idx, split.score_idx),
                                  hs.pick_on_score_on(control.scores, split.pick_idx, split.score_idx),
                                  rule, baseline, mine.scores.shape[-1])
    split = hs.split(len(sets.agreement), SPLIT_FRACTION)
    first = [0, 0] * len(split.score_idx)  # "the first noun" in both sentences of every held-out pair
    answers = [a for i in split.score_idx for a in sets.agreement[i].answer_indices]
    rows["pronoun_agreement"] = CatalogueRow(
        "pronoun_agreement", split,
        hs.pick_on_score_on(heads.sentence_hits(trained.agreement), split.pick_idx, split.score_idx, 2),
        hs.pick_on_score_on(heads.sentence_hits(untrained.agreement), split.pick_idx, split.score_idx, 2),
        "first_noun", hs.rule_baseline(first, answers), 2 * len(sets.agreement))
    split = referent_split(sets)
    targets = referent_targets(sets)["referent"]
    rows["it_referent"] = CatalogueRow(
        "it_referent", split,
        hs.pick_on_score_on(referent_scores(trained.referent, targets), split.pick_idx, split.score_idx),
        hs.pick_on_score_on(referent_scores(untrained.referent, targets), split.pick_idx, split.score_idx),
        "first_noun", hs.rule_baseline([0] * len(split.score_idx), [int(targets[i]) for i in split.score_idx]),
        len(sets.it_referent))
    return rows


# ---------------------------------------------------------------- minimal pairs: Winograd and agreement

@dataclass(frozen=True)
class PairStudy:
    """Heads over P minimal pairs (2 P sentences; a sentence is right when the right noun gets strictly more weight).

    accuracy: (L, H) each head's share of the 2 P sentences (the map); best / best_count: the best head over all of
    them, to be read against ``chance`` (the best of L * H heads under per-pair flips of the answer); held_out: a
    head picked on ``split``'s pick pairs, counted on the others; untrained_*: the same for the untrained copy;
    half_cells: heads at exactly 50 %; same_noun_heads: heads preferring the same noun in both sentences of every pair.
    """

    accuracy: np.ndarray
    pairs: int
    best: tuple[int, ...]
    best_count: hs.Count
    mean: float
    chance: hs.ChanceOfBest
    split: hs.Split
    held_out: hs.HeldOut
    untrained_held_out: hs.HeldOut
    half_cells: int
    same_noun_heads: int


def pair_study(margins, untrained_margins, seed: int = CHANCE_SEED, draws: int = CHANCE_DRAWS) -> PairStudy:
    """margins, untrained_margins: (P, 2, L, H) -> PairStudy (splits: head_stats.split of the P pairs)."""
    hits, signed = heads.sentence_hits(margins), heads.signed_pair_outcomes(margins)
    control = heads.sentence_hits(untrained_margins)
    pairs = hits.shape[-1]
    accuracy = hits.mean(axis=-1)
    best = tuple(int(i) for i in np.unravel_index(int(np.argmax(accuracy)), accuracy.shape))
    right = (np.asarray(margins) > 0).sum(axis=(0, 1))  # (L, H) right sentences
    split = hs.split(pairs, SPLIT_FRACTION)
    chance = hs.best_of_n_chance(signed, seed, draws, observed=float(accuracy.max()))
    return PairStudy(accuracy, pairs, best, hs.Count(int(right[best]), 2 * pairs), float(accuracy.mean()), chance,
                     split, hs.pick_on_score_on(hits, split.pick_idx, split.score_idx, 2),
                     hs.pick_on_score_on(control, split.pick_idx, split.score_idx, 2),
                     int(np.isclose(accuracy, 0.5).sum()), int((signed == 0).all(axis=-1).sum()))


# ---------------------------------------------------------------- the "it" head, by what holds out

@dataclass(frozen=True)
class ReferentStudy:
    """A head chosen elsewhere (on the famous sentence) over the whole "it" set, none of whose sentences chose it:
    counts {target: Count} for the referent, the first noun and the subject; how many sentences grammar alone
    decides (the other noun is a person) and in how many of the rest the referent is also the subject."""

    head: tuple[int, int]
    counts: dict[str, hs.Count]
    items: int
    person_items: int
    subject_among_rest: hs.Count


def referent_study(trained: SetOutcomes, sets: PretrainedSets, head: tuple[int, int]) -> ReferentStudy:
    """-> ReferentStudy of ``head`` over sets.it_referent."""
    counts = {}
    for target, which in referent_targets(sets).items():
        scores = referent_scores(trained.referent, which)[head]
        counts[target] = hs.Count(int(scores.sum()), scores.size)
    rest = [item for item in sets.it_referent if item.person is None]
    return ReferentStudy(head, counts, len(sets.it_referent), len(sets.it_referent) - len(rest),
                         hs.Count(sum(item.subject == item.answer for item in rest), len(rest)))


# ---------------------------------------------------------------- one model's results on the sets

def featured_link(model: Model, pair: MinimalPair, readings: Readings | None = None) -> heads.HeadWeight:
    """model, a pair -> the head with most weight from its pronoun to its first candidate in sentence 0."""
    reading = _reading(pair.sentences[0], model, readings)
    spans = _spans(reading)
    return heads.rank_heads(reading.attentions, spans[pair.word_index(0, pair.pronouns[0])],
                            spans[pair.word_index(0, pair.candidates[0])])[0]


def cls_cosines(model: Model, texts) -> np.ndarray:
    """model, 2 texts -> (L,) the cosine between the two texts' [CLS] hidden states at each layer's input."""
    first, second = (r.hidden[:-1, 0].astype(np.float64) for r in read_texts(list(texts), model))
    return (first * second).sum(axis=-1) / (np.linalg.norm(first, axis=-1) * np.linalg.norm(second, axis=-1))


@dataclass(frozen=True)
class SetResults:
    """One model on the built-in sets: the featured head and its minimal pair (the first Winograd pair), every
    per-item outcome, and the [CLS] cosine between the first and the last preset at each layer's input."""

    featured: heads.HeadWeight
    featured_test: heads.MinimalPairTest
    outcomes: SetOutcomes
    cls_cosine: np.ndarray


def set_results(model: Model, sets: PretrainedSets) -> SetResults:
    """model, sets -> SetResults."""
    pair = sets.winograd[0]
    readings = dict(zip(pair.sentences, read_texts(list(pair.sentences), model)))
    return SetResults(featured_link(model, pair, readings), minimal_pair(model, pair, readings),
                      set_outcomes(model, sets), cls_cosines(model, (sets.presets[0], sets.presets[-1])))


@dataclass(frozen=True)
class LessonMeasures:
    """What lesson 8 reports, from the model's and the untrained copy's SetResults."""

    catalogue: dict[str, CatalogueRow]
    winograd: PairStudy
    agreement: PairStudy
    referent: ReferentStudy


def lesson_measures(trained: SetResults, untrained: SetResults, sets: PretrainedSets) -> LessonMeasures:
    mine, control = trained.outcomes, untrained.outcomes
    return LessonMeasures(catalogue_rows(mine, control, sets), pair_study(mine.winograd, control.winograd),
                          pair_study(mine.agreement, control.agreement),
                          referent_study(mine, sets, (trained.featured.layer, trained.featured.head)))
