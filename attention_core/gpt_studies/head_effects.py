"""What the lesson "What heads do" reads from its random-head band and single-head effects: which head makes a high
random draw high, and whether a head's induction score goes with its effect (a split with a permutation baseline)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.gpt_studies.causal_study import RANDOM_SEED, AblationStudy


# ---------------------------------------------------------------- what the band's high draws hold

HOLDER_KINDS = ("previous", "induction", "early", "other")


def high_draw_holders(a: AblationStudy, single: np.ndarray, previous_head: tuple[int, int], induction_top: int = 8,
                      early_layers: int = 2, quantile: float = 0.95) -> list[tuple[int, tuple[int, int], str]]:
    """single: (L, H) each head's effect zeroed alone -> per random draw at or above its k's `quantile` of the zeroed
    band: (k, the head of the set whose zeroing alone costs most, its kind: "previous" (the previous-token head),
    "induction" (one of the top `induction_top` induction heads), "early" (layer < early_layers), "other")."""
    induction = set(a.induction_heads[:induction_top])
    found = []
    for row, k in enumerate(a.ks):
        draws = a.random_zero[row]
        cut = float(np.quantile(draws, quantile))
        for index in np.flatnonzero(draws >= cut):
            head = max(a.random_sets[row][index], key=lambda h: single[h])
            kind = ("previous" if head == tuple(previous_head) else "induction" if head in induction
                    else "early" if head[0] < early_layers else "other")
            found.append((k, head, kind))
    return found


# ---------------------------------------------------------------- does induction go with effect

@dataclass(frozen=True)
class EffectSplit:
    """The single-head effects split by induction score: counts, medians, the medians' difference and where it
    stands among `permutations` shuffles of the split (the share of shuffles reaching it; their 95th percentile)."""

    threshold: float
    strong: int
    rest: int
    strong_median: float
    rest_median: float
    permuted_p95: float
    p_value: float


def effect_by_induction(induction: np.ndarray, effect: np.ndarray, threshold: float = 0.3, permutations: int = 10000,
                        seed: int = RANDOM_SEED) -> EffectSplit:
    """induction, effect: (N,) per head -> EffectSplit of the heads above `threshold` against the rest."""
    induction, effect = np.ravel(induction), np.ravel(effect)
    strong = induction > threshold
    difference = float(np.median(effect[strong]) - np.median(effect[~strong]))
    rng = np.random.default_rng(seed)
    shuffled = np.array([rng.permutation(strong) for _ in range(permutations)])  # (P, N)
    ordered = np.where(shuffled, effect, np.nan)
    null = np.nanmedian(ordered, axis=1) - np.nanmedian(np.where(shuffled, np.nan, effect), axis=1)
    return EffectSplit(threshold, int(strong.sum()), int((~strong).sum()), float(np.median(effect[strong])),
                       float(np.median(effect[~strong])), float(np.quantile(null, 0.95)),
                       float((1 + np.sum(null >= difference)) / (1 + permutations)))


# ---------------------------------------------------------------- which heads write the copied token

@dataclass(frozen=True)
class CopiedAttribution:
    """Direct logit attribution of the copied token at the second copy's positions, averaged over S sequences and
    the period - 1 positions: per head (L, H), per MLP (L,), the embedding's term, and the logit they add up to (the
    final norm's 1/RMS frozen per row)."""

    heads: np.ndarray
    mlps: np.ndarray
    embedding: float
    logit: float


def copied_token_attribution(weights, trace, period: int) -> CopiedAttribution:
    """trace: a recorded run of S sequences of 2 period tokens -> CopiedAttribution of each row's next token (the one
    a copier writes) at positions period .. 2 period - 2, as interventions.direct_logit_attribution row by row."""
    c = weights.config
    rows = np.arange(period, 2 * period - 1)
    targets = trace.ids[:, rows + 1]  # (S, P)
    final = trace.resid[-1][:, rows].astype(np.float64)  # (S, P, d)
    scale = 1.0 / np.sqrt(np.mean(final * final, axis=-1, keepdims=True) + c.norm_eps)
    direction = scale * np.asarray(weights.output_norm, np.float64) * np.asarray(weights.embedding, np.float64)[targets]
    w_o = np.asarray(weights.attn_output, np.float32).reshape(c.n_layer, c.n_head, c.head_dim, c.d_model)
    z = trace.heads[:, :, :, rows].astype(np.float32)  # (L, S, H, P, hd)
    heads = np.stack([np.einsum("shpk,hkd,spd->shp", z[layer].astype(np.float64), w_o[layer].astype(np.float64),
                                direction).mean(axis=(0, 2)) for layer in range(c.n_layer)])
    mlps = np.einsum("lspd,spd->l", trace.mlp[:, :, rows].astype(np.float64), direction) / direction.shape[0] / len(rows)
    embedding = float(np.einsum("spd,spd->", trace.resid[0][:, rows].astype(np.float64), direction) / targets.size)
    logit = float(np.einsum("spd,spd->", final, direction) / targets.size)
    return CopiedAttribution(heads, mlps, embedding, logit)
