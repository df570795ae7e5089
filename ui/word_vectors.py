"""The vectors of a sentence for the pages that offer GloVe or seeded random vectors (causal mask, Transformer block)."""

import streamlit as st

from attention_core.causal import RANDOM_DIM, random_word_vectors
from attention_core.glove import embed, split_known


@st.cache_data(max_entries=256, show_spinner=False)
def word_vectors(tokens: tuple, use_glove: bool, seed: int, _kv=None):
    """tokens -> (X (n_known, d), known tokens, unknown words); GloVe rows, or seeded random vectors of RANDOM_DIM."""
    if use_glove:
        X, unknown = embed(list(tokens), _kv)
        return X, split_known(list(tokens), _kv)[0], unknown
    return random_word_vectors(tokens, RANDOM_DIM, seed), list(tokens), []
