"""Lesson 9's preset prompts as the page reads them: a text's ids (cut to the page's token limit) and the ids of every
preset in the menu's order. Its own module because two sides need it: the page (ui/gpt/page.py: the prompt picker,
a preset's pass kept for the process's life) and the disk decorator under the page's measurements
(ui/gpt/serving.py: presets_on_disk keeps a preset's value on disk, never a learner's own prompt's)."""

from __future__ import annotations

import streamlit as st

from ui.shared.common import MAX_CHARS
from ui.shared.gpt_models import model, texts

MAX_PROMPT_TOKENS = 40  # the page's token limit: every map of a prompt this long stays quick to compute and to draw


@st.cache_data(show_spinner=False, max_entries=512)
def encode(text: str) -> tuple[int, ...]:
    return tuple(model()[1].encode(text))


def preset_ids(text: str) -> tuple[int, ...]:
    """A preset's text -> the ids the page reads (prompt_picker: the text's tokens, cut to MAX_PROMPT_TOKENS)."""
    return encode(text[:MAX_CHARS])[:MAX_PROMPT_TOKENS]


@st.cache_resource(show_spinner=False)
def preset_prompts() -> tuple[tuple[int, ...], ...]:
    """-> the ids of every preset prompt, in the menu's order: fixed texts, so whatever the page measures on them is
    the same at every start (kept on disk, ui.gpt.serving.presets_on_disk, and warmed at start-up)."""
    return tuple(preset_ids(text) for _, text in texts().presets)
