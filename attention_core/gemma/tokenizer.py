"""Gemma 3's tokenizer, rebuilt from the GGUF's tokens and token types (the file has no merges list).

Text -> the user-defined tokens split out first (runs of newlines or tabs, HTML tags; the longest first) -> in the
text between them each space becomes '▁' (no '▁' added in front) -> characters -> the adjacent pair whose
concatenation is a token with the lowest id merged, again and again (the user-defined runs of 2-31 spaces are merged
into like normal tokens: 32 spaces become 16 + 16, as in transformers, not 31 + 1) -> whatever is not a token
becomes its UTF-8 bytes (<0x00>..<0xFF>) -> the start token <bos> (id 2) in front. This equals transformers'
tokenizer read from the same file (tests/fixtures/gemma_tokenizer.json). Ranking merges by the file's scores instead
fails on runs of spaces (their score is 0). Typed control-token names such as ``<eos>`` stay plain text, as
transformers does with split_special_tokens=True: control tokens come only from code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from attention_core.gpt.bpe import merge_lowest_first

BOS_ID = 2  # <bos>: the model breaks without it (the weight on position 0 falls from 0.47 to 0.01)
EOS_ID = 1  # <eos>
NORMAL_IDS = range(494, 255968)  # every normal token's id, and no other (tests/test_gemma_tokenizer.py reads the file)
NORMAL, CONTROL, USER_DEFINED, BYTE = 1, 3, 4, 6  # the GGUF's token types
SPACE = "\u2581"  # '▁': SentencePiece's space


def valid_text(text: str) -> str:
    """text -> the same text with each lone surrogate (U+D800-U+DFFF: not a character, a browser can still send one)
    as U+FFFD, as a UTF-16 decoder does; a valid pair becomes its character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class GemmaTokenizer:
    """Gemma 3's BPE over the GGUF's vocabulary: encode(text) -> ids (<bos> first), decode(ids) -> text,
    pieces(ids) -> what each id shows, token_bytes(id) -> the bytes it stands for."""

    def __init__(self, tokens: Sequence[str], token_type: Sequence[int]):
        if len(tokens) != len(token_type):
            raise ValueError(f"{len(tokens)} tokens but {len(token_type)} token types")
        self.tokens = tuple(tokens)
        self.token_type = tuple(int(kind) for kind in token_type)
        # normal tokens and the runs of spaces are merged into (a typed "<0x41>" or "<eos>" stays text)
        self.ids = {tok.replace(" ", SPACE): i for i, (tok, kind) in enumerate(zip(self.tokens, self.token_type))
                    if kind == NORMAL or (kind == USER_DEFINED and tok and not tok.strip(" "))}
        self.byte_ids = {int(tok[3:5], 16): i for i, (tok, kind) in enumerate(zip(self.tokens, self.token_type))
                         if kind == BYTE}
        if len(self.byte_ids) != 256:
            raise ValueError(f"the vocabulary has {len(self.byte_ids)} byte tokens, not 256")
        # the other user-defined tokens (runs of newlines or tabs, HTML tags) are split out of the text first
        user = sorted({tok for tok, kind in zip(self.tokens, self.token_type)
                       if kind == USER_DEFINED and tok.strip(" ")}, key=len, reverse=True)
        self.user_ids = {tok: self.tokens.index(tok) for tok in user}
        # alternation tries the longest first, so "\n\n" is one token, not two "\n"
        self.user_pattern = re.compile("|".join(re.escape(tok) for tok in user)) if user else None
        self.bos_id, self.eos_id = BOS_ID, EOS_ID

    @property
    def vocab_size(self) -> int:
        return len(self.tokens)

    def _merge(self, symbols: list[str]) -> list[str]:
        """symbols (characters) -> symbols after merging, again and again, the adjacent pair whose concatenation is
        the token with the lowest id (the leftmost among equals) until no adjacent pair is a token.

        A heap of candidate pairs over a linked list: O(n log n), so 10,000 characters take milliseconds."""
        return merge_lowest_first(symbols, lambda left, right: self.ids.get(left + right))

    def _encode_segment(self, segment: str) -> list[int]:
        """text without user-defined tokens -> ids (no <bos>); a symbol that is no token -> its UTF-8 bytes."""
        ids: list[int] = []
        for symbol in self._merge(list(segment.replace(" ", SPACE))):
            token_id = self.ids.get(symbol)
            if token_id is None:
                ids.extend(self.byte_ids[b] for b in symbol.encode("utf-8"))
            else:
                ids.append(token_id)
        return ids

    def encode(self, text: str) -> list[int]:
        """text -> token ids, <bos> (2) first; empty text -> [2]. decode gives the text back (lone surrogates
        become U+FFFD)."""
        text = valid_text(text)
        ids = [BOS_ID]
        start = 0
        if self.user_pattern is not None:
            for match in self.user_pattern.finditer(text):
                ids += self._encode_segment(text[start:match.start()])
                ids.append(self.user_ids[match.group()])
                start = match.end()
        ids += self._encode_segment(text[start:])
        return ids

    def token_bytes(self, token_id: int) -> bytes:
        """id -> the UTF-8 bytes it stands for ('▁' as a space; a byte token: its byte; a control token: none)."""
        token_id = int(token_id)
        kind = self.token_type[token_id]
        if kind == BYTE:
            return bytes([int(self.tokens[token_id][3:5], 16)])
        if kind == CONTROL:
            return b""
        return self.tokens[token_id].replace(SPACE, " ").encode("utf-8")

    def decode(self, ids) -> str:
        """ids -> text: control tokens (<bos>, <eos>, ...) left out, bytes joined, then UTF-8 (bytes that are not
        a whole character show U+FFFD)."""
        return b"".join(self.token_bytes(i) for i in ids).decode("utf-8", errors="replace")

    def pieces(self, ids) -> list[str]:
        """ids -> one string per id, what it shows: '▁' as a space, a control token by its name. Byte tokens are
        joined into characters: the byte that completes a character shows it, the bytes before it in that character
        show ''; a byte that completes none shows its token's name ('<0xE6>')."""
        shown: list[str] = []
        pending: list[int] = []  # positions of byte tokens not yet part of a whole character

        def flush() -> None:  # the pending bytes will never complete a character
            for position in pending:
                shown[position] = self.tokens[ids[position]]
            pending.clear()

        ids = [int(i) for i in ids]
        for position, token_id in enumerate(ids):
            if self.token_type[token_id] != BYTE:
                flush()
                shown.append(self.tokens[token_id] if self.token_type[token_id] == CONTROL
                             else self.tokens[token_id].replace(SPACE, " "))
                continue
            if pending and self.token_bytes(token_id)[0] & 0xC0 != 0x80:
                flush()  # a lead byte (or ASCII) starts a new character
            shown.append("")
            pending.append(position)
            raw = b"".join(self.token_bytes(ids[p]) for p in pending)
            try:
                character = raw.decode("utf-8")
            except UnicodeDecodeError:
                if len(raw) >= 4:
                    flush()
                continue
            shown[position] = character
            pending.clear()
        flush()
        return shown
