"""The training data: sequences whose repeated part can only be predicted by copying.

Each sequence of T tokens is `offset` random tokens, then a segment of R distinct tokens (R drawn from
segment_min..segment_max), then the same R tokens again: offset = T - 2R. Nothing but the earlier copy tells what
comes next in the second one, so a model can only predict it by finding the token's earlier occurrence and copying
the token after it: what an induction head does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import as_generator

from .model import Config


@dataclass(frozen=True)
class Sequences:
    """tokens: (N, T) ints; offset, period: (N,): the segment starts at `offset` and repeats at offset + period."""

    tokens: np.ndarray
    offset: np.ndarray
    period: np.ndarray

    def repeated(self) -> np.ndarray:
        """-> (N, T - 1) booleans over the targets tokens[:, 1:]: True on the second copy after its first token
        (the tokens copying predicts)."""
        t = np.arange(1, self.tokens.shape[1])
        start = (self.offset + self.period)[:, None]
        return t > start

    def unrepeated(self) -> np.ndarray:
        """-> (N, T - 1) booleans over the targets tokens[:, 1:]: True on the random tokens and the first copy."""
        t = np.arange(1, self.tokens.shape[1])
        return t < (self.offset + self.period)[:, None]


def sequences(config: Config, count: int, seed) -> Sequences:
    """-> `count` sequences of config.seq_len tokens: random tokens, a segment of distinct tokens, the segment again."""
    rng = as_generator(seed)
    T, V = config.seq_len, config.vocab
    period = rng.integers(config.segment_min, config.segment_max + 1, size=count)
    offset = T - 2 * period
    prefix = rng.integers(0, V, size=(count, T))
    segment = np.argsort(rng.random((count, V)), axis=1)  # each row a random order of the vocabulary: distinct
    t = np.arange(T)[None, :]
    in_segment = (t - offset[:, None]) % period[:, None]  # the index into the segment of both copies' positions
    copied = np.take_along_axis(segment, in_segment, axis=1)
    tokens = np.where(t < offset[:, None], prefix, copied)
    return Sequences(tokens.astype(np.int64), offset, period)


def batch(config: Config, seed) -> np.ndarray:
    """-> (batch_size, seq_len) ints: one training batch of sequences()."""
    return sequences(config, config.batch_size, seed).tokens


def eval_set(config: Config) -> Sequences:
    """-> the fixed evaluation sequences of a configuration (eval_size of them, from eval_seed)."""
    return sequences(config, config.eval_size, config.eval_seed)
