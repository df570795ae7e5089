"""What the page measures on a tiny GPT: per-head previous-token and induction scores, the loss on repeated and on
unrepeated tokens, and the same with heads knocked out.

On sequences of `offset` random tokens, a segment of R tokens and the segment again (data.Sequences):
- **previous token**: a head's mean weight, over the rows 1..T-1, on the position just before the query;
- **induction** (Olsson et al. 2022): its mean weight, over the second copy's rows, on the position right after the
  same token's earlier occurrence (the token that came next last time: what an induction head copies);
- the loss on **repeated** tokens (the second copy after its first token: copying predicts them) and on
  **unrepeated** ones (the random tokens and the first copy: nothing predicts them beyond chance);
- the **plateau**: the loss of a model that spreads its probability evenly over the distinct tokens seen so far
  (what the model learns first, before it can copy), on the repeated tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .data import Sequences
from .model import forward, fresh, token_losses


def attention_maps(params, tokens, knock_out=None) -> np.ndarray:
    """params, tokens: (T,) ints of one sequence -> (L, H, T, T): every head's attention map on it."""
    _, maps, _ = forward(params, np.asarray(tokens)[None], knock_out)
    return np.stack([a[0] for a in maps])


def previous_token_scores(maps) -> np.ndarray:
    """maps: (..., N, T, T) attention -> (...) mean over sequences and rows 1..T-1 of the weight on the row's i - 1."""
    maps = np.asarray(maps)
    rows = np.arange(1, maps.shape[-1])
    return maps[..., rows, rows - 1].mean(axis=(-1, -2))


def induction_targets(seqs: Sequences) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """-> (sequence, query, key) index arrays, one entry per second-copy row: the query at offset + R + j and the key
    right after the token's earlier occurrence, offset + j + 1 (j = 0..R-1)."""
    seq = np.repeat(np.arange(len(seqs.period)), seqs.period)
    j = np.arange(seq.size) - np.repeat(np.cumsum(seqs.period) - seqs.period, seqs.period)
    start = seqs.offset[seq]
    return seq, start + seqs.period[seq] + j, start + j + 1


def induction_scores(maps, seqs: Sequences) -> np.ndarray:
    """maps: (..., N, T, T) attention on seqs -> (...) mean weight of the second copies' rows on their targets."""
    seq, query, key = induction_targets(seqs)
    return np.asarray(maps)[..., seq, query, key].mean(axis=-1)


def plateau_loss(seqs: Sequences) -> float:
    """-> the mean over repeated targets of log(number of distinct tokens seen up to the query)."""
    tokens = seqs.tokens
    seen = np.zeros(tokens.shape[:1] + (tokens.max() + 1,), dtype=bool)
    distinct = np.empty(tokens.shape, dtype=np.int64)
    for t in range(tokens.shape[1]):
        seen[np.arange(len(tokens)), tokens[:, t]] = True
        distinct[:, t] = seen.sum(axis=1)
    return float(np.log(distinct[:, :-1][seqs.repeated()]).mean())


@dataclass(frozen=True)
class Measures:
    """One model on a set of sequences: losses in nats, scores (L, H) in [0, 1]."""

    loss_repeated: float
    loss_unrepeated: float
    previous_token: np.ndarray
    induction: np.ndarray


def measure(params, seqs: Sequences, knock_out=None, new=fresh) -> Measures:
    """params, seqs -> Measures, with the heads where knock_out (L, H) is True switched off (new: model.forward's)."""
    logits, maps, _ = forward(params, seqs.tokens, knock_out, new)
    losses = token_losses(logits, seqs.tokens).astype(np.float64)
    maps = np.stack(maps).swapaxes(1, 2)  # L x (B, H, T, T) -> (L, H, B, T, T)
    return Measures(float(losses[seqs.repeated()].mean()), float(losses[seqs.unrepeated()].mean()),
                    previous_token_scores(maps), induction_scores(maps, seqs))


def formation_step(steps, induction, loss_repeated, plateau: float, score: float = 0.4) -> int | None:
    """steps: (S,), induction: (S, L, H), loss_repeated: (S,) of a run -> the first step at which the last layer has
    a head scoring >= `score` and the repeated tokens' loss is below half the plateau; None if it never does."""
    formed = (np.asarray(induction)[:, -1].max(axis=-1) >= score) & (np.asarray(loss_repeated) < plateau / 2)
    return int(np.asarray(steps)[formed.argmax()]) if formed.any() else None
