"""Does the model decide "it" at all? Lesson 9's famous sentence, with many last words, asked which noun "it" is;
then what moves the answer between two runs, by patching (interventions.py does the runs).

- **behaviour**: `... because it was too <word><question>` for words that fit the first noun (the animal is tired)
  and words that fit the second (the street is wide): per word, the probability of each noun as the next token and
  the lead, logit(first noun) - logit(second noun); the model names the first noun when the lead is > 0;
- **patching**: a clean run (a word that fits the first noun) and a corrupted one (a word that fits the second), the
  same length: an activation of the clean run written into the corrupted run; the fraction of the lead's gap it
  restores, (lead_patched - lead_corrupted) / (lead_clean - lead_corrupted): 0 changes nothing, 1 gives the clean
  run's lead. Per head at the last position and per (layer, position) of the residual stream on one pair of words
  (picking); the heads picked there, patched together on other pairs (scoring) against random head sets.
All leads in float64 from the float32 logits of the two nouns at the last position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import softmax
from attention_core.smollm2 import interventions as iv
from attention_core.gpt_studies.causal_study import random_head_sets, top_heads
from attention_core.smollm2.weights import GPTWeights
from attention_core.measure import head_stats

KS = (1, 3, 10)  # how many of the picked heads are patched together on the held-out pairs
RANDOM_DRAWS = 30  # random k-head sets per k
RANDOM_SEED = 3202


# ---------------------------------------------------------------- asking the model

def leads(weights: GPTWeights, ids: np.ndarray, nouns: tuple[int, int], writes=(), resid_writes=(),
          start: iv.Trace | None = None) -> np.ndarray:
    """ids: (B, n), nouns: (first, second) token ids -> (B,) float64 logit(first) - logit(second) at the last
    position, with the writes done (start: a recorded run of the same ids, to begin at the first layer written)."""
    out = iv.run(weights, ids, writes, resid_writes, start=start, rows=[-1], tokens=list(nouns))
    logits = out.logits[:, 0].astype(np.float64)  # (B, 2)
    return logits[:, 0] - logits[:, 1]


@dataclass(frozen=True)
class Behaviour:
    """What the model says after each word (W words): probabilities (W, 2) of the two nouns as the next token,
    the lead (W,) logit(first) - logit(second), and which words fit the first noun (W,) bool."""

    probabilities: np.ndarray
    lead: np.ndarray
    fits_first: np.ndarray

    @property
    def names_first(self) -> np.ndarray:
        """(W,) bool: the model puts more on the first noun than on the second."""
        return self.lead > 0

    def right(self, which: np.ndarray | None = None) -> head_stats.Count:
        """-> how many of the words (all, or those selected by the bool mask `which`) get the noun they fit."""
        which = np.ones(len(self.lead), dtype=bool) if which is None else np.asarray(which, dtype=bool)
        return head_stats.Count(int((self.names_first == self.fits_first)[which].sum()), int(which.sum()))

    def named_first(self, which: np.ndarray) -> head_stats.Count:
        """-> of the selected words, how many make the model name the first noun."""
        which = np.asarray(which, dtype=bool)
        return head_stats.Count(int(self.names_first[which].sum()), int(which.sum()))


def ask(weights: GPTWeights, ids: np.ndarray, nouns: tuple[int, int], fits_first) -> Behaviour:
    """ids: (W, n) the sentence with each word and the question, nouns: (first, second) ids, fits_first: (W,) bool
    -> Behaviour (one pass, every logit at the last position for the probabilities)."""
    logits = iv.run(weights, ids, rows=[-1]).logits[:, 0].astype(np.float64)  # (W, V)
    probabilities = softmax(logits, axis=-1)[:, list(nouns)]
    return Behaviour(probabilities, logits[:, nouns[0]] - logits[:, nouns[1]], np.asarray(fits_first, dtype=bool))


def paired_leads(first_leads: np.ndarray, second_leads: np.ndarray) -> head_stats.Count:
    """first_leads: (P,), second_leads: (P,) the leads after the i-th first-noun word and the i-th second-noun word
    (each word in one pair only) -> in how many pairs the first-noun word gives the first noun the larger lead
    (chance: half, if the words did not matter)."""
    first, second = np.asarray(first_leads), np.asarray(second_leads)
    return head_stats.Count(int((first > second).sum()), len(first))


# ---------------------------------------------------------------- patching

def restored(patched, corrupted, clean) -> np.ndarray:
    """-> (patched - corrupted) / (clean - corrupted), elementwise: the fraction of the lead's gap a patch restores."""
    return (np.asarray(patched, np.float64) - corrupted) / (np.asarray(clean, np.float64) - corrupted)


