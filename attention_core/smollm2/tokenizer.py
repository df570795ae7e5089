"""SmolLM2's byte-level BPE tokenizer, built from the GGUF's tokens and merges.

Text -> UTF-8 bytes -> pieces (SmolLM2's pre-tokenizer: every digit alone, then GPT-2's pattern on the rest) -> each
piece's bytes written as printable characters (GPT-2's byte alphabet: a space is 'Ġ', a newline 'Ċ') -> merges
applied by rank until none applies -> ids. Typed text such as ``<|im_end|>`` stays plain text: control tokens
(ids 0-16) come only from code that adds their ids, never from what a learner types.
"""

from __future__ import annotations

import functools

import regex

from attention_core.gpt.bpe import merge_lowest_first
from attention_core.smollm2.weights import GPTVocabulary

BOS_ID = 1  # <|im_start|>
EOS_ID = 2  # <|im_end|>
ENDOFTEXT_ID = 0  # <|endoftext|>
CONTROL_TYPE = 3  # token_type of the control tokens in the GGUF

# SmolLM2's pre-tokenizer ("smollm" in llama.cpp): each number character is a piece of its own ...
DIGIT = regex.compile(r"\p{N}")
# ... then GPT-2's pattern splits the text between them (contractions, words with one leading space, numbers,
# punctuation runs, whitespace runs that leave their last space to the next word).
GPT2_PATTERN = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


@functools.lru_cache(maxsize=1)
def byte_alphabet() -> dict[int, str]:
    """-> {byte: printable character} (GPT-2's): printable Latin-1 bytes stand for themselves, the other 68 bytes
    (space, control bytes, ...) for the characters from U+0100 on, in order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    alphabet = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in alphabet:
            alphabet[b] = chr(256 + shifted)
            shifted += 1
    return alphabet


def pre_tokenize(text: str) -> list[str]:
    """text -> pieces whose concatenation is the text: every \\p{N} alone, GPT-2's pattern on the runs between."""
    pieces = []
    start = 0
    for digit in DIGIT.finditer(text):
        pieces += GPT2_PATTERN.findall(text[start:digit.start()])
        pieces.append(digit.group())
        start = digit.end()
    pieces += GPT2_PATTERN.findall(text[start:])
    return pieces


class BPETokenizer:
    """Byte-level BPE over a GPTVocabulary: encode(text) -> ids, decode(ids) -> text, token_strings(ids)."""

    def __init__(self, vocabulary: GPTVocabulary):
        self.tokens = vocabulary.tokens
        self.ids = {token: i for i, token in enumerate(vocabulary.tokens)}
        self.ranks = {tuple(merge.split(" ")): rank for rank, merge in enumerate(vocabulary.merges)}
        self.control_ids = frozenset(i for i, kind in enumerate(vocabulary.token_types) if kind == CONTROL_TYPE)
        self.alphabet = byte_alphabet()
        self.byte_of = {char: b for b, char in self.alphabet.items()}
        self._piece_ids: dict[str, tuple[int, ...]] = {}  # piece -> ids: words repeat, their merges need not
        self.bos_id, self.eos_id, self.endoftext_id = BOS_ID, EOS_ID, ENDOFTEXT_ID

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def _merge(self, symbols: list[str]) -> list[str]:
        """symbols (byte characters) -> symbols after merging the lowest-ranked adjacent pair (the leftmost among
        equals) until no adjacent pair is a known merge.

        A heap of candidate pairs over a linked list of symbols: O(n log n), so a 10,000-letter word without spaces
        takes milliseconds (rescanning every pair after each merge took 33 s)."""
        return merge_lowest_first(symbols, lambda left, right: self.ranks.get((left, right)))

    def _encode_piece(self, piece: str) -> tuple[int, ...]:
        ids = self._piece_ids.get(piece)  # one lookup: another session's thread may clear the memo at any time
        if ids is None:
            if len(self._piece_ids) > 100_000:  # bounded: a long-running server sees endless new words
                self._piece_ids.clear()
            # a byte with no token of its own is dropped, as llama.cpp and the tokenizers library do
            symbols = [self.alphabet[b] for b in piece.encode("utf-8") if self.alphabet[b] in self.ids]
            ids = tuple(self.ids[s] for s in self._merge(symbols))
            self._piece_ids[piece] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """text -> token ids (no BOS added; typed control-token look-alikes stay plain text). decode gives the text
        back unless it holds unknown_characters. Lone surrogates (U+D800-U+DFFF, not characters; a browser can still
        send them) become U+FFFD, as a UTF-16 decoder does; a valid pair becomes its character."""
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return [i for piece in pre_tokenize(text) for i in self._encode_piece(piece)]

    def unknown_characters(self, text: str) -> list[str]:
        """text -> its characters (once each, in order) holding a byte the vocabulary has no token for: encode
        drops those bytes (21 bytes: six ASCII control characters such as \\x04, and bytes that only code points
        U+40000-U+BFFFF or invalid UTF-8 use)."""
        found = {c: None for c in text if any(self.alphabet[b] not in self.ids for b in c.encode("utf-8"))}
        return list(found)

    def token_strings(self, ids) -> list[str]:
        """ids -> the vocabulary's strings, e.g. 'Ġanimal' (Ġ is a space, Ċ a newline)."""
        return [self.tokens[int(i)] for i in ids]

    def token_bytes(self, token_id: int) -> bytes:
        """id -> the bytes it stands for (a control token: its name's bytes)."""
        token = self.tokens[int(token_id)]
        if int(token_id) in self.control_ids:
            return token.encode("utf-8")
        return bytes(self.byte_of[c] for c in token)

    def decode(self, ids) -> str:
        """ids -> text (bytes joined, then UTF-8; a sequence cut inside a character shows U+FFFD there)."""
        return b"".join(self.token_bytes(i) for i in ids).decode("utf-8", errors="replace")
