"""attention_core: the attention mechanism and its experiments in plain NumPy.

No Streamlit, Plotly or Altair here; gensim only to wrap the GloVe vectors.
"""

from attention_core.attention import (
    MAX_SEED,
    attention_scores,
    attention_weights,
    causal_mask,
    entropy,
    merge_heads,
    multi_head_attention,
    random_projection,
    ranks_in_rows,
    scaled_dot_product_attention,
    softmax,
    split_heads,
)
from attention_core.glove import GloveUnavailable, embed, load_glove, split_known
from attention_core.presets import PresetError, read_preset
from attention_core.sentences import load_sentences
from attention_core.text import clean_text, tokenize

__all__ = [
    "GloveUnavailable",
    "MAX_SEED",
    "PresetError",
    "attention_scores",
    "attention_weights",
    "causal_mask",
    "clean_text",
    "embed",
    "entropy",
    "load_glove",
    "load_sentences",
    "merge_heads",
    "multi_head_attention",
    "random_projection",
    "ranks_in_rows",
    "read_preset",
    "scaled_dot_product_attention",
    "softmax",
    "split_heads",
    "split_known",
    "tokenize",
]
