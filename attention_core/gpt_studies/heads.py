"""What a causal model's heads do, measured on its attention weights (L layers, H heads, n tokens): pure functions.

Attention arrays are a causal model's weights, (L, H, n, n), each row summing to 1 over the positions up to it.
The measurements:
- **sink**: the share of a head's weight on position 0, averaged over the rows 1..n-1 (row 0 can only look at
  itself, so it is left out);
- **previous token**: the mean weight of rows 1..n-1 on the position just before them;
- **induction** (Olsson et al. 2022): on R tokens followed by the same R tokens again, the mean weight that a row of
  the second copy puts on the position right after the same token's earlier occurrence (the token that came next
  last time: what an induction head copies);
- the loss per position on the first and the second copy (in-context copying shows as a lower second-copy loss).
Each has its uniform baseline: what a head that spreads its weight evenly over the visible positions scores.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.measure import head_stats

# SmolLM2's control tokens are ids 0-16 (<|endoftext|>, <|im_start|>, ...): random sequences draw from the rest.
FIRST_ORDINARY_ID = 17
WRONG_TARGET_SHIFT = 10  # the baseline's target: the token 10 places on from the real one (half of 20)
# The stated split of the repeated random sequences: heads are picked on one set and scored on the other.
PICKING_SEED, SCORING_SEED = 2301, 2302


def _causal_attention(attention) -> np.ndarray:
    attention = np.asarray(attention, dtype=np.float64)
    if attention.ndim < 2 or attention.shape[-1] != attention.shape[-2]:
        raise ValueError(f"attention must be (..., n, n), got shape {attention.shape}")
    if attention.shape[-1] < 2:
        raise ValueError("at least 2 positions are needed")
    return attention


def sink_share(attention) -> np.ndarray:
    """attention: (..., n, n) -> (...) mean over rows 1..n-1 of the weight on position 0."""
    attention = _causal_attention(attention)
    return attention[..., 1:, 0].mean(axis=-1)


def previous_token_score(attention) -> np.ndarray:
    """attention: (..., n, n) -> (...) mean over rows i = 1..n-1 of the weight on position i - 1."""
    attention = _causal_attention(attention)
    n = attention.shape[-1]
    rows = np.arange(1, n)
    return attention[..., rows, rows - 1].mean(axis=-1)


def induction_rows(period: int, offset: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """-> (queries (period,), targets (period,)): the second copy's positions and the position after each one's
    earlier occurrence, for a sequence of `offset` other tokens, then R = period tokens, then the same R again."""
    if period < 1 or offset < 0:
        raise ValueError(f"period must be >= 1 and offset >= 0, got {period}, {offset}")
    j = np.arange(period)
    return offset + period + j, offset + j + 1


def induction_score(attention, period: int, offset: int = 0, shift: int = 0) -> np.ndarray:
    """attention: (..., n, n), n >= offset + 2 * period -> (...) mean weight of the second copy's rows on the
    position after their token's earlier occurrence. shift k (0 < k < period): on the position after the token k
    places further on in the first copy instead (the wrong target: a baseline)."""
    attention = _causal_attention(attention)
    if attention.shape[-1] < offset + 2 * period:
        raise ValueError(f"{attention.shape[-1]} positions cannot hold {offset} + 2 x {period}")
    queries, targets = induction_rows(period, offset)
    targets = offset + (targets - offset - 1 + shift) % period + 1
    return attention[..., queries, targets].mean(axis=-1)


def uniform_sink_share(n: int) -> float:
    """-> what a head spreading its weight evenly over the visible positions puts on position 0 (rows 1..n-1)."""
    return float(np.mean(1.0 / np.arange(2, n + 1)))


uniform_previous_token_score = uniform_sink_share  # one visible position out of i + 1 in row i, as for the sink


def uniform_induction_score(period: int, offset: int = 0) -> float:
    """-> the induction score of a head spreading its weight evenly over the visible positions."""
    queries, _ = induction_rows(period, offset)
    return float(np.mean(1.0 / (queries + 1)))


def heads_over(scores, threshold: float = 0.5) -> int:
    """scores: (L, H) -> the number of heads scoring more than `threshold`."""
    return int((np.asarray(scores) > threshold).sum())


def token_losses(logits, ids) -> np.ndarray:
    """logits: (n, V), ids: (n,) -> (n - 1,) the loss in nats of predicting ids[i + 1] from position i."""
    logits = np.asarray(logits, dtype=np.float64)
    ids = np.asarray(ids)
    if logits.ndim != 2 or ids.shape != logits.shape[:1]:
        raise ValueError(f"logits must be (n, V) and ids (n,), got {logits.shape} and {ids.shape}")
    shifted = logits[:-1] - logits[:-1].max(axis=-1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(axis=-1))
    return log_z - shifted[np.arange(len(ids) - 1), ids[1:]]


def copy_losses(losses, period: int, offset: int = 0) -> tuple[float, float]:
    """losses: (n - 1,) from token_losses -> (first copy, second copy): the mean loss of predicting tokens 2..R of
    each copy (the first token of a copy has no earlier occurrence to follow, so neither copy counts it)."""
    losses = np.asarray(losses, dtype=np.float64)
    if losses.shape[0] < offset + 2 * period - 1 or period < 2:
        raise ValueError(f"{losses.shape[0]} losses cannot hold {offset} + 2 x {period} tokens")
    # losses[i] predicts position i + 1: the first copy's positions offset+1 .. offset+R-1, the second's R later.
    first = losses[offset: offset + period - 1]
    second = losses[offset + period: offset + 2 * period - 1]
    return float(first.mean()), float(second.mean())


def repeated_random_sequences(seed: int, count: int, length: int, *, low: int = FIRST_ORDINARY_ID,
                              high: int = 49152) -> np.ndarray:
    """-> (count, 2 * length) ids: `length` distinct ids drawn from [low, high), then the same ids again."""
    if count < 1 or length < 2 or high - low < length or low < 0:
        raise ValueError(f"cannot draw {count} x {length} distinct ids from [{low}, {high})")
    rng = np.random.default_rng(seed)
    firsts = np.stack([rng.choice(np.arange(low, high), size=length, replace=False) for _ in range(count)])
    return np.concatenate([firsts, firsts], axis=1)


@dataclass(frozen=True)
class InductionSets:
    """The repeated random sequences: heads are picked on `picking` and scored on `scoring` (disjoint seeds)."""

    picking: np.ndarray
    scoring: np.ndarray
    period: int


def induction_sets(count: int = 8, length: int = 20, *, low: int = FIRST_ORDINARY_ID,
                   high: int = 49152) -> InductionSets:
    """-> `count` sequences to pick heads on (seed PICKING_SEED), `count` to score them on (seed SCORING_SEED)."""
    return InductionSets(repeated_random_sequences(PICKING_SEED, count, length, low=low, high=high),
                         repeated_random_sequences(SCORING_SEED, count, length, low=low, high=high), length)


@dataclass(frozen=True)
class SequenceMeasures:
    """Per sequence of a set (S sequences) and head (L, H): the measures of one model on that set."""

    induction: np.ndarray  # (S, L, H)
    wrong_target: np.ndarray  # (S, L, H) the induction score with the target shifted (WRONG_TARGET_SHIFT)
    previous_token: np.ndarray  # (S, L, H)
    sink: np.ndarray  # (S, L, H)
    first_copy_loss: np.ndarray  # (S,)
    second_copy_loss: np.ndarray  # (S,)


def measure_sequence(attention, logits, ids, period: int) -> tuple:
    """attention: (L, H, n, n), logits: (n, V), ids: (n,) of one repeated sequence -> (induction (L, H), wrong
    target (L, H), previous token (L, H), sink (L, H), first-copy loss, second-copy loss)."""
    first, second = copy_losses(token_losses(logits, ids), period)
    shift = WRONG_TARGET_SHIFT % period or 1
    return (induction_score(attention, period), induction_score(attention, period, shift=shift),
            previous_token_score(attention), sink_share(attention), first, second)


def measure_sequences(forward, sequences, period: int, forward_many=None) -> SequenceMeasures:
    """forward: ids (n,) -> (attention (L, H, n, n), logits (n, V)); sequences: (S, 2R) -> the measures of each.

    forward_many (optional): a list of ids -> a list of (attention, logits), the same passes made together."""
    sequences = np.asarray(sequences)
    passes = forward_many(list(sequences)) if forward_many is not None else [forward(ids) for ids in sequences]
    parts = [measure_sequence(attention, logits, ids, period) for (attention, logits), ids in zip(passes, sequences)]
    return SequenceMeasures(*(np.stack([p[k] for p in parts]) for k in range(4)),
                            np.array([p[4] for p in parts]), np.array([p[5] for p in parts]))


def gpt_forward(weights):
    """-> a forward function (ids -> (attention, logits)) of attention_core.smollm2 on these weights."""
    from attention_core import smollm2

    def forward(ids):
        out = smollm2.forward(weights, [int(i) for i in ids])
        return out.attention, out.logits

    return forward


def gpt_forward_many(weights, batch: int = 8):
    """-> a forward_many function (a list of ids -> a list of (attention, logits)) of attention_core.smollm2 on these
    weights: `batch` sequences a pass (8 sequences of 40 tokens: 63 MB of logits at once)."""
    from attention_core import smollm2

    def forward_many(sequences):
        outs = []
        for start in range(0, len(sequences), batch):
            chunk = [[int(i) for i in ids] for ids in sequences[start:start + batch]]
            outs += [(out.attention, out.logits) for out in smollm2.forward_many(weights, chunk)]
        return outs

    return forward_many


def gemma_forward_many(weights, batch: int = 2):
    """-> a forward_many function (a list of ids -> a list of (attention, logits)) of attention_core.gemma on these
    weights, each sequence read after the start token (the model breaks without it) and measured on its own rows:
    attention (L, H, n, n) and logits (n, V) of the n ids, the start token's row and column left out (a row's weight
    on it, the sink, is weight the sequence's own measures do not count). `batch` sequences a pass (two sequences of
    41 tokens: 86 MB of logits at once)."""
    from attention_core import gemma
    from attention_core.gemma.tokenizer import BOS_ID

    def forward_many(sequences):
        outs = []
        for start in range(0, len(sequences), batch):
            chunk = [[BOS_ID] + [int(i) for i in ids] for ids in sequences[start:start + batch]]
            outs += [(out.attention[..., 1:, 1:], out.logits[1:]) for out in gemma.forward_many(weights, chunk)]
        return outs

    return forward_many


def held_out_head(picking, scoring) -> head_stats.HeldOut:
    """picking: (S1, L, H), scoring: (S2, L, H) per-sequence scores -> head_stats.HeldOut: the head with the best
    mean on the picking sequences, and its mean on the scoring ones."""
    picking, scoring = np.asarray(picking, dtype=np.float64), np.asarray(scoring, dtype=np.float64)
    both = np.moveaxis(np.concatenate([picking, scoring]), 0, -1)  # (L, H, S1 + S2)
    s1 = picking.shape[0]
    return head_stats.pick_on_score_on(both, range(s1), range(s1, s1 + scoring.shape[0]))


@dataclass(frozen=True)
class HeadStudy:
    """One model on the induction sets: heads picked on the picking set, everything else on the scoring set."""

    induction: head_stats.HeldOut  # of the induction score
    wrong_target: head_stats.HeldOut  # the same procedure on the wrong target (a baseline)
    previous_token: head_stats.HeldOut  # of the previous-token score
    induction_means: np.ndarray  # (L, H) each head's mean induction score on the scoring set
    sink_means: np.ndarray  # (L, H) each head's mean sink share on the scoring set
    first_copy_loss: float  # mean over the scoring set (nats)
    second_copy_loss: float
    sequences: tuple[int, int]  # (picking, scoring) counts
    period: int
    induction_interval: tuple[float, float, float]  # the picked induction head on the scoring set: mean, 95 % interval
    previous_token_interval: tuple[float, float, float]  # the picked previous-token head, likewise


def head_study(forward, sets: InductionSets, forward_many=None) -> HeadStudy:
    """forward: ids (n,) -> (attention (L, H, n, n), logits (n, V)) -> HeadStudy on the two sets.

    forward_many (optional): the same passes made several sequences at a time (measure_sequences)."""
    picking = measure_sequences(forward, sets.picking, sets.period, forward_many)
    scoring = measure_sequences(forward, sets.scoring, sets.period, forward_many)
    induction = held_out_head(picking.induction, scoring.induction)
    previous = held_out_head(picking.previous_token, scoring.previous_token)
    return HeadStudy(induction, held_out_head(picking.wrong_target, scoring.wrong_target), previous,
                     scoring.induction.mean(axis=0), scoring.sink.mean(axis=0),
                     float(scoring.first_copy_loss.mean()), float(scoring.second_copy_loss.mean()),
                     (len(sets.picking), len(sets.scoring)), sets.period,
                     head_stats.mean_interval(scoring.induction[(slice(None), *induction.head)]),
                     head_stats.mean_interval(scoring.previous_token[(slice(None), *previous.head)]))


# ---------------------------------------------------------------- the mask and the famous sentence (lesson 9)

def leak_differences(attention_a, logits_a, attention_b, logits_b, changed: int) -> tuple[float, float, float]:
    """attention_*: (L, H, n, n), logits_*: (n, V) of two texts that differ only at position ``changed`` -> (max
    |difference| over every earlier row of every map, over every earlier position's logits, in the changed row)."""
    j = changed
    return (float(np.abs(attention_a[..., :j, :] - attention_b[..., :j, :]).max(initial=0.0)),
            float(np.abs(logits_a[:j] - logits_b[:j]).max(initial=0.0)),
            float(np.abs(attention_a[..., j, :] - attention_b[..., j, :]).max()))


def above_diagonal(attention) -> tuple[int, int]:
    """attention: (..., n, n) -> (how many weights lie above the diagonal in all maps, how many of them are exactly 0)."""
    n = attention.shape[-1]
    cells = attention[..., np.triu(np.ones((n, n), dtype=bool), k=1)]
    return int(cells.size), int(np.count_nonzero(cells == 0.0))


@dataclass(frozen=True)
class MinimalPairHeads:
    it_diff: float  # max |difference| of the pronoun's row over all maps
    last_rows: np.ndarray  # (2, L, H, 2): the last token's weight on the two nouns, per sentence
    flips: int  # heads whose preferred noun differs between the two sentences
    heads: int
    best: tuple[int, int]  # the head whose weight on the second noun grows most from the first sentence to the second


def minimal_pair_heads(attention_a, attention_b, pronoun: int, nouns) -> MinimalPairHeads:
    """attention_*: (L, H, n, n) of two sentences that differ only in their last token -> MinimalPairHeads (the
    pronoun's row, and each head's preferred noun seen from the last token)."""
    last = np.stack([a[..., -1, list(nouns)] for a in (attention_a, attention_b)])  # (2, L, H, 2)
    prefers = last.argmax(axis=-1)
    growth = last[1, ..., 1] - last[0, ..., 1]
    best = np.unravel_index(int(np.argmax(growth)), growth.shape)
    return MinimalPairHeads(float(np.abs(attention_a[..., pronoun, :] - attention_b[..., pronoun, :]).max()), last,
                            int((prefers[0] != prefers[1]).sum()), int(growth.size), (int(best[0]), int(best[1])))


def first_draws(probs, seeds) -> np.ndarray:
    """probs: (V,) a next-token distribution, seeds: (s,) generation seeds -> (s,) int64: the first token each seed
    draws, as the generation server draws a request's first token (attention_core.gpt.batching.step_seed(seed, 0))."""
    from attention_core.gpt.batching import step_seed

    # Generator.choice(V, p=probs)'s own rule (its normalised cumulative sum, one random() searched from the right),
    # with the cumulative sum made once instead of once a seed: 5x less CPU over Gemma's 262,144 tokens
    cdf = np.cumsum(np.asarray(probs, dtype=np.float64))
    cdf /= cdf[-1]
    uniform = np.array([np.random.default_rng(step_seed(int(seed), 0)).random() for seed in seeds], dtype=np.float64)
    return cdf.searchsorted(uniform, side="right").astype(np.int64)


def filled_to(ids, length: int) -> list[int]:
    """ids: (n,) token ids, n >= 1 -> (max(n, length),) the ids repeated until ``length`` tokens (a longer text of
    the same kind for a timing; a text already that long is returned as it is)."""
    ids = [int(i) for i in ids]
    if not ids:
        raise ValueError("at least one token is needed")
    return (ids * (length // len(ids) + 1))[:max(length, len(ids))]


def noun_flips(last_rows) -> np.ndarray:
    """last_rows: (S, L, H, 2) each sentence's last-token weight on two nouns, per head -> (S, S) int: for each pair
    of sentences, how many heads prefer a different noun (the larger of the two weights; ties go to the first noun)."""
    prefers = np.asarray(last_rows).argmax(axis=-1).reshape(len(last_rows), -1)  # (S, L * H)
    return (prefers[:, None, :] != prefers[None, :, :]).sum(axis=-1).astype(np.int64)


def first_layer_scores(weights, ids, offset: int = 0) -> np.ndarray:
    """ids: (n,) -> (H, n, n) float64: layer 0's scores q_i . k_j / sqrt(hd) (before the mask and softmax) with the
    tokens placed at positions offset .. offset + n - 1. Layer 0 reads the embeddings only, so moving the tokens
    changes its scores only through the rotary positions: a score depends on i - j, not on where the pair stands."""
    from attention_core.smollm2.model import rms_norm, rope, rope_angles, split_heads

    c = weights.config
    ids = [int(i) for i in ids]
    x = rms_norm(weights.embedding[ids], weights.attn_norm[0], c.norm_eps)
    rotation = rope_angles(np.arange(offset, offset + len(ids)), c.head_dim, c.rope_base)
    q = rope(split_heads(x @ weights.attn_q[0], c.n_head), *rotation).astype(np.float64)
    k = rope(split_heads(x @ weights.attn_k[0], c.n_kv_head), *rotation).astype(np.float64)
    k = np.repeat(k, c.n_head // c.n_kv_head, axis=0)  # query head h reads key/value head h // group
    return q @ k.swapaxes(-1, -2) / np.sqrt(c.head_dim)


def shifted_previous_token(attention, shifted, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """attention: (L, H, n, n) of a text, shifted: (L, H, n + shift, n + shift) of the same text after ``shift``
    filler tokens -> each head's previous-token score (L, H) over the text's rows 1..n-1, in both runs."""
    n = attention.shape[-1]
    rows = np.arange(1, n)
    return (np.asarray(attention)[..., rows, rows - 1].mean(axis=-1),
            np.asarray(shifted)[..., rows + shift, rows + shift - 1].mean(axis=-1))


def rotary_shift_difference(weights, ids, offsets) -> tuple[float, float]:
    """ids: (n,), offsets: (m,) -> (largest |difference| of layer 0's scores between the tokens at positions 0.. and
    at each offset.., the largest |score| itself): float rounding only, if the score depends on i - j alone."""
    at_start = first_layer_scores(weights, ids)
    diff = max(float(np.abs(first_layer_scores(weights, ids, int(o)) - at_start).max()) for o in offsets)
    return diff, float(np.abs(at_start).max())


def uniform_loss(vocab: int) -> float:
    """-> the loss per token in nats of a uniform guess over ``vocab`` tokens: log(vocab)."""
    return float(np.log(vocab))


def equally_likely(entropy: float) -> float:
    """entropy in nats -> e^entropy: how many equally likely choices have that entropy (its perplexity)."""
    return float(np.exp(entropy))


def random_first_token(ids, seed: int, vocab: int, low: int = FIRST_ORDINARY_ID) -> list[int]:
    """ids: (n,) -> (n,) the same ids with the first replaced by a seeded random ordinary token (ids low .. vocab - 1,
    never the first itself): the sink's control (is the weight on position 0 about the word?)."""
    ids = [int(i) for i in ids]
    rng = np.random.default_rng(seed)
    while True:
        token = int(rng.integers(low, vocab))
        if token != ids[0]:
            return [token] + ids[1:]
