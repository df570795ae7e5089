"""An induction head on ordinary text: every repeated token of a paragraph, where one head looks from it, and how
well the model predicts the token the first time and again.

A repeat is a position i whose token occurred earlier (at some j < i). Its induction targets are the positions j + 1
after each earlier occurrence: what followed the token before, what an induction head looks at and copies
(heads.induction_score measures the same on random tokens written twice, where each token has one earlier occurrence).
A made-up name written twice is found by its characters, then mapped to the tokens that hold them (inside a text a
name's edges may merge with the characters around it, so its own tokens need not be the name's tokens alone).

A set of paragraphs held out from every choice (data/heads_ordinary_held_out.toml) scores the head as a whole:
set_score takes one NameReading per paragraph and keeps, per paragraph, the head's mean weight on the targets of the
name's later tokens, so the interval treats the paragraph, not the token, as the unit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import log_softmax
from attention_core.measure.head_stats import Count, mean_interval
from attention_core.smollm2 import interventions as iv
from attention_core.smollm2.weights import GPTWeights
from attention_core.presets import PresetError, bilingual, read_preset

PRESET_NAME = "heads_ordinary"
HELD_OUT_NAME = "heads_ordinary_held_out"  # the paragraphs that score the head: never shown, never picked on


def induction_targets(ids) -> np.ndarray:
    """ids: (n,) -> (n, n) bool: [i, t] is True when t = j + 1 for some j < i with ids[j] == ids[i] (a row of a token
    seen for the first time is all False)."""
    ids = np.asarray(ids)
    earlier = np.tril(ids[:, None] == ids[None, :], k=-1)  # [i, j]: j < i holds the same token
    targets = np.zeros_like(earlier)
    targets[:, 1:] = earlier[:, :-1]
    return targets


@dataclass(frozen=True)
class Repeats:
    """The r repeats of a text (positions in order) for one head, each (r,)."""

    positions: np.ndarray  # int: where the repeat stands
    first: np.ndarray  # int: its token's first occurrence
    weight: np.ndarray  # the head's weight on the repeat's targets (summed over them)
    top: np.ndarray  # bool: the row's largest weight falls on a target
    uniform: np.ndarray  # what an even spread over the visible positions puts there: targets / (i + 1)
    p_first: np.ndarray  # the model's probability of the token at its first occurrence (nan at position 0)
    p_again: np.ndarray  # ... and here
    on_first: np.ndarray  # the head's weight on position 0 (where a head with nothing to do puts it: the sink)

    def within(self, positions) -> "Repeats":
        """-> the repeats standing at one of `positions` (any order; non-repeats among them are left out)."""
        keep = np.isin(self.positions, np.asarray(list(positions), dtype=np.int64))
        return Repeats(*(getattr(self, f)[keep] for f in self.__dataclass_fields__))

    def without(self, positions) -> "Repeats":
        """-> the other repeats."""
        keep = ~np.isin(self.positions, np.asarray(list(positions), dtype=np.int64))
        return Repeats(*(getattr(self, f)[keep] for f in self.__dataclass_fields__))


def repeats_on(ids, attention, logits) -> Repeats:
    """ids: (n,), attention: (n, n) one head's map, logits: (n, V) (row i scores token i + 1) or None (then the
    probabilities are nan) -> Repeats."""
    ids = np.asarray(ids, dtype=np.int64)
    attention = np.asarray(attention, dtype=np.float64)
    n = ids.shape[0]
    if attention.shape != (n, n) or (logits is not None and np.shape(logits)[0] != n):
        raise ValueError(f"ids (n,), attention (n, n) and logits (n, V) must agree, got {ids.shape}, "
                         f"{attention.shape}, {np.shape(logits)}")
    targets = induction_targets(ids)
    positions = np.flatnonzero(targets.any(axis=1))
    first = np.array([int(np.flatnonzero(ids == ids[i])[0]) for i in positions], dtype=np.int64)
    rows, row_targets = attention[positions], targets[positions]
    weight = np.where(row_targets, rows, 0.0).sum(axis=1)
    top = np.where(row_targets, rows, -np.inf).max(axis=1, initial=-np.inf) >= rows.max(axis=1, initial=0.0)
    uniform = row_targets.sum(axis=1) / (positions + 1)
    asked, back = np.unique(np.concatenate([positions, first]), return_inverse=True)
    logp = np.full(asked.shape, np.nan)
    scored = asked > 0  # position 0 is predicted from nothing
    if logits is not None and scored.any():
        lp = log_softmax(np.asarray(logits[asked[scored] - 1], dtype=np.float64), axis=-1)
        logp[scored] = lp[np.arange(lp.shape[0]), ids[asked[scored]]]
    p = np.exp(logp)[back.ravel()]
    return Repeats(positions.astype(np.int64), first, weight, top, uniform, p[len(positions):], p[:len(positions)],
                   rows[:, 0] if n else np.zeros(0))


def occurrences(text: str, name: str) -> list[tuple[int, int]]:
    """-> the byte spans [start, end) of the name in the text's UTF-8, left to right, not overlapping ([] for an
    empty name)."""
    data, piece = text.encode("utf-8"), name.encode("utf-8")
    spans, start = [], 0
    while piece and (found := data.find(piece, start)) >= 0:
        spans.append((found, found + len(piece)))
        start = found + len(piece)
    return spans


def tokens_over(lengths, span: tuple[int, int]) -> np.ndarray:
    """lengths: (n,) each token's length in bytes, span: [start, end) in bytes -> the positions of the tokens that
    hold any byte of the span."""
    ends = np.cumsum(np.asarray(lengths, dtype=np.int64))
    starts = ends - np.asarray(lengths, dtype=np.int64)
    return np.flatnonzero((starts < span[1]) & (ends > span[0]))


def later_name_tokens(lengths, text: str, name: str) -> tuple[np.ndarray, int]:
    """-> (the positions of the tokens holding the name's second and later occurrences, how often the name occurs)."""
    spans = occurrences(text, name)
    later = [tokens_over(lengths, s) for s in spans[1:]]
    return (np.unique(np.concatenate(later)) if later else np.zeros(0, dtype=np.int64)), len(spans)


@dataclass(frozen=True)
class NameReading:
    """A paragraph with a name written more than once, read for one head: every repeat, and the name's later
    occurrences split three ways."""

    repeats: Repeats  # every repeat of the paragraph
    inside: Repeats  # the name's later tokens that the name goes on after: their target is the name's next token
    continued: Repeats  # the name's later tokens after its first: what copying predicts (their probability)
    last: Repeats  # the name's later tokens that end it: their target is what followed the name before
    others: Repeats  # every repeat outside the name's later occurrences
    occurrences: int


def name_reading(ids, lengths, text: str, name: str, attention, logits) -> NameReading:
    """ids: (n,) the text's tokens, lengths: (n,) their lengths in bytes, attention: (n, n) one head's map, logits:
    (n, V) or None -> NameReading (its parts are empty when the name occurs fewer than twice or is one token)."""
    later, count = later_name_tokens(lengths, text, name)
    everything = repeats_on(ids, attention, logits)
    inside = set(later.tolist())
    return NameReading(everything, everything.within(i for i in inside if i + 1 in inside),
                       everything.within(i for i in inside if i - 1 in inside),
                       everything.within(i for i in inside if i + 1 not in inside), everything.without(inside), count)


def arrows(ids, attention, positions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ids: (n,), attention: (n, n), positions: (r,) repeats -> (queries, targets, weights) one entry per target of
    each repeat: the repeat, a position after an earlier occurrence of its token, the head's weight there."""
    targets = induction_targets(ids)
    pairs = [(int(i), int(t)) for i in positions for t in np.flatnonzero(targets[int(i)])]
    queries = np.array([q for q, _ in pairs], dtype=np.int64)
    keys = np.array([k for _, k in pairs], dtype=np.int64)
    return queries, keys, np.asarray(attention, dtype=np.float64)[queries, keys]


def head_reading(weights: GPTWeights, ids, head: tuple[int, int], logits: bool = True
                 ) -> tuple[np.ndarray, np.ndarray | None]:
    """ids: (n,) -> (head's attention map (n, n), logits (n, V) or None): one pass (without logits: only up to the
    head's layer)."""
    layer, h = int(head[0]), int(head[1])
    ids = np.asarray([int(i) for i in ids], dtype=np.int64)[None]
    if not logits:
        return iv.run(weights, ids, maps=((layer, h),), until=layer).maps[(layer, h)][0], None
    out = iv.run(weights, ids, maps=((layer, h),))
    return out.maps[(layer, h)][0], out.logits[0]


@dataclass(frozen=True)
class Paragraph:
    label: dict  # {lang: label} ({} for a held-out paragraph: never offered to pick)
    text: str
    name: str  # written in the text at least twice


def _validate(data: dict, check, labelled: bool = True) -> tuple[Paragraph, ...]:
    out = []
    for i, p in enumerate(check.table_list(data, "paragraph")):
        where = f"paragraph[{i}]"
        text, name = check.text(p, "text", where), check.text(p, "name", where)
        if len(occurrences(text, name)) < 2:
            check.fail(f"{where}.name", "must occur in the text at least twice")
        out.append(Paragraph(bilingual(check, p, "label", where) if labelled else {}, text, name))
    if len({p.text for p in out}) < len(out):
        check.fail("paragraph", "holds the same text twice")
    return tuple(out)


def paragraphs(data_dir=None) -> tuple[Paragraph, ...]:
    """-> the built-in paragraphs of data/heads_ordinary.toml (each with a made-up name written twice or more)."""
    return read_preset(PRESET_NAME, _validate, data_dir)


def held_out_paragraphs(data_dir=None) -> tuple[Paragraph, ...]:
    """-> the held-out paragraphs of data/heads_ordinary_held_out.toml (none of them a built-in one)."""
    found = read_preset(HELD_OUT_NAME, lambda data, check: _validate(data, check, labelled=False), data_dir)
    shared = {p.text for p in found} & {p.text for p in paragraphs(data_dir)}
    if shared:
        raise PresetError(f"{HELD_OUT_NAME}.toml: a held-out paragraph is also a built-in one: {sorted(shared)[0]:.60}")
    return found


def paragraph_reading(weights: GPTWeights, tokenizer, paragraph: Paragraph, head: tuple[int, int],
                      logits: bool = True) -> NameReading:
    """tokenizer: .encode(text) -> ids, .token_bytes(id) -> bytes -> the paragraph's NameReading for one head (one pass;
    without logits only up to the head's layer, the probabilities nan)."""
    ids = tokenizer.encode(paragraph.text)
    attention, out = head_reading(weights, ids, head, logits)
    lengths = [len(tokenizer.token_bytes(i)) for i in ids]
    return name_reading(ids, lengths, paragraph.text, paragraph.name, attention, out)


@dataclass(frozen=True)
class SetScore:
    """One head on P paragraphs, each (P,), from the name's later tokens that the name goes on after (NameReading's
    inside): how many there are, the head's mean weight on their targets, how many rows' largest weight falls there,
    what an even spread puts there, and the same head of the untrained copy's mean weight."""

    tokens: np.ndarray  # int
    weight: np.ndarray
    top: np.ndarray  # int
    uniform: np.ndarray
    untrained: np.ndarray

    @property
    def paragraphs(self) -> int:
        return int(self.tokens.size)

    @property
    def mean(self) -> tuple[float, float, float]:
        """-> (mean over paragraphs of the per-paragraph weight, its 95 % Student-t interval)."""
        return mean_interval(self.weight)

    @property
    def top_count(self) -> Count:
        """-> the rows, over every paragraph, whose largest weight falls on a target (of all such rows)."""
        return Count(int(self.top.sum()), int(self.tokens.sum()))


def set_score(trained, untrained) -> SetScore:
    """trained, untrained: (P,) NameReadings of the same paragraphs by the model and by its untrained copy -> SetScore.
    A paragraph whose name has no later token that the name goes on after (a one-token name) is an error."""
    if len(trained) != len(untrained) or not len(trained):
        raise ValueError(f"need one reading per paragraph from each model, got {len(trained)} and {len(untrained)}")
    empty = [i for i, r in enumerate(trained) if r.inside.positions.size == 0]
    if empty:
        raise ValueError(f"paragraph {empty[0]}: its name has no later token that the name goes on after")
    return SetScore(np.array([r.inside.positions.size for r in trained], dtype=np.int64),
                    np.array([r.inside.weight.mean() for r in trained]),
                    np.array([r.inside.top.sum() for r in trained], dtype=np.int64),
                    np.array([r.inside.uniform.mean() for r in trained]),
                    np.array([r.inside.weight.mean() for r in untrained]))
