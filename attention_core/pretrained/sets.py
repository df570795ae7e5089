"""Lesson 8's built-in sentences: data/pretrained.toml (presets, the catalogue's kinds, the Winograd pairs) and
data/pretrained_pronouns.toml (the agreement minimal pairs, the balanced "it" set), validated on loading
(PresetError names the file and the field). Words are whitespace-separated units counted from 0.
attention_core.pretrained.measure runs a model on them.
"""

from __future__ import annotations

from dataclasses import dataclass

from attention_core.presets import Checker, read_preset

PRESET_NAME = "pretrained"
PRONOUNS_NAME = "pretrained_pronouns"
KINDS = ("previous_token", "next_token", "sink", "subject_verb", "determiner_noun")
PAIRLESS_KINDS = ("sink",)  # every word's row, scored by its weight on [CLS]


@dataclass(frozen=True)
class AnnotatedSentence:
    """A sentence of the catalogue and its (from word, to word) pairs (empty for the sink)."""

    text: str
    pairs: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class MinimalPair:
    """Two sentences differing in one word; the pronoun of each, the two candidate nouns, the right one in each.

    Winograd pairs switch an adjective (the pronoun is the same); agreement pairs switch the pronoun itself."""

    sentences: tuple[str, str]
    pronouns: tuple[str, str]
    candidates: tuple[str, str]
    answers: tuple[str, str]

    def word_index(self, sentence: int, word: str) -> int:
        return self.sentences[sentence].split().index(word)

    @property
    def answer_indices(self) -> tuple[int, int]:
        """-> which candidate (0 or 1) is right in each sentence."""
        return self.candidates.index(self.answers[0]), self.candidates.index(self.answers[1])


@dataclass(frozen=True)
class ReferentItem:
    """One sentence with "it", two candidate nouns (in sentence order), the one it refers to, and the subject."""

    text: str
    pronoun: str
    candidates: tuple[str, str]
    answer: str
    subject: str
    person: str | None = None

    def word_index(self, word: str) -> int:
        return self.text.split().index(word)

    @property
    def group(self) -> tuple[bool, bool]:
        """-> (the answer is the first noun, the first noun is the subject): the strata of the split."""
        return self.answer == self.candidates[0], self.subject == self.candidates[0]


@dataclass(frozen=True)
class PretrainedSets:
    presets: tuple[str, ...]
    kinds: dict[str, tuple[AnnotatedSentence, ...]]
    winograd: tuple[MinimalPair, ...]
    agreement: tuple[MinimalPair, ...]
    it_referent: tuple[ReferentItem, ...]


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


def _minimal_pair(check: Checker, item: dict, where: str, same_pronoun: bool) -> MinimalPair:
    sentences = _two_texts(check, item, "sentences", where)
    a, b = (s.split() for s in sentences)
    if len(a) != len(b) or sum(x != y for x, y in zip(a, b)) != 1:
        check.fail(f"{where}.sentences", "the two sentences must have the same words but one")
    if same_pronoun:
        pronoun = check.text(item, "pronoun", where)
        pronouns = (pronoun, pronoun)
    else:  # the pronoun is the word that differs
        pronouns = next((x, y) for x, y in zip(a, b) if x != y)
    candidates = _two_texts(check, item, "candidates", where)
    answers = _two_texts(check, item, "answers", where)
    for words, pronoun in ((a, pronouns[0]), (b, pronouns[1])):
        for word, field in [(pronoun, "pronoun"), *((c, "candidates") for c in candidates)]:
            if words.count(word) != 1:
                check.fail(f"{where}.{field}", f"{word!r} must be exactly one word of each sentence")
    if candidates[0] == candidates[1]:
        check.fail(f"{where}.candidates", "must be two different words")
    if not all(ans in candidates for ans in answers) or answers[0] == answers[1]:
        check.fail(f"{where}.answers", "must name a different one of the candidates for each sentence")
    return MinimalPair(sentences, pronouns, candidates, answers)


def _referent(check: Checker, item: dict, where: str) -> ReferentItem:
    text = check.text(item, "text", where)
    words = _words(check, text, f"{where}.text")
    pronoun = item.get("pronoun", "it")
    candidates = _two_texts(check, item, "candidates", where)
    answer, subject = check.text(item, "answer", where), check.text(item, "subject", where)
    for word, field in ((pronoun, "pronoun"), *((c, "candidates") for c in candidates)):
        if words.count(word) != 1:
            check.fail(f"{where}.{field}", f"{word!r} must be exactly one word of the sentence")
    if not words.index(candidates[0]) < words.index(candidates[1]):
        check.fail(f"{where}.candidates", "must be given in sentence order")
    if answer not in candidates or subject not in candidates:
        check.fail(f"{where}.answer", "the answer and the subject must each be one of the candidates")
    person = item.get("person")
    if person is not None and (person not in candidates or person == answer):
        check.fail(f"{where}.person", "must be the candidate that is not the answer")
    return ReferentItem(text, pronoun, candidates, answer, subject, person)


def _validate_pronouns(parsed: dict, check: Checker) -> tuple[tuple[MinimalPair, ...], tuple[ReferentItem, ...]]:
    agreement = tuple(_minimal_pair(check, item, f"agreement[{i}]", same_pronoun=False)
                      for i, item in enumerate(check.table_list(parsed, "agreement", min_len=2)))
    referent = tuple(_referent(check, item, f"it_referent[{i}]")
                     for i, item in enumerate(check.table_list(parsed, "it_referent", min_len=2)))
    return agreement, referent


def _validate(parsed: dict, check: Checker) -> PretrainedSets:
    presets = tuple(check.text(item, "text", f"presets[{i}]")
                    for i, item in enumerate(check.table_list(parsed, "presets")))
    kinds_table = check.get(parsed, "kinds", dict)
    if sorted(kinds_table) != sorted(KINDS):
        check.fail("kinds", f"must hold exactly the kinds {', '.join(KINDS)}; got {', '.join(kinds_table)}")
    kinds = {kind: _kind(check, check.get(kinds_table, kind, dict, "kinds"), kind) for kind in KINDS}
    pairs = tuple(_minimal_pair(check, item, f"winograd[{i}]", same_pronoun=True)
                  for i, item in enumerate(check.table_list(parsed, "winograd", min_len=2)))
    return presets, kinds, pairs


def load_pretrained_sets(data_dir=None) -> PretrainedSets:
    """-> data/pretrained.toml and data/pretrained_pronouns.toml validated; else PresetError."""
    presets, kinds, winograd = read_preset(PRESET_NAME, _validate, data_dir)
    agreement, referent = read_preset(PRONOUNS_NAME, _validate_pronouns, data_dir)
    return PretrainedSets(presets, kinds, winograd, agreement, referent)
