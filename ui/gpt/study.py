"""Lesson 9's repeated-sequence study, on either GPT: heads picked on one set of repeated random sequences and scored
on another, beside the untrained copy; the loss on the first and second copy. The same for everyone: kept on disk
(computed once per machine by the build), read once per process (st.cache_resource)."""

from __future__ import annotations

import inspect
from dataclasses import asdict, dataclass, fields

import numpy as np
import streamlit as st

from attention_core.gpt import disk_cache
from attention_core.gpt_studies import heads
from attention_core.measure import head_stats
from attention_core.smollm2 import model as gpt_model, weights as gpt_weights
from ui.gpt.page import GEMMA, UNTRAINED_SEED, model, untrained

SEQUENCES = 8  # repeated random sequences in each of the two sets (picking, scoring)
PERIOD = 20  # random tokens per copy
STRONG = 0.3  # an induction score counted as a strong head


@dataclass(frozen=True)
class Study:
    sequences: int
    period: int
    induction: np.ndarray  # (L, H) mean on the scoring set
    picked: tuple[int, int]  # the induction head picked on the picking set
    picked_score: tuple[float, float, float]  # its score on the scoring set: mean, 95 % interval
    strong: int  # heads above STRONG on the scoring set
    untrained_best: float  # the untrained copy's best head on the scoring set (what the best of 270 reaches by chance)
    uniform: float
    previous: tuple[int, int]
    previous_score: tuple[float, float, float]
    previous_uniform: float
    losses: tuple[float, float]  # trained: first copy, second copy (scoring set)
    untrained_losses: tuple[float, float]
    example: tuple[int, ...]  # the first scoring sequence


def _kept(name: str, computed, sources: tuple, gguf) -> Study:
    """computed()'s Study, read from disk when an earlier start (or the build) computed it with the same weights and
    code (attention_core.gpt.disk_cache), computed and written there otherwise."""
    params = {"code": inspect.getsource(computed) + inspect.getsource(_from_runs),
              "fields": [f.name for f in fields(Study)],
              "sequences": SEQUENCES, "period": PERIOD, "strong": STRONG, "untrained_seed": UNTRAINED_SEED}
    value = disk_cache.load_or_compute(name, params, lambda: asdict(computed()), sources=(heads, head_stats, *sources),
                                       digest=disk_cache.weights_digest(gguf))
    return Study(**value)


def _from_runs(sets, trained, control) -> Study:
    """The two sets, the trained model's HeadStudy and the untrained copy's measures on the scoring set -> Study."""
    return Study(
        SEQUENCES, sets.period, trained.induction_means, trained.induction.head, trained.induction_interval,
        heads.heads_over(trained.induction_means, STRONG), float(control.induction.mean(axis=0).max()),
        heads.uniform_induction_score(sets.period), trained.previous_token.head, trained.previous_token_interval,
        heads.uniform_previous_token_score(2 * sets.period), (trained.first_copy_loss, trained.second_copy_loss),
        (float(control.first_copy_loss.mean()), float(control.second_copy_loss.mean())),
        tuple(int(i) for i in sets.scoring[0]))


@st.cache_resource(show_spinner=False)
def study() -> Study:
    """The tested study (attention_core.gpt_studies.heads.head_study: heads picked on one set, scored on the other) on the
    trained model, and the untrained copy measured on the scoring set. The same at every start (kept on disk)."""
    return _kept("induction-study", computed_study, (gpt_model, gpt_weights), gpt_weights.gguf_path())


def computed_study() -> Study:
    """The study computed now (study() reads it from disk when it can)."""
    sets = heads.induction_sets(count=SEQUENCES, length=PERIOD)
    trained = heads.head_study(heads.gpt_forward(model()[0]), sets, heads.gpt_forward_many(model()[0]))
    control = heads.measure_sequences(heads.gpt_forward(untrained()), sets.scoring, sets.period,
                                      heads.gpt_forward_many(untrained()))
    return _from_runs(sets, trained, control)


@st.cache_resource(show_spinner=False)
def gemma_study() -> Study:
    """The same study on Gemma 3 (each sequence read after the start token, drawn from its normal tokens), beside
    its untrained copy: kept on disk, computed once per machine (the build does it)."""
    from attention_core.gemma import model as gemma_model, weights as gemma_weights

    return _kept("gemma-induction-study", computed_gemma_study, (gemma_model, gemma_weights), gemma_weights.gguf_path())


def computed_gemma_study() -> Study:
    """Gemma's study computed now (gemma_study() reads it from disk when it can). Its untrained copy is memory-mapped
    from the cache folder (attention_core.gemma.weights.untrained_weights), not kept by the process."""
    from attention_core import gemma
    from attention_core.gemma.tokenizer import NORMAL_IDS
    from attention_core.gemma.weights import untrained_weights

    weights = gemma.default_model()[0]
    sets = heads.induction_sets(count=SEQUENCES, length=PERIOD, low=NORMAL_IDS.start, high=NORMAL_IDS.stop)
    trained = heads.head_study(None, sets, heads.gemma_forward_many(weights))
    control = heads.measure_sequences(None, sets.scoring, sets.period,
                                      heads.gemma_forward_many(untrained_weights(weights.config, UNTRAINED_SEED)))
    return _from_runs(sets, trained, control)


def study_of(model_key: str) -> Study:
    return gemma_study() if model_key == GEMMA else study()
