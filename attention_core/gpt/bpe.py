"""The merge loop both models' tokenizers run (attention_core/smollm2/tokenizer.py: byte-level BPE, a pair's rank in
the merges list; attention_core/gemma/tokenizer.py: SentencePiece BPE, the id of the pair's concatenation)."""

from __future__ import annotations

import heapq
from typing import Callable


def merge_lowest_first(symbols: list[str], rank: Callable[[str, str], int | None]) -> list[str]:
    """symbols -> symbols after merging, again and again, the adjacent pair (a, b) of lowest rank(a, b) (the leftmost
    among equals) into a + b, until rank is None for every adjacent pair.

    A heap of candidate pairs over a linked list of symbols: O(n log n), so a 10,000-letter word without spaces takes
    milliseconds (rescanning every pair after each merge took 33 s)."""
    symbols: list[str | None] = list(symbols)
    end = len(symbols)
    after = list(range(1, end + 1))  # after[i]: the next live symbol (end: none)
    before = list(range(-1, end - 1))
    candidates: list[tuple[int, int, str, str]] = []

    def consider(i: int) -> None:  # the pair starting at live symbol i, if it merges
        j = after[i]
        if j < end and (r := rank(symbols[i], symbols[j])) is not None:
            heapq.heappush(candidates, (r, i, symbols[i], symbols[j]))

    for i in range(end - 1):
        consider(i)
    while candidates:
        _, i, left, right = heapq.heappop(candidates)
        j = after[i]
        if symbols[i] != left or j == end or symbols[j] != right:
            continue  # stale: one of its symbols has merged since (symbols only grow)
        symbols[i], symbols[j] = left + right, None
        after[i] = after[j]
        if after[j] < end:
            before[after[j]] = i
        if before[i] >= 0:
            consider(before[i])
        consider(i)
    return [s for s in symbols if s is not None]