def repeated(trace: iv.Trace, times: int) -> iv.Trace:
    """A recorded run of one sequence -> the same run as a batch of `times` copies (to start patched runs from)."""
    return iv.Trace(np.repeat(trace.ids, times, axis=0), np.repeat(trace.resid, times, axis=1),
                    np.repeat(trace.heads, times, axis=1), np.repeat(trace.mlp, times, axis=1))


def record(weights: GPTWeights, ids) -> iv.Trace:
    """ids: (B, n) -> the recorded run (no logits)."""
    return iv.run(weights, np.atleast_2d(ids), rows=(), record=True).trace


def head_patching(weights: GPTWeights, clean: iv.Trace, corrupted: iv.Trace, nouns: tuple[int, int],
                  position: int = -1, progress=None) -> np.ndarray:
    """clean, corrupted: recorded runs of one sequence each (same n) -> (L, H): the fraction of the lead's gap
    restored when that one head's output at `position` is taken from the clean run into the corrupted one. One
    run per layer, its H heads as a batch, from that layer on. progress(done, total) after each layer."""
    c = weights.config
    gap = leads(weights, clean.ids, nouns, start=clean)[0], leads(weights, corrupted.ids, nouns, start=corrupted)[0]
    start = repeated(corrupted, c.n_head)
    out = np.zeros((c.n_layer, c.n_head))
    for layer in range(c.n_layer):
        writes = tuple(iv.HeadWrite(layer, h, clean.heads[layer, 0, h, position], position, h)
                       for h in range(c.n_head))
        out[layer] = restored(leads(weights, start.ids, nouns, writes, start=start), gap[1], gap[0])
        if progress is not None:
            progress(layer + 1, c.n_layer)
    return out


def resid_patching(weights: GPTWeights, clean: iv.Trace, corrupted: iv.Trace, nouns: tuple[int, int],
                   progress=None) -> np.ndarray:
    """clean, corrupted: recorded runs of one sequence each (same n) -> (L + 1, n): the fraction restored when the
    residual stream entering layer l (row L: after the last) at position p is taken from the clean run. One run per
    layer, its n positions as a batch. progress(done, total) after each layer."""
    c = weights.config
    n = clean.ids.shape[1]
    gap = leads(weights, clean.ids, nouns, start=clean)[0], leads(weights, corrupted.ids, nouns, start=corrupted)[0]
    start = repeated(corrupted, n)
    out = np.zeros((c.n_layer + 1, n))
    for layer in range(c.n_layer + 1):
        writes = tuple(iv.ResidWrite(layer, clean.resid[layer, 0, p], p, p) for p in range(n))
        out[layer] = restored(leads(weights, start.ids, nouns, resid_writes=writes, start=start), gap[1], gap[0])
        if progress is not None:
            progress(layer + 1, c.n_layer + 1)
    return out


def patched_together(weights: GPTWeights, clean: iv.Trace, corrupted: iv.Trace, nouns: tuple[int, int],
                     heads, position: int = -1) -> np.ndarray:
    """clean, corrupted: recorded runs of P pairs (sequence i of each is pair i; same n) -> (P,) the fraction each
    pair's gap restores when all `heads` [(layer, head), ...] at `position` are taken from its clean run."""
    writes = iv.head_patches(clean, [(l, h, position) for l, h in heads])
    patched = leads(weights, corrupted.ids, nouns, writes, start=corrupted)
    return restored(patched, leads(weights, corrupted.ids, nouns, start=corrupted),
                    leads(weights, clean.ids, nouns, start=clean))


# ---------------------------------------------------------------- the study

