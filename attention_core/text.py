"""Tokenising text: English the way GloVe 6B (Wikipedia + Gigaword, Stanford tokenizer) was tokenised, Japanese
into words by a morphological analyser (MeCab with UniDic, through fugashi: what Japanese BERT tokenizers use)."""

from __future__ import annotations

import functools
import re
import threading
import unicodedata

_NEGATION = re.compile(r"(\w)n't\b")
_CLITIC = re.compile(r"(\w)'(s|m|re|ve|ll|d)\b")
_TOKEN = re.compile(r"n't|'(?:s|m|re|ve|ll|d)\b|\w+(?:[-.]\w+)*|[^\w\s]")
# Hiragana, katakana (with ー), CJK ideographs (with 々 〆 ヶ) and Japanese punctuation: Japanese is not split by spaces.
_JAPANESE_RUN = re.compile(r"[\u3001-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u30fc\u3005\u3006\u30f6]+")


class JapaneseSegmenterUnavailable(RuntimeError):
    """fugashi or its dictionary (unidic-lite) is not installed, so Japanese text cannot be split into words."""


class JapaneseSegmenter:
    """MeCab (fugashi + unidic-lite), shared by every session of a process: one parse at a time (MeCab's tagger is
    not documented as thread-safe, and a parse takes well under a millisecond)."""

    def __init__(self):
        try:
            import fugashi
            import unidic_lite
        except ImportError as exc:  # a missing package is a message on the page, not a traceback
            raise JapaneseSegmenterUnavailable(str(exc)) from exc
        self._tagger = fugashi.Tagger(f'-d "{unidic_lite.DICDIR}"')
        self._lock = threading.Lock()

    def words(self, text: str) -> list[str]:
        """Japanese text -> its words (surface forms, in order; they join back to the text without its spaces)."""
        with self._lock:
            return [word.surface for word in self._tagger(text)]


@functools.lru_cache(maxsize=1)
def japanese_segmenter() -> JapaneseSegmenter:
    """The process's one segmenter (its dictionary is memory-mapped: a few MB, loaded in milliseconds)."""
    return JapaneseSegmenter()


def clean_text(text: str) -> str:
    """str -> str with control characters (NUL included) turned into spaces and curly quotes made straight."""
    text = unicodedata.normalize("NFKC", text or "")
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    return "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in text)


def has_japanese(text: str) -> bool:
    """True when the text holds any hiragana, katakana or CJK ideograph (or Japanese punctuation)."""
    return bool(_JAPANESE_RUN.search(clean_text(text)))


def _english_tokens(text: str) -> list[str]:
    text = _NEGATION.sub(r"\1 n't", text.lower())
    text = _CLITIC.sub(r"\1 '\2", text)
    return _TOKEN.findall(text)


def tokenize(text: str) -> list[str]:
    """text -> tokens: English lower-cased, punctuation split off, "didn't" -> ["did", "n't"], "it's" -> ["it", "'s"];
    Japanese runs split into words by MeCab ("猫が座った。" -> ["猫", "が", "座っ", "た", "。"])."""
    text = clean_text(text)
    tokens: list[str] = []
    start = 0
    for run in _JAPANESE_RUN.finditer(text):
        tokens += _english_tokens(text[start:run.start()])
        tokens += japanese_segmenter().words(run.group())
        start = run.end()
    return tokens + _english_tokens(text[start:])
