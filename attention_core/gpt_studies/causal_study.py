"""The experiments of the lesson "What heads do", as pure functions of the weights (interventions.py does the runs).

Every head claim is picked on one set and scored on another (heads.induction_sets: disjoint seeds), with counts,
an interval and a baseline of random heads:
- **switch them off**: the top-k induction heads (picked on the picking set) zeroed or replaced by their mean
  (over the picking set) on the scoring set: the second copy's loss, against `draws` random k-head sets (the
  exact percentile among them) and against the k strongest sink heads;
- **a head needs another** (K-composition): the previous-token head switched off, or its output removed only from
  what the induction head's keys read (or only its queries): the induction head's score on the scoring set;
- **reading the layers**: the logit lens at the last token, the rank of the model's final answer per layer;
- **weight is not influence**: per head, its weight (on position 0, on the induction target) against the effect of
  switching it alone off; the sink's weight, its norm-weighted share and the effect of hiding position 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import log_softmax, softmax
from attention_core.gpt_studies import heads as head_scores
from attention_core.smollm2 import interventions as iv
from attention_core.smollm2.weights import GPTWeights
from attention_core.measure import head_stats

KS = (1, 2, 4, 8)
RANDOM_DRAWS = 40  # random k-head sets per k and kind of ablation
RANDOM_SEED = 3201
BOOTSTRAP = 2000  # resamples of the heads for a correlation's interval
TOP = 10  # "in the top 10" for the lens


# ---------------------------------------------------------------- losses

def second_copy_losses(logits: np.ndarray, ids: np.ndarray, period: int) -> np.ndarray:
    """logits: (S, period - 1, V) at positions period .. 2 period - 2, ids: (S, 2 period) -> (S,) each sequence's
    mean loss (nats) on tokens 2..R of its second copy (what heads.copy_losses calls the second copy)."""
    targets = ids[:, period + 1:2 * period]  # (S, period - 1)
    logp = log_softmax(logits.astype(np.float64), axis=-1)
    return -np.take_along_axis(logp, targets[..., None], axis=-1)[..., 0].mean(axis=-1)


def second_copy_rows(period: int) -> range:
    """-> the positions whose logits predict the second copy's tokens 2..R."""
    return range(period, 2 * period - 1)


def ablated_losses(weights: GPTWeights, clean: iv.Trace, period: int, writes) -> np.ndarray:
    """clean: the recorded run of the scoring set (S, 2 period), writes -> (S,) second-copy losses with the writes
    done, starting at the first layer they touch."""
    out = iv.run(weights, clean.ids, writes, start=clean, rows=second_copy_rows(period))
    return second_copy_losses(out.logits, clean.ids, period)


