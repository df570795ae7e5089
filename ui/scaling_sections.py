"""The scaling lesson's cached computations, defined once per process (not re-created by every page run).

The table over every d is seed-independent: computed once per process in the background (ui/startup.py).
"""

from __future__ import annotations

import streamlit as st

from attention_core.scaling import (
    DIM_CHOICES, NEXT_WORD_SCORES, SAMPLE_COUNT, TEMPERATURE_CHOICES, density_histogram, logit_variance, normal_curve,
    prefix_weights, random_query_keys, sampling_sweep, score_sample, softmax_inputs,
)
from ui.startup import SCALING_TABLE_SEED as TABLE_SEED, scaling_table as table  # noqa: F401 - the lesson's table


@st.cache_data(show_spinner=False, max_entries=64)
def raw_scores(d: int, n_keys: int, seed: int):
    """(draws, n_keys) q . k of the histogram's draws; the toggle and tau only rescale them (softmax_inputs)."""
    return score_sample(d, n_keys, seed, scale=False)


@st.cache_data(show_spinner=False, max_entries=64)
def histogram_data(d: int, n_keys: int, seed: int, scale: bool, tau: float) -> dict:
    z = softmax_inputs(raw_scores(d, n_keys, seed), d, scale, tau)
    edges, density, counts = density_histogram(z)
    curve_x, curve_y = normal_curve(edges[0], edges[-1], logit_variance(d, scale, tau))
    return dict(edges=edges, density=density, counts=counts, curve_x=curve_x, curve_y=curve_y, n=z.size,
                draws=z.shape[0], var=float(z.var()), sd=float(z.std()), lo=float(z.min()), hi=float(z.max()))


@st.cache_data(show_spinner=False, max_entries=64)
def nested_weights(n_keys: int, seed: int, tau: float) -> dict:
    """{False: (9, n_keys) unscaled, True: scaled} weights of one query at every d of DIM_CHOICES."""
    q, K = random_query_keys(n_keys, seed)
    return {scale: prefix_weights(q, K, DIM_CHOICES, scale, tau) for scale in (False, True)}


@st.cache_data(show_spinner=False, max_entries=1)
def sampling() -> dict:
    """The next-word probabilities, entropies and samples at every tau of TEMPERATURE_CHOICES (seed 0)."""
    return sampling_sweep(NEXT_WORD_SCORES, TEMPERATURE_CHOICES, SAMPLE_COUNT, seed=0)
