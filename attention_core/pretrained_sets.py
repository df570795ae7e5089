"""Lesson 8's built-in sentences (data/pretrained.toml) and the measurements run on them through a model.

Loading validates the file (PresetError names the file and the field). ``head_catalogue``, ``winograd_study``,
``pair_twin_test`` and ``featured_link`` run a model (trained or its twin) on the sets and hand the attention to the
pure analyses of attention_core.pretrained_heads; ``set_results`` makes all of them from one forward pass per text.
Words are whitespace-separated units counted from 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from attention_core import pretrained_heads as heads
from attention_core.presets import Checker, read_preset
from attention_core.pretrained import Model, Reading, read_text, read_texts

PRESET_NAME = "pretrained"
KINDS = ("previous_token", "next_token", "sink", "pronoun_agreement", "subject_verb", "determiner_noun",
         "it_first_noun")
PAIRLESS_KINDS = ("sink",)  # every word's row, scored by its weight on [CLS]


@dataclass(frozen=True)
class AnnotatedSentence:
    """A sentence of the catalogue and its (from word, to word) pairs (empty for the sink)."""

    text: str
    pairs: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class WinogradPair:
    """Two sentences differing in one word; the pronoun, the two candidate nouns, the right one in each."""

    sentences: tuple[str, str]
    pronoun: str
    candidates: tuple[str, str]
    answers: tuple[str, str]

    def word_index(self, sentence: int, word: str) -> int:
        return self.sentences[sentence].split().index(word)


@dataclass(frozen=True)
class PretrainedSets:
    presets: tuple[str, ...]
    kinds: dict[str, tuple[AnnotatedSentence, ...]]
    winograd: tuple[WinogradPair, ...]


@dataclass(frozen=True)
class CatalogueEntry:
    """One kind of head: scores (L, H) over its set, the best head and its score (and accuracy if it has one)."""

    kind: str
    scores: heads.KindScores
    best: heads.HeadWeight
    best_accuracy: float | None
    sentences: int


def _words(check: Checker, text: str, where: str) -> list[str]:
    words = text.split()
    if not words:
        check.fail(where, "must hold at least one word")
    return words


def _pairs(check: Checker, item: dict, words: list[str], where: str) -> tuple[tuple[int, int], ...]:
    pairs = check.get(item, "pairs", list, where)
    if not pairs:
        check.fail(f"{where}.pairs", "must hold at least one [from, to] pair")
    out = []
    for k, pair in enumerate(pairs):
        spot = f"{where}.pairs[{k}]"
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(i, int) and not isinstance(i, bool) for i in pair)):
            check.fail(spot, "must be [from word index, to word index]")
        if not all(0 <= i < len(words) for i in pair):
            check.fail(spot, f"word indices must lie in 0..{len(words) - 1} (the sentence has {len(words)} words)")
        if pair[0] == pair[1]:
            check.fail(spot, "must link two different words")
        out.append((pair[0], pair[1]))
    return tuple(out)


def _kind(check: Checker, table: dict, kind: str) -> tuple[AnnotatedSentence, ...]:
    where = f"kinds.{kind}"
    items = check.table_list(table, "sentences", where)
    out = []
    for i, item in enumerate(items):
        spot = f"{where}.sentences[{i}]"
        text = check.text(item, "text", spot)
        words = _words(check, text, f"{spot}.text")
        if kind in PAIRLESS_KINDS:
            if "pairs" in item:
                check.fail(f"{spot}.pairs", f"the {kind} kind scores every word: give no pairs")
            out.append(AnnotatedSentence(text, ()))
        else:
            out.append(AnnotatedSentence(text, _pairs(check, item, words, spot)))
    return tuple(out)


def _two_texts(check: Checker, item: dict, key: str, where: str) -> tuple[str, str]:
    values = check.get(item, key, list, where)
    if len(values) != 2 or not all(isinstance(v, str) and v.strip() for v in values):
        check.fail(f"{where}.{key}", "must be two non-empty strings")
    return values[0], values[1]


def _winograd(check: Checker, item: dict, where: str) -> WinogradPair:
    sentences = _two_texts(check, item, "sentences", where)
    a, b = (s.split() for s in sentences)
    if len(a) != len(b) or sum(x != y for x, y in zip(a, b)) != 1:
        check.fail(f"{where}.sentences", "the two sentences must have the same words but one")
    pronoun = check.text(item, "pronoun", where)
    candidates = _two_texts(check, item, "candidates", where)
    answers = _two_texts(check, item, "answers", where)
    for word, field in [(pronoun, "pronoun"), *((c, "candidates") for c in candidates)]:
        if a.count(word) != 1 or b.count(word) != 1:
            check.fail(f"{where}.{field}", f"{word!r} must be exactly one word of each sentence")
    if candidates[0] == candidates[1]:
        check.fail(f"{where}.candidates", "must be two different words")
    if not all(ans in candidates for ans in answers) or answers[0] == answers[1]:
        check.fail(f"{where}.answers", "must name a different one of the candidates for each sentence")
    return WinogradPair(sentences, pronoun, candidates, answers)


def _validate(parsed: dict, check: Checker) -> PretrainedSets:
    presets = tuple(check.text(item, "text", f"presets[{i}]")
                    for i, item in enumerate(check.table_list(parsed, "presets")))
    kinds_table = check.get(parsed, "kinds", dict)
    if sorted(kinds_table) != sorted(KINDS):
        check.fail("kinds", f"must hold exactly the kinds {', '.join(KINDS)}; got {', '.join(kinds_table)}")
    kinds = {kind: _kind(check, check.get(kinds_table, kind, dict, "kinds"), kind) for kind in KINDS}
    pairs = tuple(_winograd(check, item, f"winograd[{i}]")
                  for i, item in enumerate(check.table_list(parsed, "winograd", min_len=2)))
    return PretrainedSets(presets, kinds, pairs)


def load_pretrained_sets(data_dir=None) -> PretrainedSets:
    """-> data/pretrained.toml validated: presets, the catalogue's kinds, the Winograd pairs; else PresetError."""
    return read_preset(PRESET_NAME, _validate, data_dir)


