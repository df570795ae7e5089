"""What the heads of a model do, measured on its attention weights (L layers, H heads, n tokens): pure functions.

A *span* is a word's tokens [first, stop) (see attention_core.pretrained.wordpiece.Word). The weight from word A to word B
in one head is the sum over B's tokens of the attention, averaged over A's tokens: "didn't" (didn ' t) looking at
"animal" counts the mean of its three rows' weights on "animal"; "it" looking at "didn't" counts the sum of the
three columns. So a word's weights to all the words of its sentence (and [CLS], [SEP]) still sum to 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

Span = tuple[int, int]
SPECIAL_TOKENS = ("[CLS]", "[SEP]")


@dataclass(frozen=True)
class HeadWeight:
    """One head and its weight for a question such as "how much does 'it' look at 'animal'?"."""

    layer: int
    head: int
    weight: float

    @property
    def name(self) -> str:
        return f"L{self.layer}H{self.head}"


@dataclass(frozen=True)
class SpannedSentence:
    """One annotated sentence as token spans: every word's span, and the (from word, to word) pairs to score."""

    words: tuple[Span, ...]
    pairs: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class KindScores:
    """A kind of head over an annotated set: mean weight (L, H) over its items, accuracy (L, H) (None for the sink,
    where the target is [CLS] itself), and the number of items."""

    mean_weight: np.ndarray
    accuracy: np.ndarray | None
    pairs: int


def special_mask(tokens: Sequence[str]) -> np.ndarray:
    """n tokens -> (n,) True at [CLS] and [SEP]."""
    return np.array([t in SPECIAL_TOKENS for t in tokens], dtype=bool)


def hide_columns(weights, hidden) -> np.ndarray:
    """weights: (..., n, n), hidden: (n,) bool -> (..., n, n) the hidden columns set to 0, each row rescaled to sum 1.

    A row whose whole weight was on hidden columns becomes all 0 (there is nothing left to show).
    """
    weights = np.asarray(weights, dtype=np.float64)
    hidden = np.asarray(hidden, dtype=bool)
    if hidden.shape != weights.shape[-1:]:
        raise ValueError(f"hidden must have shape ({weights.shape[-1]},), got {hidden.shape}")
    kept = np.where(hidden, 0.0, weights)
    total = kept.sum(axis=-1, keepdims=True)
    return np.divide(kept, total, out=np.zeros_like(kept), where=total > 0)


def hide_special(weights, tokens: Sequence[str]) -> np.ndarray:
    """weights: (..., n, n), n tokens -> (..., n, n) without [CLS]/[SEP] columns, rows renormalised to sum 1."""
    return hide_columns(weights, special_mask(tokens))


def span_weight(weights, source: Span, target: Span) -> np.ndarray:
    """weights: (..., n, n) -> (...) the mean over source's tokens of the summed weight on target's tokens."""
    weights = np.asarray(weights)
    _check_span(source, weights.shape[-1])
    _check_span(target, weights.shape[-1])
    return weights[..., source[0]:source[1], target[0]:target[1]].sum(axis=-1).mean(axis=-1)


def word_weights(weights, source: Span, spans: Sequence[Span]) -> np.ndarray:
    """weights: (..., n, n), k spans -> (..., k) the weight from source to each span (span_weight for each)."""
    return np.stack([span_weight(weights, source, span) for span in spans], axis=-1)


def rank_heads(weights, source: Span, target: Span) -> list[HeadWeight]:
    """weights: (L, H, n, n) -> L * H heads, most weight from source to target first (ties: lower layer, head)."""
    per_head = span_weight(weights, source, target)
    if per_head.ndim != 2:
        raise ValueError(f"weights must be (layers, heads, n, n), got {np.shape(weights)}")
    order = sorted(np.ndindex(per_head.shape), key=lambda lh: (-per_head[lh], lh))
    return [HeadWeight(int(l), int(h), float(per_head[l, h])) for l, h in order]


def _check_span(span: Span, n: int) -> None:
    first, stop = span
    if not 0 <= first < stop <= n:
        raise ValueError(f"span {span} is not a non-empty token range inside 0..{n}")


# ---------------------------------------------------------------- per item, for attention_core.measure.head_stats

