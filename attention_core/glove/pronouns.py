"""The pronoun sentences of lesson 6 (d): data/glove.toml -> validated, tokenised sentences.

A template such as "the {animal} did not cross the {place} because it was too {adjective}" is
filled twice per pair: with an animal adjective ("tired") the pronoun refers to the animal, with a
place adjective ("wide") to the place. Pair i takes entry (i mod length) of every list. Any
problem in the file raises PresetError naming the file and the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from attention_core.presets import Checker, read_preset
from attention_core.text import tokenize

PRESET_NAME = "glove"
SPLITS = ("train", "held_out")
SLOTS = ("animal", "place", "adjective")
WORD_LISTS = ("animals", "places", "animal_adjectives", "place_adjectives")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class PronounSentence:
    """One sentence: its tokens, where the pronoun is, and which token it refers to."""

    tokens: tuple[str, ...]
    pronoun_index: int
    answer_index: int
    referent: str  # "animal" or "place": the slot the pronoun refers to
    split: str  # "train" or "held_out"
    pair: int  # the two sentences of one pair share template, animal and place

    @property
    def text(self) -> str:
        return " ".join(self.tokens)

    @property
    def answer(self) -> str:
        return self.tokens[self.answer_index]


@dataclass(frozen=True)
class PronounDataset:
    """The pronoun and the two splits, each a tuple of sentences in pair order (animal sentence first)."""

    pronoun: str
    train: tuple[PronounSentence, ...]
    held_out: tuple[PronounSentence, ...]
    words: dict  # split -> list name -> tuple of words (for "seen in training?" checks)

    def training_words(self) -> set[str]:
        """-> every token that occurs in a training sentence."""
        return {tok for s in self.train for tok in s.tokens}


def _word_list(check: Checker, table: dict, key: str, path: str) -> tuple[str, ...]:
    where = f"{path}.{key}"
    words = check.get(table, key, list, path)
    if not words or not all(isinstance(w, str) for w in words):
        check.fail(where, "must be a non-empty list of words (strings)")
    for i, word in enumerate(words):
        if tokenize(word) != [word]:
            check.fail(f"{where}[{i}]", f"{word!r} must be one lowercase word that tokenises to itself")
    if len(set(words)) != len(words):
        check.fail(where, "words must not repeat")
    return tuple(words)


def _template(check: Checker, text: str, where: str, pronoun: str) -> str:
    slots = _PLACEHOLDER.findall(text)
    if sorted(slots) != sorted(SLOTS):
        check.fail(where, f"must contain each of {{animal}}, {{place}}, {{adjective}} exactly once, found {slots}")
    if text.count("{") != 3 or text.count("}") != 3:
        check.fail(where, "must not contain braces other than the three slots")
    tokens = tokenize(text.format(animal="xanimalx", place="xplacex", adjective="xadjx"))
    if tokens.count(pronoun) != 1:
        check.fail(where, f"the pronoun {pronoun!r} must occur exactly once as a word, found {tokens.count(pronoun)}")
    return text


def _fill(template: str, animal: str, place: str, adjective: str, referent: str, split: str, pair: int,
          pronoun: str, check: Checker, where: str) -> PronounSentence:
    tokens = tuple(tokenize(template.format(animal=animal, place=place, adjective=adjective)))
    answer = animal if referent == "animal" else place
    if tokens.count(answer) != 1 or tokens.count(pronoun) != 1:
        check.fail(where, f"the filled sentence {' '.join(tokens)!r} must contain {answer!r} and {pronoun!r} exactly once")
    return PronounSentence(tokens, tokens.index(pronoun), tokens.index(answer), referent, split, pair)


def build_split(split: str, templates, words: dict, n_pairs: int, pronoun: str,
                check: Checker | None = None) -> tuple[PronounSentence, ...]:
    """templates: (T,), words: list name -> words, n_pairs -> (2 * n_pairs,) sentences; pair i uses entry i mod length."""
    check = check or Checker(f"{PRESET_NAME}.toml")
    out = []
    for i in range(n_pairs):
        template = templates[i % len(templates)]
        animal = words["animals"][i % len(words["animals"])]
        place = words["places"][i % len(words["places"])]
        where = f"templates[{i % len(templates)}] ({split} pair {i})"
        for referent, adjectives in (("animal", words["animal_adjectives"]), ("place", words["place_adjectives"])):
            adjective = adjectives[i % len(adjectives)]
            out.append(_fill(template, animal, place, adjective, referent, split, i, pronoun, check, where))
    return tuple(out)


def _validate(parsed: dict, check: Checker) -> PronounDataset:
    pronoun = check.text(parsed, "pronoun")
    if tokenize(pronoun) != [pronoun]:
        check.fail("pronoun", f"{pronoun!r} must be one lowercase word")
    raw_templates = check.get(parsed, "templates", list)
    if not raw_templates or not all(isinstance(x, str) for x in raw_templates):
        check.fail("templates", "must be a non-empty list of strings")
    templates = [_template(check, x, f"templates[{i}]", pronoun) for i, x in enumerate(raw_templates)]
    splits, words = {}, {}
    for split in SPLITS:
        table = check.get(parsed, split, dict)
        n_pairs = check.get(table, "pairs", int, split)
        if n_pairs < 1:
            check.fail(f"{split}.pairs", f"must be at least 1, got {n_pairs}")
        words[split] = {name: _word_list(check, table, name, split) for name in WORD_LISTS}
        splits[split] = build_split(split, templates, words[split], n_pairs, pronoun, check)
    for name in WORD_LISTS:
        shared = sorted(set(words["train"][name]) & set(words["held_out"][name]))
        if shared:
            check.fail(f"held_out.{name}", f"must not repeat training words, found {shared}")
    return PronounDataset(pronoun, splits["train"], splits["held_out"], words)


def load_pronoun_dataset(data_dir=None) -> PronounDataset:
    """-> the training and held-out pronoun sentences of data/glove.toml."""
    return read_preset(PRESET_NAME, _validate, data_dir)


def pronoun_batch(sentences, kv):
    """sentences: m PronounSentence, kv: GloVe KeyedVectors -> training.SentenceBatch (m, n, 50) with pronoun and answer."""
    from attention_core.glove.vectors import embed
    from attention_core.glove.training import pack_batch

    vectors = []
    for s in sentences:
        X, unknown = embed(list(s.tokens), kv)
        if unknown:
            raise ValueError(f"{PRESET_NAME}.toml: GloVe does not know {unknown} (sentence {s.text!r})")
        vectors.append(X)
    return pack_batch(vectors, [s.pronoun_index for s in sentences], [s.answer_index for s in sentences])


# --- the page's default words: the first pronoun, and a noun before it ------------------------------------------
# Third-person pronouns (they point back to a noun; "I", "you", "we" point at the speakers).
PRONOUNS = ("it", "its", "he", "him", "his", "she", "her", "hers", "they", "them", "their")
PERSON_PRONOUNS = frozenset({"he", "him", "his", "she", "her", "hers"})
DETERMINERS = frozenset({"the", "a", "an"})
_CAPITALISED = re.compile(r"\b[A-Z][\w'-]*")


@dataclass(frozen=True)
class DefaultWords:
    """Where the page starts: the query's and the target's positions in the words, and the rule that chose each."""

    query: int
    target: int
    query_rule: str  # "pronoun" (the first pronoun) or "last_word" (the sentence has none)
    target_rule: str  # "name", "after_determiner" or "first_other"
    names: frozenset = frozenset()  # the capitalised words the rule for he/she looks for


def capitalised_words(text: str) -> frozenset[str]:
    """text -> the lower-cased words written with a capital letter, other than determiners and pronouns ("Mary")."""
    found = {word.lower() for word in _CAPITALISED.findall(text or "")}
    return frozenset(found - DETERMINERS - set(PRONOUNS))


def default_target(words, query_index: int, names=frozenset()) -> tuple[int, str]:
    """words: (n,) tokens, the query's position -> (target position, rule): for he/she/him/her/his the first name
    (capitalised word) before the query; else the first word after "the", "a" or "an" before it; else the first
    word that is not the query's word."""
    query = words[query_index]
    before = range(query_index)
    if query in PERSON_PRONOUNS:
        for i in before:
            if words[i] in names and words[i] != query:
                return i, "name"
    for i in before:
        if i > 0 and words[i - 1] in DETERMINERS and words[i] not in DETERMINERS and words[i] != query:
            return i, "after_determiner"
    others = [i for i, word in enumerate(words) if word != query]
    if not others:
        raise ValueError("the words need at least two different words")
    return others[0], "first_other"


def default_words(words, names=frozenset()) -> DefaultWords:
    """words: (n,) tokens with at least two different words -> DefaultWords: the query is the first pronoun (the
    last word with a letter or digit when there is none), the target default_target's choice for it."""
    words = list(words)
    pronouns = [i for i, word in enumerate(words) if word in PRONOUNS]
    if pronouns:
        query, rule = pronouns[0], "pronoun"
    else:
        worded = [i for i, word in enumerate(words) if any(ch.isalnum() for ch in word)]
        query, rule = (worded or [len(words) - 1])[-1], "last_word"
    target, target_rule = default_target(words, query, names)
    return DefaultWords(query, target, rule, target_rule, frozenset(names))
