"""Tokenising text the way GloVe 6B (Wikipedia + Gigaword, Stanford tokenizer) was tokenised."""

from __future__ import annotations

import re
import unicodedata

_NEGATION = re.compile(r"(\w)n't\b")
_CLITIC = re.compile(r"(\w)'(s|m|re|ve|ll|d)\b")
_TOKEN = re.compile(r"n't|'(?:s|m|re|ve|ll|d)\b|\w+(?:[-.]\w+)*|[^\w\s]")


def clean_text(text: str) -> str:
    """str -> str with control characters (NUL included) turned into spaces and curly quotes made straight."""
    text = unicodedata.normalize("NFKC", text or "")
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    return "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in text)


def tokenize(text: str) -> list[str]:
    """text -> lowercase tokens, punctuation split off, "didn't" -> ["did", "n't"], "it's" -> ["it", "'s"]."""
    text = clean_text(text).lower()
    text = _NEGATION.sub(r"\1 n't", text)
    text = _CLITIC.sub(r"\1 '\2", text)
    return _TOKEN.findall(text)
