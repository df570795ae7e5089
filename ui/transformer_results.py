"""Lesson 7's cached results: the seeded block's weights and its checks, one computation per distinct input.

Defined here, not in the page script, so a rerun does not build the cached functions again (~0.3 ms each).
"""

import streamlit as st

from attention_core.causal import replacement_vector
from attention_core.transformer import (
    block_weights, locality_check, permutation_check, seeded_permutation, transformer_block,
)

@st.cache_data(max_entries=32, show_spinner=False)
def weights_of(d: int, seed: int):
    return block_weights(d, seed)


@st.cache_data(max_entries=128, show_spinner=False)
def shuffled(X, seed: int, perm_seed: int):
    return permutation_check(X, seeded_permutation(len(X), perm_seed), weights_of(X.shape[1], seed).attention)


@st.cache_data(max_entries=128, show_spinner=False)
def block(X, seed: int, activation: str):
    return transformer_block(X, weights_of(X.shape[1], seed), activation)


@st.cache_data(max_entries=256, show_spinner=False)
def locality(X, seed: int, activation: str, position: int):
    H = block(X, seed, activation)["add_norm_1"]
    return locality_check(H, position, replacement_vector(H, seed), weights_of(X.shape[1], seed), activation)