# ---------------------------------------------------------------- running a model on the sets
#
# Each function takes ``readings``, {text: Reading} of this model, to reuse forward passes made already (set_results
# reads every text of the sets once); a text not in it is read here.

Readings = Mapping[str, Reading]


def _reading(text: str, model: Model, readings: Readings | None) -> Reading:
    found = None if readings is None else readings.get(text)
    return read_text(text, model) if found is None else found


def _spanned(text: str, pairs, model: Model, hide_special: bool, readings: Readings | None = None):
    reading = _reading(text, model, readings)
    attention = heads.hide_special(reading.attentions, reading.token_texts) if hide_special else reading.attentions
    return attention, heads.SpannedSentence(tuple((w.first, w.stop) for w in reading.words), tuple(pairs))


def head_catalogue(model: Model, sets: PretrainedSets, hide_special: bool = False,
                   readings: Readings | None = None) -> dict[str, CatalogueEntry]:
    """model, sets -> {kind: CatalogueEntry} in KINDS order; ``hide_special`` renormalises without [CLS]/[SEP]
    first (never for the sink, whose target is [CLS])."""
    out = {}
    for kind in KINDS:
        hide = hide_special and kind not in PAIRLESS_KINDS
        runs = [_spanned(s.text, s.pairs, model, hide, readings) for s in sets.kinds[kind]]
        attentions, spanned = [a for a, _ in runs], [s for _, s in runs]
        scores = (heads.sink_scores if kind in PAIRLESS_KINDS else heads.pair_scores)(attentions, spanned)
        best = heads.best_head(scores.mean_weight)
        accuracy = None if scores.accuracy is None else float(scores.accuracy[best.layer, best.head])
        out[kind] = CatalogueEntry(kind, scores, best, accuracy, len(spanned))
    return out


def pair_twin_test(model: Model, pair: WinogradPair, hide_special: bool = False,
                   readings: Readings | None = None) -> heads.TwinTest:
    """model, one Winograd pair -> TwinTest: every head's weight from the pronoun to both candidates, twice."""
    attentions, pronouns, candidates = [], [], []
    for s in range(2):
        attention, spanned = _spanned(pair.sentences[s], (), model, hide_special, readings)
        attentions.append(attention)
        pronouns.append(spanned.words[pair.word_index(s, pair.pronoun)])
        candidates.append([spanned.words[pair.word_index(s, c)] for c in pair.candidates])
    answers = (pair.candidates.index(pair.answers[0]), pair.candidates.index(pair.answers[1]))
    return heads.twin_test(attentions, pronouns, candidates, answers)


def winograd_margins(model: Model, sets: PretrainedSets, hide_special: bool = False,
                     readings: Readings | None = None) -> np.ndarray:
    """model, sets -> (P, 2, L, H) right-minus-wrong weight from the pronoun, per pair, sentence and head."""
    return np.stack([pair_twin_test(model, pair, hide_special, readings).margins for pair in sets.winograd])


def winograd_study(model: Model, sets: PretrainedSets, hide_special: bool = False,
                   readings: Readings | None = None) -> heads.WinogradScores:
    """model, sets -> WinogradScores per head over the file's Winograd pairs."""
    return heads.winograd_scores(winograd_margins(model, sets, hide_special, readings))


def featured_link(model: Model, pair: WinogradPair, readings: Readings | None = None) -> heads.HeadWeight:
    """model, a Winograd pair -> the head with most weight from its pronoun to its first candidate in sentence 0."""
    reading = _reading(pair.sentences[0], model, readings)
    words = [(w.first, w.stop) for w in reading.words]
    return heads.rank_heads(reading.attentions, words[pair.word_index(0, pair.pronoun)],
                            words[pair.word_index(0, pair.candidates[0])])[0]


def set_texts(sets: PretrainedSets) -> tuple[str, ...]:
    """sets -> every distinct text the measurements read (the catalogue's sentences, both of each Winograd pair)."""
    texts = [s.text for kind in KINDS for s in sets.kinds[kind]]
    texts += [text for pair in sets.winograd for text in pair.sentences]
    return tuple(dict.fromkeys(texts))


@dataclass(frozen=True)
class SetResults:
    """One model on the built-in sets: the featured pair's best head and twin test (the first Winograd pair), the
    catalogue with raw weights and with [CLS]/[SEP] hidden, and the Winograd margins (P, 2, L, H)."""

    featured: heads.HeadWeight
    featured_test: heads.TwinTest
    catalogue: dict[str, CatalogueEntry]
    catalogue_hidden: dict[str, CatalogueEntry]
    margins: np.ndarray


def set_results(model: Model, sets: PretrainedSets) -> SetResults:
    """model, sets -> SetResults, every text of the sets through the model once, all together (read_texts)."""
    texts = set_texts(sets)
    readings = dict(zip(texts, read_texts(texts, model)))
    pair = sets.winograd[0]
    return SetResults(featured_link(model, pair, readings), pair_twin_test(model, pair, readings=readings),
                      head_catalogue(model, sets, False, readings), head_catalogue(model, sets, True, readings),
                      winograd_margins(model, sets, readings=readings))
