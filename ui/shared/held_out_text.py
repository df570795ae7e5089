"""What lessons 9 and 10 say of an induction head on ordinary text in general: the head read on the paragraphs of
data/heads_ordinary_held_out.toml (held out: never shown, never used to pick the head), beside the untrained copy.

The same at every start: computed once per weights and code (about 10 s: a pass of each paragraph through the model,
one up to the head's layer through the untrained copy) and kept on disk (attention_core.gpt.disk_cache, keyed by the
weights' SHA-256 and every source file that makes it), then held once per process (st.cache_resource)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import streamlit as st

from attention_core import attention
from attention_core.blas import single_blas_thread
from attention_core.gpt import disk_cache
from attention_core.gpt_studies import ordinary_text
from attention_core.measure import head_stats
from attention_core.presets import DATA_DIR
from attention_core.smollm2 import interventions, model as gpt_model, tokenizer as gpt_tokenizer, weights as gpt_weights
from ui.shared.gpt_models import UNTRAINED_SEED, model, untrained

SOURCES = (ordinary_text, head_stats, interventions, gpt_model, gpt_tokenizer, gpt_weights, attention, Path(__file__),
           DATA_DIR / f"{ordinary_text.HELD_OUT_NAME}.toml", DATA_DIR / f"{ordinary_text.PRESET_NAME}.toml")


def computed_score(head: tuple[int, int]) -> ordinary_text.SetScore:
    """-> the head on every held-out paragraph, computed now (held_out_score reads it from disk when it can)."""
    weights, tokenizer = model()
    found = ordinary_text.held_out_paragraphs()
    with single_blas_thread():  # (BLAS threads only wait for each other here: 4x slower on a busy machine)
        trained = [ordinary_text.paragraph_reading(weights, tokenizer, p, head, logits=False) for p in found]
        raw = [ordinary_text.paragraph_reading(untrained(), tokenizer, p, head, logits=False) for p in found]
    return ordinary_text.set_score(trained, raw)


@st.cache_resource(show_spinner=False)
def held_out_score(head: tuple[int, int]) -> ordinary_text.SetScore:
    """(layer, head) -> its SetScore on the held-out paragraphs (see the module's docstring)."""
    head = (int(head[0]), int(head[1]))
    names = [f.name for f in fields(ordinary_text.SetScore)]
    value = disk_cache.load_or_compute(
        "ordinary-text-held-out", {"head": list(head), "fields": names, "untrained_seed": UNTRAINED_SEED},
        lambda: _as_dict(computed_score(head), names),
        sources=SOURCES, digest=disk_cache.weights_digest(gpt_weights.gguf_path()))
    return ordinary_text.SetScore(**value)


def _as_dict(score: ordinary_text.SetScore, names: list[str]) -> dict:
    return {name: getattr(score, name) for name in names}
