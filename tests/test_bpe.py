"""attention_core/gpt/bpe.py against the naive loop it replaces: rescan every adjacent pair, merge the lowest-ranked
(the leftmost among equals), until none merges (both tokenizers' tests hold it on their real vocabularies)."""

from hypothesis import given
from hypothesis import strategies as st

from attention_core.gpt.bpe import merge_lowest_first


def naive_merge(symbols: list[str], rank) -> list[str]:
    symbols = list(symbols)
    while True:
        ranked = [(rank(a, b), i) for i, (a, b) in enumerate(zip(symbols, symbols[1:])) if rank(a, b) is not None]
        if not ranked:
            return symbols
        _, i = min(ranked)
        symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]


MERGES = ["ab", "bc", "abc", "aa", "aaa", "ca", "cab", "bb", "abb", "aab"]  # a token's rank: its place in this list


def rank_by_concatenation(left: str, right: str):
    joined = left + right
    return MERGES.index(joined) if joined in MERGES else None


@given(st.text(alphabet="abc", max_size=40))
def test_the_heap_merges_as_the_naive_rescanning_loop(text):
    assert merge_lowest_first(list(text), rank_by_concatenation) == naive_merge(list(text), rank_by_concatenation)


def test_equal_ranks_merge_the_leftmost_first():
    # "aaa": the pair at 0 and the pair at 1 are both "aa"; the leftmost merges, leaving ["aa", "a"], then "aaa"
    assert merge_lowest_first(list("aaa"), lambda a, b: 0 if a + b == "aa" else None) == ["aa", "a"]
    assert merge_lowest_first([], rank_by_concatenation) == [] and merge_lowest_first(["x"], rank_by_concatenation) == ["x"]
