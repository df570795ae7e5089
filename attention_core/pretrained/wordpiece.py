"""BERT's uncased WordPiece tokenizer, small and readable: text -> [CLS] pieces [SEP], with character offsets.

It reproduces the `tokenizers` library loaded from the model's tokenizer.json (without its padding and truncation):
1. special tokens typed literally ("[MASK]", "[SEP]", ...) are kept whole, matched case-sensitively on the raw text;
2. normalise the rest: drop NUL, U+FFFD and control, format, private-use and surrogate characters (Cc, Cf, Co, Cs;
   not tab, newline, carriage return; unassigned code points stay), turn whitespace into spaces, put spaces around
   CJK ideographs, strip accents (NFD, then drop non-spacing marks: this also turns Japanese だ into た), lower-case;
3. split on whitespace and around every punctuation character (ASCII punctuation and Unicode P* categories);
4. split each word greedily into the longest vocabulary pieces, later pieces prefixed "##"; a word with a piece
   that is not in the vocabulary, or longer than 100 characters, becomes one [UNK].

Python's Unicode tables (14.0 on 3.11) are newer than the library's: of the 1,112,064 code points, 503 tokenise
differently inside a word (marks and punctuation assigned or re-categorised since, e.g. U+07FD, U+08CA); every
character assigned in Unicode 3.2 with the same category today agrees.

A *word*, for the word -> token-span map, is a whitespace-separated unit of the input text (split on the same
whitespace as step 2), with its character offsets [start, end) into the input: "didn't" is one word and three
tokens (didn ' t).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

CLS, SEP, UNK = "[CLS]", "[SEP]", "[UNK]"
SPECIAL_TOKENS = ("[PAD]", UNK, CLS, SEP, "[MASK]")
CONTINUATION = "##"
MAX_WORD_CHARS = 100

# Unicode's White_Space property (what the reference tokenizer splits on), not Python's str.isspace.
WHITESPACE = frozenset("\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
                       + "".join(chr(c) for c in range(0x2000, 0x200B)))
# The reference library's ranges (0x2B920, not the original BERT code's 0x2B820).
_CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
               (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
_SPECIAL_PATTERN = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS))


@dataclass(frozen=True)
class Token:
    """One token: its text in the vocabulary, its id, and the characters [start, end) of the input it came from."""

    text: str
    id: int
    start: int
    end: int


@dataclass(frozen=True)
class Word:
    """One whitespace-separated unit of the input: its text, characters [start, end), tokens [first, stop).

    Token indices count [CLS] as 0. A word made only of dropped characters (a zero-width space) has no tokens:
    first == stop.
    """

    text: str
    start: int
    end: int
    first: int
    stop: int

    @property
    def tokens(self) -> range:
        return range(self.first, self.stop)


def read_vocabulary(path: str | Path) -> dict[str, int]:
    """vocab.txt (one piece a line, line number = id) -> {piece: id}."""
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return {piece: i for i, piece in enumerate(lines)}


def _is_control(ch: str) -> bool:
    return ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs")  # unassigned (Cn) stays


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _CJK_RANGES)


def is_punctuation(ch: str) -> bool:
    """-> True for ASCII punctuation (including $ + < = > ^ ` | ~) and Unicode punctuation (categories P*)."""
    code = ord(ch)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def normalize(text: str, offset: int = 0) -> list[tuple[str, int]]:
    """text of length m -> [(char, index into the input)]: cleaned, CJK spaced, accents stripped, lower-cased."""
    chars: list[tuple[str, int]] = []
    for i, ch in enumerate(text, start=offset):
        if ch in "\x00\ufffd" or _is_control(ch):
            continue
        if ch in WHITESPACE:
            chars.append((" ", i))
        elif _is_cjk(ch):
            chars.extend(((" ", i), (ch, i), (" ", i)))
        else:
            chars.append((ch, i))
    stripped = [(c, i) for ch, i in chars for c in unicodedata.normalize("NFD", ch)
                if unicodedata.category(c) != "Mn"]
    return [(c, i) for ch, i in stripped for c in ch.lower()]


def pre_tokenize(chars: list[tuple[str, int]]) -> list[list[tuple[str, int]]]:
    """[(char, index)] -> words: runs split on spaces (dropped) and around each punctuation char (kept alone)."""
    words: list[list[tuple[str, int]]] = []
    current: list[tuple[str, int]] = []
    for ch, i in chars:
        if ch in WHITESPACE or is_punctuation(ch):
            if current:
                words.append(current)
            current = []
            if ch not in WHITESPACE:
                words.append([(ch, i)])
        else:
            current.append((ch, i))
    if current:
        words.append(current)
    return words


def word_pieces(word: str, vocabulary: dict[str, int]) -> list[str] | None:
    """word -> its greedy longest-match pieces ("##" on all but the first), or None when it must be [UNK]."""
    if len(word) > MAX_WORD_CHARS:
        return None
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else CONTINUATION + word[start:end]
            if piece in vocabulary:
                break
        else:
            return None
        pieces.append(piece)
        start = end
    return pieces


def _segment_tokens(segment: str, offset: int, vocabulary: dict[str, int]) -> list[Token]:
    tokens = []
    for word in pre_tokenize(normalize(segment, offset)):
        text = "".join(ch for ch, _ in word)
        pieces = word_pieces(text, vocabulary)
        if pieces is None:
            tokens.append(Token(UNK, vocabulary[UNK], word[0][1], word[-1][1] + 1))
            continue
        at = 0
        for piece in pieces:
            length = len(piece) - (len(CONTINUATION) if at else 0)
            first, last = word[at][1], word[at + length - 1][1]
            tokens.append(Token(piece, vocabulary[piece], first, last + 1))
            at += length
    return tokens


def tokenize(text: str, vocabulary: dict[str, int]) -> list[Token]:
    """text (m chars) -> n tokens [CLS] ... [SEP] with ids and input offsets ([CLS]/[SEP] get (0, 0))."""
    tokens = [Token(CLS, vocabulary[CLS], 0, 0)]
    at = 0
    for match in _SPECIAL_PATTERN.finditer(text):
        tokens += _segment_tokens(text[at:match.start()], at, vocabulary)
        tokens.append(Token(match.group(), vocabulary[match.group()], match.start(), match.end()))
        at = match.end()
    tokens += _segment_tokens(text[at:], at, vocabulary)
    tokens.append(Token(SEP, vocabulary[SEP], 0, 0))
    return tokens


def split_words(text: str) -> list[tuple[str, int, int]]:
    """text -> [(word, start, end)]: the whitespace-separated units of the input and their character offsets."""
    words, start = [], None
    for i, ch in enumerate(text + " "):
        if ch in WHITESPACE:
            if start is not None:
                words.append((text[start:i], start, i))
            start = None
        elif start is None:
            start = i
    return words


def word_spans(text: str, tokens: list[Token]) -> list[Word]:
    """text, its n tokens -> one Word per whitespace-separated unit, each with the tokens [first, stop) it yields."""
    real = [k for k, tok in enumerate(tokens) if tok.end > tok.start]  # [CLS]/[SEP] have no characters
    words, at = [], 0
    for word, start, end in split_words(text):
        first = real[at] if at < len(real) else len(tokens) - 1
        while at < len(real) and tokens[real[at]].start < end:
            at += 1  # tokens come in text order, and no token crosses a space
        stop = real[at - 1] + 1 if at and tokens[real[at - 1]].start >= start else first
        words.append(Word(word, start, end, first, stop))
    return words