@dataclass(frozen=True)
class PatchingStudy:
    """Picked on one pair (its leads clean/corrupted, per head (L, H) at the last position, per residual state and
    position (L + 1, n), every head at the word's position together), scored on P held-out pairs: per k (rows of
    ks) the picked top-k heads patched together (K, P), and random k-head sets (K, D, P)."""

    clean_lead: float
    corrupted_lead: float
    heads: np.ndarray
    resid: np.ndarray
    word_position: int
    all_heads_at_word: float
    all_heads_at_last: float
    ks: tuple[int, ...]
    picked: tuple[tuple[int, int], ...]  # the max(ks) best heads on the picking pair, best first
    held_out_clean: np.ndarray  # (P,) leads
    held_out_corrupted: np.ndarray
    held_out: np.ndarray
    random: np.ndarray

    @property
    def gap(self) -> float:
        return self.clean_lead - self.corrupted_lead

    def percentile(self, row: int) -> float:
        """-> the share (0-100) of random k-head sets whose median fraction over the pairs is below the picked
        heads' median fraction (k = ks[row])."""
        draws = np.median(self.random[row], axis=-1)
        return float(100.0 * np.mean(draws < np.median(self.held_out[row])))

    def beats_random(self, row: int) -> head_stats.Count:
        """-> in how many held-out pairs the picked top-k heads restore more than the median random k-head set does
        on that pair (k = ks[row])."""
        return head_stats.Count(int((self.held_out[row] > np.median(self.random[row], axis=0)).sum()),
                                self.held_out.shape[1])

    def carried(self, share: float = 0.5) -> tuple[int, int]:
        """-> (the last state at which the word's position alone restores at least `share` of the gap; the first
        state from which the last position alone does, to the end): where the difference travels (-1: never)."""
        at_word = np.flatnonzero(self.resid[:, self.word_position] >= share)
        below = np.flatnonzero(self.resid[:, -1] < share)
        return (int(at_word[-1]) if at_word.size else -1), (int(below[-1]) + 1 if below.size else 0)


def first_difference(a, b) -> int:
    """a, b: (n,) ids -> the first position where they differ (ValueError: the same, or not the same length)."""
    a, b = np.asarray(a), np.asarray(b)
    differ = np.flatnonzero(a != b) if a.shape == b.shape else np.array([])
    if not differ.size:
        raise ValueError("the two runs must have the same length and differ somewhere")
    return int(differ[0])


def patching_study(weights: GPTWeights, pick: tuple[np.ndarray, np.ndarray], held_out: tuple[np.ndarray, np.ndarray],
                   nouns: tuple[int, int], ks=KS, draws: int = RANDOM_DRAWS, seed: int = RANDOM_SEED,
                   progress=None) -> PatchingStudy:
    """pick: (clean ids (n,), corrupted ids (n,)), held_out: (clean (P, n), corrupted (P, n)) -> PatchingStudy (the
    word's position: where the picking pair first differs). progress(done, total) after each run."""
    c = weights.config
    word_position = first_difference(*pick)
    total = c.n_layer + (c.n_layer + 1) + 2 + len(ks) * (1 + draws)
    done = 0

    def step(count: int = 1) -> None:
        nonlocal done
        done += count
        if progress is not None:
            progress(done, total)

    clean, corrupted = record(weights, pick[0]), record(weights, pick[1])
    heads = head_patching(weights, clean, corrupted, nouns, progress=lambda d, _: step(1))
    resid = resid_patching(weights, clean, corrupted, nouns, progress=lambda d, _: step(1))
    every = [(l, h) for l in range(c.n_layer) for h in range(c.n_head)]
    at_word = patched_together(weights, clean, corrupted, nouns, every, word_position)[0]
    step()
    at_last = patched_together(weights, clean, corrupted, nouns, every, -1)[0]
    step()
    picked = top_heads(heads, max(ks))
    clean_p, corrupted_p = record(weights, held_out[0]), record(weights, held_out[1])
    rows, random_rows = [], []
    for k in ks:
        rows.append(patched_together(weights, clean_p, corrupted_p, nouns, picked[:k]))
        step()
        drawn = []
        for chosen in random_head_sets(k, draws, seed, (c.n_layer, c.n_head)):
            drawn.append(patched_together(weights, clean_p, corrupted_p, nouns, chosen))
            step()
        random_rows.append(drawn)
    return PatchingStudy(float(leads(weights, clean.ids, nouns, start=clean)[0]),
                         float(leads(weights, corrupted.ids, nouns, start=corrupted)[0]), heads, resid, word_position,
                         float(at_word), float(at_last), tuple(ks), picked,
                         leads(weights, clean_p.ids, nouns, start=clean_p),
                         leads(weights, corrupted_p.ids, nouns, start=corrupted_p), np.array(rows),
                         np.array(random_rows))
