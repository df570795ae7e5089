"""Lesson 8's trained encoder: all-MiniLM-L6-v2 (a 6-layer BERT, 12 heads a layer) run in NumPy, and what the lesson
measures on it.

Read bert_readable.py first: the encoder as a learner reads it, one function per step with shapes in comments;
bert.py is the fast pass the app runs (tested against it), with bert_ops.py its exact GELU. model.py reads a text
(wordpiece.py's tokenizer, weights.py's safetensors reader, the untrained copy); sets.py loads the sentence sets,
heads.py scores heads on them, measure.py runs the lesson's studies (heads picked on one set, scored on another).
"""

from attention_core.pretrained.bert import encoder_forward, encoder_forward_many, without_positions
from attention_core.pretrained.model import (
    INSTALL_COMMAND,
    PACKAGE,
    Model,
    ModelUnavailable,
    Reading,
    attention_maps,
    build_untrained_copy,
    load_model,
    model_dir,
    read_text,
    read_texts,
    vocabulary_check,
    word_spans,
)
from attention_core.pretrained.weights import parameter_count, read_safetensors

__all__ = ["INSTALL_COMMAND", "PACKAGE", "Model", "ModelUnavailable", "Reading", "attention_maps",
           "build_untrained_copy", "encoder_forward", "encoder_forward_many", "load_model", "model_dir",
           "parameter_count", "read_safetensors", "read_text", "read_texts", "vocabulary_check", "without_positions",
           "word_spans"]
