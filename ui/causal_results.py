"""Lesson 5's cached results: one computation per distinct sentence, seed and position, shared by every session.

Defined here, not in the page script, so a rerun does not build the cached functions again (~0.3 ms each).
"""

import streamlit as st

from attention_core.causal import causal_vs_bidirectional, generation_frames, leak_test, matrices_csv


@st.cache_data(max_entries=128, show_spinner=False)
def experiment(X, seed: int):
    return causal_vs_bidirectional(X, seed)


@st.cache_data(max_entries=128, show_spinner=False)
def csv_text(words: tuple, X, seed: int) -> str:
    return matrices_csv(words, experiment(X, seed))


@st.cache_data(max_entries=128, show_spinner=False)
def frames_of(X, seed: int):
    return generation_frames(experiment(X, seed)["causal"].weights)


@st.cache_data(max_entries=256, show_spinner=False)
def leak(X, position: int, new_vector, seed: int):
    return leak_test(X, position, new_vector, seed)
