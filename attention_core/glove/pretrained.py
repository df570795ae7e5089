"""Lesson 6's pronoun sentences through lesson 8's trained model: the same two-way choice our trained head makes.

Each sentence of a pair has the same two candidate nouns (an animal and a place) at the same positions; the choice is
right when the pronoun gives more weight to the right one than to the other. Chance is 50 %.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attention_core.glove.pronouns import PronounSentence
from attention_core.pretrained import Model, read_text
from attention_core.pretrained.heads import span_weight


def candidates(sentences: Sequence[PronounSentence]) -> np.ndarray:
    """m sentences in pair order -> (m, 2) word indices (right noun, other noun), the other from the pair partner."""
    if len(sentences) % 2:
        raise ValueError(f"sentences come in pairs, got {len(sentences)}")
    out = np.empty((len(sentences), 2), dtype=np.int64)
    for i, s in enumerate(sentences):
        partner = sentences[i ^ 1]
        if partner.pair != s.pair or partner.answer_index == s.answer_index:
            raise ValueError(f"sentence {i} and {i ^ 1} are not the two sentences of one pair")
        out[i] = (s.answer_index, partner.answer_index)
    return out


def two_way_rows(rows, choices) -> np.ndarray:
    """rows: (m, n) attention rows of the pronoun over words, choices: (m, 2) -> (m,) True where right > other."""
    rows, choices = np.asarray(rows), np.asarray(choices)
    picked = np.take_along_axis(rows, choices, axis=-1)
    return picked[:, 0] > picked[:, 1]


def choice_weights(model: Model, sentences: Sequence[PronounSentence]) -> np.ndarray:
    """m sentences -> (m, L, H, 2): in every head, the pronoun's weight on (right noun, other noun).

    A word's weight is span_weight: summed over its WordPiece tokens, averaged over the pronoun's.
    """
    choices = candidates(sentences)
    out = []
    for s, (right, other) in zip(sentences, choices):
        reading = read_text(s.text, model)  # words = the sentence's whitespace-separated tokens, in order
        words = reading.words
        if len(words) != len(s.tokens):
            raise ValueError(f"{s.text!r}: {len(words)} words for {len(s.tokens)} tokens")
        span = lambda i: (words[i].first, words[i].stop)  # noqa: E731
        source = span(s.pronoun_index)
        out.append(np.stack([span_weight(reading.attentions, source, span(right)),
                             span_weight(reading.attentions, source, span(other))], axis=-1))
    return np.stack(out)


def two_way_accuracy(weights) -> np.ndarray:
    """weights: (m, L, H, 2) -> (L, H) the share of the m sentences where the right noun gets more weight."""
    weights = np.asarray(weights)
    return (weights[..., 0] > weights[..., 1]).mean(axis=0)


def picked_head(train_weights, held_weights) -> tuple[int, int, float, float]:
    """(m, L, H, 2) on training and held-out sentences -> (layer, head, training accuracy, held-out accuracy) of the
    head with the best training accuracy (ties: the first in layer, head order): chosen without seeing held-out."""
    train = two_way_accuracy(train_weights)
    layer, head = np.unravel_index(int(np.argmax(train)), train.shape)
    return int(layer), int(head), float(train[layer, head]), float(two_way_accuracy(held_weights)[layer, head])
