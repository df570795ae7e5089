"""The sentence's vectors for the pages that offer GloVe or seeded random vectors (causal mask, Transformer block):
the two widgets that choose them, and the cached lookup."""

from __future__ import annotations

import streamlit as st

from attention_core.attention import MAX_SEED
from attention_core.causal import RANDOM_DIM, random_word_vectors
from attention_core.glove import embed, split_known
from attention_core.text import has_japanese
from ui.shared.common import glove_vectors, sentence_tokens, show_unknown


@st.cache_data(max_entries=256, show_spinner=False)
def word_vectors(tokens: tuple, use_glove: bool, seed: int, _kv=None):
    """tokens -> (X (n_known, d), known tokens, unknown words); GloVe rows, or seeded random vectors of RANDOM_DIM."""
    if use_glove:
        X, unknown = embed(list(tokens), _kv)
        return X, split_known(list(tokens), _kv)[0], unknown
    return random_word_vectors(tokens, RANDOM_DIM, seed), list(tokens), []


def vector_controls(t, section: str, glove_column, seed_column) -> tuple[bool, int]:
    """The GloVe / random toggle and the seed (keys ``<section>_glove``, ``<section>_seed``) -> (use_glove, seed)."""
    use_glove = glove_column.toggle(t(f"{section}.use_glove"), value=True, help=t(f"{section}.use_glove_help"),
                                    key=f"{section}_glove", bind="query-params")
    seed = int(seed_column.number_input(t("common.seed"), min_value=0, max_value=MAX_SEED, value=0, step=1,
                                        help=t(f"{section}.seed_help"), key=f"{section}_seed", bind="query-params"))
    return use_glove, seed


def glove_cannot_read(text: str, tokens: list[str], kv) -> bool:
    """True for a sentence GloVe's English vectors cannot carry: Japanese, or not one word GloVe knows."""
    return has_japanese(text) or not split_known(tokens, kv)[0]


def sentence_vectors(t, section: str, text: str, use_glove: bool, seed: int):
    """The text's tokens -> (X, known words, the GloVe vectors, or None when the vectors are seeded random); None
    (with a message shown) when there is no usable sentence or no vectors.

    A sentence GloVe cannot read (Japanese, or no word it knows) runs on seeded random vectors instead, and the page
    says so once: the GloVe switch stays on for the next English sentence."""
    tokens = sentence_tokens(t, text)
    if tokens is None:
        return None
    kv = glove_vectors(t) if use_glove else None
    if use_glove and kv is None:
        return None
    if use_glove and glove_cannot_read(text, tokens, kv):
        st.info(t("common.glove_fallback", seed=seed), icon=":material/translate:")
        use_glove, kv = False, None
    X, words, unknown = word_vectors(tuple(tokens), use_glove, 0 if use_glove else seed, _kv=kv)
    show_unknown(t, unknown)
    return X, words, kv
