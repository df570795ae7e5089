"""SmolLM2's byte-level BPE against the `tokenizers` library built from the same vocabulary and merges, with
SmolLM2's pre-tokenizer (each digit alone, then byte-level with GPT-2's pattern)."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.smollm2 import tokenizer as gpt_tokenizer

from attention_core.smollm2 import weights as gpt_weights
from tests.hypothesis_budget import examples

tokenizers = pytest.importorskip("tokenizers", reason="the reference tokenizer (requirements-dev.txt) is absent")
try:
    GGUF = gpt_weights.gguf_path()
except gpt_weights.GPTUnavailable as missing:
    pytest.skip(f"the model package is absent: {missing}", allow_module_level=True)

HAND_WRITTEN = [
    # English, contractions, case
    "The animal didn't cross the street because it was too tired.", "The capital of France is",
    "you're we'll they'd I'm it's", "THE ANIMAL DIDN'T", "rock'n'roll O'Neill's", "state-of-the-art e-mail",
    "hello", "a", " ", "", "I", "antidisestablishmentarianism", "xqzjvbkw qwrtp", "Tokenizers BPE GPT",
    # digits alone, after spaces, in numbers and dates
    "2024", " 2024", "In 2024, 3 cats ran 42 times.", "3.14159", "1,000,000", "$100", "50%", "12:30pm",
    "2026-12-01", "one2three", "4th 21st", "x1 y22 z333", "  7", "\t8", "\n9", "a  1  b", "１２３ ４", "²³ ½ ¾",
    "٣٤٥", "ⅷ Ⅻ", "0x1F 0b1010", "1e-5 +3.0E8", "v1.2.3-beta",
    # whitespace runs, tabs, newlines
    "a  b", "a   b", "a \n b", "a\n\nb", "a\r\nb", "\n", "\n\n\n", "   ", "  leading", "trailing  ", "\tx\t\ty",
    "line one\nline two\n", "a \u00a0b", "\u2003em space", "x\u3000y", "tab\tand  spaces \n\n end",
    # punctuation, symbols, code
    "!!!", "...", "?!?!", "---", "(((a)))", '"quoted"', "'single'", "a,b;c:d", "#hashtag @user", "a/b\\c",
    "$+<=>^`|~", "C++ & C#", "def f(x):\n    return x ** 2\n", "for (int i = 0; i < n; i++) {}", "«guillemets»",
    "“curly” ‘quotes’", "—em dash– en dash", "…", "¿Qué? ¡Sí!", "'s 't 're 've 'm 'll 'd", "it's'", "''",
    # control-token look-alikes and HTML: plain text
    "<|im_end|>", "<|im_start|>user\nhi<|im_end|>", "<|endoftext|>", "<repo_name>", "<|im_start|>", "<|",
    "<script>alert('x')</script>", "<b>bold</b> &amp; &lt;", "<!-- comment -->", "<a href=\"x\">link</a>",
    # accents, other scripts
    "Café naïve résumé", "crème brûlée", "Zürich Köln Ærø", "e\u0301", "n\u0303o", "Ångström", "Straße",
    "ﬁnance", "Ελληνικά", "Русский язык", "עברית", "العربية", "हिन्दी", "ไทย", "한국어", "Tiếng Việt",
    # Japanese and CJK
    "日本の首都は東京です。", "日本の首都は", "猫が好きです", "これはペンです", "東京タワー", "日本語とEnglish", "ｶﾀｶﾅ",
    "漢字 かな カナ", "令和8年12月1日", "一二三", "中文字符",
    # emoji, combining sequences, odd characters
    "🙂", "emoji 🙂👍🏽", "👨‍👩‍👧‍👦", "🇯🇵🇫🇷", "❤️", "a\u200bb", "\u200d", "\ufeffbom", "\x00\x01\x7f", "\U0010ffff",
]
PIECES = ["word", " word", "7", " 7", "  ", "\n", "'s", "!?", "日本", "🙂", "é", "<|im_end|>", "\t", "99"]
COMBINED = ["".join(pair) for pair in itertools.islice(itertools.product(PIECES, repeat=2), 0, None, 4)]
STRINGS = HAND_WRITTEN + COMBINED


@pytest.fixture(scope="module")
def vocabulary():
    return gpt_weights.read_vocabulary(GGUF)


@pytest.fixture(scope="module")
def tokenizer(vocabulary):
    return gpt_tokenizer.BPETokenizer(vocabulary)


@pytest.fixture(scope="module")
def reference(vocabulary):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    ids = {token: i for i, token in enumerate(vocabulary.tokens)}
    merges = [tuple(merge.split(" ")) for merge in vocabulary.merges]
    made = Tokenizer(models.BPE(ids, merges))
    made.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                  pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    made.decoder = decoders.ByteLevel()
    return made


def test_the_strings_are_many_and_distinct():
    assert len(set(STRINGS)) >= 150


@pytest.mark.parametrize("text", STRINGS)
def test_ids_match_the_tokenizers_library(tokenizer, reference, text):
    assert tokenizer.encode(text) == reference.encode(text).ids


@pytest.mark.parametrize("text", STRINGS)
def test_decoding_gives_the_text_back(tokenizer, reference, text):
    ids = tokenizer.encode(text)
    assert tokenizer.decode(ids) == text
    assert reference.decode(ids) == text


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab 1 2\n\t'sé日🙂<|>_.")) |
               st.characters(blacklist_categories=("Cs",)), max_size=40))  # surrogates: the next test
def test_any_text_matches_and_round_trips(tokenizer, reference, text):
    ids = tokenizer.encode(text)
    assert ids == reference.encode(text).ids
    if not tokenizer.unknown_characters(text):
        assert tokenizer.decode(ids) == text


def test_long_words_without_spaces_match(tokenizer, reference):
    rng = random.Random(0)
    for text in ("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(10_000)), "a" * 10_000,
                 "日本の首都は東京です" * 300, "".join(rng.choice("ab ") for _ in range(3000)), "🙂" * 700):
        ids = tokenizer.encode(text)
        assert ids == reference.encode(text).ids
        assert tokenizer.decode(ids) == text


def test_lone_surrogates_become_replacement_characters(tokenizer):
    assert tokenizer.encode("a\ud800b") == tokenizer.encode("a\ufffdb")
    assert tokenizer.encode("\udfff") == tokenizer.encode("\ufffd")
    assert tokenizer.encode("\ud83d\ude42") == tokenizer.encode("\U0001f642")  # a valid pair is its character


def test_bytes_without_a_token_are_dropped_like_the_library_does(tokenizer, reference, vocabulary):
    alphabet = gpt_tokenizer.byte_alphabet()
    known = set(vocabulary.tokens)
    missing = sorted(b for b in range(256) if alphabet[b] not in known)
    assert missing == [0x04, 0x06, 0x13, 0x14, 0x16, 0x1D, 0xC0, 0xC1, 0xF1, 0xF2, *range(0xF5, 0x100)]
    for text in ("a\x04b", "x\U00040000y", "\x13\x14", "plain"):
        assert tokenizer.encode(text) == reference.encode(text).ids
    assert tokenizer.encode("\x04") == []
    assert tokenizer.unknown_characters("a\x04b\U00040000\x04 c") == ["\x04", "\U00040000"]
    assert tokenizer.unknown_characters("日本 🙂 \x00\x7f") == []
    assert tokenizer.decode(tokenizer.encode("a\x04b")) == "ab"


def test_typed_control_tokens_stay_plain_text(tokenizer, vocabulary):
    controls = {i for i, kind in enumerate(vocabulary.token_types) if kind == 3}
    assert controls == set(range(17))
    assert [vocabulary.tokens[i] for i in (0, 1, 2)] == ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    assert (tokenizer.endoftext_id, tokenizer.bos_id, tokenizer.eos_id) == (0, 1, 2)
    for text in ("<|im_end|>", "<|im_start|>assistant\n", "<|endoftext|>", "<repo_name>"):
        ids = tokenizer.encode(text)
        assert not controls & set(ids), text
        assert len(ids) > 1
    assert tokenizer.decode([1, 2]) == "<|im_start|><|im_end|>"  # ids added by code decode to their names


def test_every_digit_is_its_own_token(tokenizer):
    assert tokenizer.token_strings(tokenizer.encode("2024")) == ["2", "0", "2", "4"]
    assert tokenizer.token_strings(tokenizer.encode("in 42")) == ["in", "Ġ", "4", "2"]


def test_token_strings_are_the_vocabulary_spelling(tokenizer, vocabulary):
    ids = tokenizer.encode("The animal\nsat")
    assert tokenizer.token_strings(ids) == [vocabulary.tokens[i] for i in ids]
    assert tokenizer.token_strings(ids) == ["The", "Ġanimal", "Ċ", "sat"]


def test_a_cut_inside_a_character_shows_a_replacement_mark(tokenizer):
    ids = tokenizer.encode("日")
    assert len(ids) >= 2
    assert tokenizer.decode(ids[:1]) == "\ufffd"
    assert tokenizer.decode(ids) == "日"


def test_the_byte_alphabet_is_gpt2s():
    alphabet = gpt_tokenizer.byte_alphabet()
    assert sorted(alphabet) == list(range(256))
    assert len(set(alphabet.values())) == 256
    assert (alphabet[ord(" ")], alphabet[ord("\n")], alphabet[ord("\t")], alphabet[ord("A")]) == ("Ġ", "Ċ", "ĉ", "A")


def test_pre_tokenizer_pieces_rebuild_the_text():
    text = "In 2024,  it's\n\n 42 日本🙂"
    pieces = gpt_tokenizer.pre_tokenize(text)
    assert "".join(pieces) == text
    assert pieces[:6] == ["In", " ", "2", "0", "2", "4"]


@pytest.mark.slow
def test_the_cached_vocabulary_is_the_files(vocabulary):
    import gguf

    reader = gguf.GGUFReader(GGUF)
    assert list(vocabulary.tokens) == reader.fields["tokenizer.ggml.tokens"].contents()
    assert list(vocabulary.merges) == reader.fields["tokenizer.ggml.merges"].contents()
    assert list(vocabulary.token_types) == reader.fields["tokenizer.ggml.token_type"].contents()