def top_heads(scores: np.ndarray, k: int) -> tuple[tuple[int, int], ...]:
    """scores: (L, H) -> the k heads with the highest scores, best first (ties in C order)."""
    order = np.argsort(-np.asarray(scores).ravel(), kind="stable")[:k]
    return tuple((int(i) // scores.shape[1], int(i) % scores.shape[1]) for i in order)


def random_head_sets(k: int, draws: int, seed: int, shape: tuple[int, int]) -> list[tuple[tuple[int, int], ...]]:
    """-> `draws` sets of k distinct heads, each drawn uniformly from all L x H (seeded)."""
    rng = np.random.default_rng([seed, k])
    total = shape[0] * shape[1]
    return [tuple((int(i) // shape[1], int(i) % shape[1]) for i in sorted(rng.choice(total, size=k, replace=False)))
            for _ in range(draws)]


def percentile_among(value: float, draws: np.ndarray) -> float:
    """-> the share (0-100) of draws strictly below value (100: above every draw)."""
    return float(100.0 * np.mean(np.asarray(draws) < value))


# ---------------------------------------------------------------- the picking run

@dataclass(frozen=True)
class SetRun:
    """One set of repeated sequences run once: its trace, and per sequence and head (S, L, H) the induction score,
    the previous-token score and the sink share."""

    trace: iv.Trace
    induction: np.ndarray
    previous: np.ndarray
    sink: np.ndarray


def run_set(weights: GPTWeights, ids: np.ndarray, period: int) -> SetRun:
    """ids: (S, 2 period) -> SetRun (one recorded pass keeping every head's map)."""
    c = weights.config
    every = [(l, h) for l in range(c.n_layer) for h in range(c.n_head)]
    out = iv.run(weights, ids, rows=(), record=True, maps=every)
    maps = np.stack([np.stack([out.maps[(l, h)] for h in range(c.n_head)], axis=1) for l in range(c.n_layer)],
                    axis=1)  # (S, L, H, n, n)
    return SetRun(out.trace, head_scores.induction_score(maps, period), head_scores.previous_token_score(maps),
                  head_scores.sink_share(maps))


# ---------------------------------------------------------------- switch them off

@dataclass(frozen=True)
class AblationStudy:
    """Second-copy losses on the scoring set (S sequences) with heads switched off. Per k in ks (rows):
    induction_zero/induction_mean/sink_zero/sink_mean (K, S) per sequence; random_zero/random_mean (K, D) the mean
    over the S sequences per random draw."""

    ks: tuple[int, ...]
    induction_heads: tuple[tuple[int, int], ...]  # the max(ks) best on the picking set, best first
    sink_heads: tuple[tuple[int, int], ...]
    clean: np.ndarray  # (S,)
    clean_first: float  # the first copy's mean loss, unablated (what no copying costs)
    induction_zero: np.ndarray
    induction_mean: np.ndarray
    sink_zero: np.ndarray
    sink_mean: np.ndarray
    random_zero: np.ndarray
    random_mean: np.ndarray
    random_sets: tuple  # (K, D) the drawn head sets
    picking_scores: np.ndarray  # (L, H) mean induction score on the picking set
    scoring_scores: np.ndarray  # (L, H) on the scoring set (held out)
    sequences: tuple[int, int]
    period: int

    def percentile(self, row: int, mean: bool = False) -> float:
        """-> where the induction heads' loss (k = ks[row]) sits among the random draws (0-100)."""
        induction = self.induction_mean if mean else self.induction_zero
        draws = self.random_mean if mean else self.random_zero
        return percentile_among(float(induction[row].mean()), draws[row])

    def rose(self, row: int) -> head_stats.Count:
        """-> in how many scoring sequences zeroing the top-k induction heads raised the loss."""
        return head_stats.Count(int((self.induction_zero[row] > self.clean).sum()), len(self.clean))


def first_copy_loss(weights: GPTWeights, clean: iv.Trace, period: int) -> float:
    """-> the mean loss on tokens 2..R of the first copy (nothing to copy yet), unablated."""
    out = iv.run(weights, clean.ids, start=clean, rows=range(0, period - 1))
    targets = clean.ids[:, 1:period]
    logp = log_softmax(out.logits.astype(np.float64), axis=-1)
    return float(-np.take_along_axis(logp, targets[..., None], axis=-1).mean())


def ablation_study(weights: GPTWeights, picking: SetRun, scoring: SetRun, period: int, ks=KS,
                   draws: int = RANDOM_DRAWS, seed: int = RANDOM_SEED, progress=None) -> AblationStudy:
    """picking, scoring: run_set of the two sets -> AblationStudy. progress(done, total) is called after each run."""
    c = weights.config
    picked_induction = top_heads(picking.induction.mean(axis=0), max(ks))
    picked_sinks = top_heads(picking.sink.mean(axis=0), max(ks))
    means = iv.head_means(picking.trace)  # mean-ablation's reference set: the picking set
    clean = scoring.trace
    total, done = len(ks) * (4 + 2 * draws), 0

    def losses(writes):
        nonlocal done
        result = ablated_losses(weights, clean, period, writes)
        done += 1
        if progress is not None:
            progress(done, total)
        return result

    rows = {name: [] for name in ("iz", "im", "sz", "sm", "rz", "rm")}
    sets = []
    for k in ks:
        rows["iz"].append(losses(iv.zero_ablation(picked_induction[:k])))
        rows["im"].append(losses(iv.mean_ablation(picked_induction[:k], means)))
        rows["sz"].append(losses(iv.zero_ablation(picked_sinks[:k])))
        rows["sm"].append(losses(iv.mean_ablation(picked_sinks[:k], means)))
        drawn = random_head_sets(k, draws, seed, (c.n_layer, c.n_head))
        sets.append(drawn)
        rows["rz"].append([losses(iv.zero_ablation(s)).mean() for s in drawn])
        rows["rm"].append([losses(iv.mean_ablation(s, means)).mean() for s in drawn])
    clean_losses = second_copy_losses(iv.run(weights, clean.ids, start=clean,
                                             rows=second_copy_rows(period)).logits, clean.ids, period)
    return AblationStudy(tuple(ks), picked_induction, picked_sinks, clean_losses,
                         first_copy_loss(weights, clean, period),
                         *(np.array(rows[name]) for name in ("iz", "im", "sz", "sm", "rz", "rm")), tuple(sets),
                         picking.induction.mean(axis=0), scoring.induction.mean(axis=0),
                         (len(picking.trace.ids), len(clean.ids)), period)


def switched_off_losses(weights: GPTWeights, clean: iv.Trace, period: int, heads, means: np.ndarray | None = None
                        ) -> np.ndarray:
    """heads: [(layer, head), ...] -> (S,) the second-copy losses with them zeroed (means None) or replaced by
    their means (L, H, n, hd) from head_means; no heads: the clean losses."""
    writes = iv.zero_ablation(heads) if means is None else iv.mean_ablation(heads, means)
    return ablated_losses(weights, clean, period, writes)


@dataclass(frozen=True)
class CopiedName:
    """A name written twice in a text: per name token after its first (m,), its probability where it comes the
    first time and the second time; and, the second time, the model's top guess for each of those m tokens (given
    the name's tokens before it: one pass, no sampling)."""

    tokens: tuple[int, ...]
    first: np.ndarray
    second: np.ndarray
    written: tuple[int, ...]


def copied_name(weights: GPTWeights, ids, piece, heads=()) -> CopiedName | None:
    """ids: a text holding the name's ids `piece` twice, heads: switched off (zeroed) -> CopiedName; None when the
    name is one token or is not found twice as tokens."""
    ids, piece = [int(i) for i in ids], [int(i) for i in piece]
    starts = [i for i in range(len(ids) - len(piece) + 1) if ids[i:i + len(piece)] == piece]
    if len(starts) < 2 or len(piece) < 2:
        return None
    m = len(piece) - 1
    rows = [s + k for s in starts[:2] for k in range(m)]  # each predicts the name's token k + 1
    logits = iv.run(weights, np.array([ids]), iv.zero_ablation(heads), rows=rows).logits[0]
    probs = softmax(logits.astype(np.float64), axis=-1)[np.arange(2 * m), piece[1:] * 2]
    guesses = tuple(int(i) for i in np.argmax(logits[m:], axis=-1))
    return CopiedName(tuple(piece[1:]), probs[:m], probs[m:], guesses)


# ---------------------------------------------------------------- a head needs another (K-composition)

@dataclass(frozen=True)
class Composition:
    """The induction head's score per scoring sequence (S,) as it is, with the previous-token head switched off,
    with that head's output removed only from what the induction head's keys read, only from its queries; and
    the same for every other head of the earlier layers switched off alone (controls: (C, S))."""

    previous_head: tuple[int, int]
    induction_head: tuple[int, int]
    clean: np.ndarray
    switched_off: np.ndarray
    key_side: np.ndarray
    query_side: np.ndarray
    control_heads: tuple[tuple[int, int], ...]
    controls: np.ndarray

    @property
    def control_means(self) -> np.ndarray:
        return self.controls.mean(axis=1)

    def percentile(self) -> float:
        """-> the share (0-100) of control heads whose removal leaves the score lower than the previous-token
        head's removal does (0: no other earlier head lowers it as much)."""
        return percentile_among(-float(self.switched_off.mean()), -self.control_means)


def composition_study(weights: GPTWeights, picking: SetRun, scoring: SetRun, period: int,
                      controls: int = 20, seed: int = RANDOM_SEED) -> Composition:
    """The previous-token head and the induction head picked on the picking set (the best induction head in a
    layer after some previous-token head: the best previous-token head in an earlier layer), scored on the
    scoring set. controls: that many other heads of earlier layers (seeded), each switched off alone."""
    c = weights.config
    induction_order = top_heads(picking.induction.mean(axis=0), c.n_layer * c.n_head)
    previous_mean = picking.previous.mean(axis=0)
    for induction in induction_order:
        if induction[0] > 0:
            break
    previous = top_heads(previous_mean[:induction[0]], 1)[0]
    trace = scoring.trace

    def score_with(writes) -> np.ndarray:
        out = iv.run(weights, trace.ids, writes, start=trace, maps=(induction,), until=induction[0])
        return head_scores.induction_score(out.maps[induction], period)

    resid = trace.resid[induction[0]]
    without = resid - iv.head_contribution(weights, trace, *previous)
    key_side = iv.head_attention(weights, resid, without, *induction)
    query_side = iv.head_attention(weights, without, resid, *induction)
    own = iv.head_attention(weights, resid, resid, *induction)
    earlier = [(l, h) for l in range(induction[0]) for h in range(c.n_head) if (l, h) != previous]
    rng = np.random.default_rng(seed)
    chosen = [earlier[i] for i in sorted(rng.choice(len(earlier), size=min(controls, len(earlier)), replace=False))]
    return Composition(previous, induction, head_scores.induction_score(own, period),
                       score_with(iv.zero_ablation([previous])),
                       head_scores.induction_score(key_side, period), head_scores.induction_score(query_side, period),
                       tuple(chosen), np.array([score_with(iv.zero_ablation([h])) for h in chosen]))


# ---------------------------------------------------------------- reading the layers

@dataclass(frozen=True)
class Reading:
    """The lens at one text's last token: per layer (L + 1) the rank of the model's final answer (0 = top) and the
    top token ids (L + 1, top)."""

    answer: int
    ranks: np.ndarray
    top: np.ndarray

    def first_in_top(self, top: int = TOP) -> int:
        """-> the first layer from which the answer stays within the top `top` to the end."""
        inside = self.ranks < top
        outside = np.flatnonzero(~inside)
        return int(outside[-1] + 1) if outside.size else 0


def read_layers(weights: GPTWeights, ids, top: int = 5) -> Reading:
    """ids: (n,) -> Reading of the logit lens at the last token."""
    trace = iv.run(weights, np.asarray(ids)[None], rows=(), record=True).trace
    lens = iv.lens(weights, trace)  # (L + 1, V)
    answer = int(np.argmax(lens[-1]))
    ranks = (lens > lens[:, [answer]]).sum(axis=1)
    return Reading(answer, ranks, np.argsort(-lens, axis=1, kind="stable")[:, :top])


# ---------------------------------------------------------------- weight is not influence

def single_head_effects(weights: GPTWeights, scoring: SetRun, period: int, progress=None) -> np.ndarray:
    """-> (L, H): the rise of the scoring set's mean second-copy loss when that head alone is zeroed."""
    c = weights.config
    clean = second_copy_losses(iv.run(weights, scoring.trace.ids, start=scoring.trace,
                                      rows=second_copy_rows(period)).logits, scoring.trace.ids, period).mean()
    effects = np.zeros((c.n_layer, c.n_head))
    for layer in range(c.n_layer):
        for head in range(c.n_head):
            effects[layer, head] = ablated_losses(weights, scoring.trace, period,
                                                  iv.zero_ablation([(layer, head)])).mean() - clean
            if progress is not None:
                progress(layer * c.n_head + head + 1, c.n_layer * c.n_head)
    return effects


@dataclass(frozen=True)
class SinkReading:
    """Position 0 in a set of texts: per head (L, H) its attention weight on position 0 and its norm-weighted share
    (weight x length of the value vector after W_O, as a share of the row's total); the loss per token with
    position 0 hidden from every later row, with position 1 hidden, and with nothing hidden (from token 2 on)."""

    weight: np.ndarray
    norm_share: np.ndarray
    value_ratio: float  # length of position 0's value vectors / the other positions', in the sink heads
    loss: float
    loss_without_first: float
    loss_without_second: float
    sink_heads: int  # heads whose weight on position 0 is above one half
    texts: int
    tokens: int


def sink_reading(weights: GPTWeights, texts: list) -> SinkReading:
    """texts: a list of id sequences (each >= 3 tokens) -> SinkReading over all of them (one run per text each)."""
    c = weights.config
    weight_sum = np.zeros((c.n_layer, c.n_head))
    norm_sum = np.zeros((c.n_layer, c.n_head))
    first_norm, other_norm = [], []
    losses = {(): [], (0,): [], (1,): []}
    every = [(l, h) for l in range(c.n_layer) for h in range(c.n_head)]
    for ids in texts:
        ids = np.asarray(ids)[None]
        n = ids.shape[1]
        out = iv.run(weights, ids, record=True, maps=every)
        for layer in range(c.n_layer):
            norms = iv.value_norms(weights, out.trace, layer)[0]  # (H, n)
            for head in range(c.n_head):
                rows = out.maps[(layer, head)][0, 1:]  # (n - 1, n): the rows that could look elsewhere
                weighted = rows * norms[head]
                weight_sum[layer, head] += rows[:, 0].sum()
                norm_sum[layer, head] += (weighted[:, 0] / weighted.sum(axis=1)).sum()
                if rows[:, 0].mean() > 0.5:
                    first_norm.append(norms[head, 0])
                    other_norm.append(norms[head, 1:].mean())
        for hidden in losses:
            run = out if not hidden else iv.run(weights, ids, hidden=hidden)
            logp = log_softmax(run.logits[0, 1:-1].astype(np.float64), axis=-1)  # predicting tokens 2..n-1
            losses[hidden].extend(-logp[np.arange(n - 2), ids[0, 2:]])
    rows_total = sum(len(ids) - 1 for ids in texts)
    weight = weight_sum / rows_total
    return SinkReading(weight, norm_sum / rows_total,
                       float(np.mean(first_norm) / np.mean(other_norm)) if first_norm else float("nan"),
                       float(np.mean(losses[()])), float(np.mean(losses[(0,)])), float(np.mean(losses[(1,)])),
                       int((weight > 0.5).sum()), len(texts), len(losses[()]))