def pair_outcomes(attentions: Sequence[np.ndarray], sentences: Sequence[SpannedSentence]):
    """S arrays (L, H, n_s, n_s), S sentences -> (hits (L, H, P): the pair's target gets the most weight among the
    sentence's other words, weights (L, H, P), sentence (P,): which sentence each pair comes from)."""
    if len(attentions) != len(sentences) or not sentences:
        raise ValueError("need one attention array per sentence, and at least one sentence")
    weights, hits, owner = [], [], []
    for s, (attention, sentence) in enumerate(zip(attentions, sentences)):
        for source, target in sentence.pairs:
            others = [k for k in range(len(sentence.words)) if k != source]
            to_words = word_weights(attention, sentence.words[source], [sentence.words[k] for k in others])
            weights.append(to_words[..., others.index(target)])
            hits.append(to_words.argmax(axis=-1) == others.index(target))
            owner.append(s)
    if not weights:
        raise ValueError("the sentences hold no pairs")
    return np.stack(hits, axis=-1), np.stack(weights, axis=-1), np.array(owner)


def sink_outcomes(attentions: Sequence[np.ndarray], sentences: Sequence[SpannedSentence]):
    """S arrays (L, H, n_s, n_s), S sentences -> (weights (L, H, W) every word's weight on [CLS], sentence (W,))."""
    weights, owner = [], []
    for s, (attention, sentence) in enumerate(zip(attentions, sentences, strict=True)):
        for word in sentence.words:
            if word[1] > word[0]:
                weights.append(span_weight(attention, word, (0, 1)))
                owner.append(s)
    if not weights:
        raise ValueError("the sentences hold no words")
    return np.stack(weights, axis=-1), np.array(owner)


def sink_scores(attentions: Sequence[np.ndarray], sentences: Sequence[SpannedSentence]) -> KindScores:
    """S arrays (L, H, n_s, n_s), S sentences -> KindScores: mean weight on [CLS] (token 0) of every word's row."""
    weights, _ = sink_outcomes(attentions, sentences)
    return KindScores(weights.mean(axis=-1), None, weights.shape[-1])


# ---------------------------------------------------------------- pronouns: minimal pairs

@dataclass(frozen=True)
class MinimalPairTest:
    """Two sentences that differ in one word. weights: (2, L, H, 2) = sentence, layer, head, candidate;
    answers: the right candidate (0 or 1) in each sentence."""

    weights: np.ndarray
    answers: tuple[int, int]

    @property
    def preferred(self) -> np.ndarray:
        """-> (2, L, H) the candidate each head gives more weight to, per sentence (ties: the first)."""
        return self.weights.argmax(axis=-1)

    @property
    def flips(self) -> np.ndarray:
        """-> (L, H) True where a head prefers a different candidate in the two sentences."""
        return self.preferred[0] != self.preferred[1]

    @property
    def right_in_both(self) -> np.ndarray:
        """-> (L, H) True where a head gives the right candidate more weight in both sentences (strictly)."""
        margins = self.margins
        return (margins[0] > 0) & (margins[1] > 0)

    @property
    def margins(self) -> np.ndarray:
        """-> (2, L, H) weight on the right candidate minus weight on the wrong one, per sentence."""
        right = np.array(self.answers)
        w = self.weights
        return np.stack([w[s, ..., right[s]] - w[s, ..., 1 - right[s]] for s in range(2)])


def minimal_pair_test(attentions: Sequence[np.ndarray], pronouns: Sequence[Span],
                      candidates: Sequence[Sequence[Span]], answers: tuple[int, int]) -> MinimalPairTest:
    """2 arrays (L, H, n_s, n_s), the pronoun's span and the 2 candidates' spans in each -> MinimalPairTest."""
    if not (len(attentions) == len(pronouns) == len(candidates) == 2) or any(len(c) != 2 for c in candidates):
        raise ValueError("a minimal pair takes two sentences, each with one pronoun and two candidates")
    weights = np.stack([word_weights(a, p, c) for a, p, c in zip(attentions, pronouns, candidates)])
    return MinimalPairTest(weights, (int(answers[0]), int(answers[1])))


def signed_pair_outcomes(margins) -> np.ndarray:
    """margins: (P, 2, L, H) right-minus-wrong weight -> (L, H, P) per pair (sign(m0) + sign(m1)) / 2 in [-1, 1]:
    +1 right in both sentences, 0 the same noun preferred in both (one right, one wrong), -1 wrong in both."""
    margins = np.asarray(margins, dtype=np.float64)
    if margins.ndim != 4 or margins.shape[1] != 2 or margins.shape[0] == 0:
        raise ValueError(f"margins must be (pairs, 2, layers, heads) with pairs >= 1, got {margins.shape}")
    return np.moveaxis(np.sign(margins).sum(axis=1) / 2.0, 0, -1)


def sentence_hits(margins) -> np.ndarray:
    """margins: (P, 2, L, H) -> (L, H, P) the share of the pair's two sentences where the right noun gets strictly
    more weight (0, 0.5 or 1)."""
    margins = np.asarray(margins, dtype=np.float64)
    return np.moveaxis((margins > 0).mean(axis=1), 0, -1)
