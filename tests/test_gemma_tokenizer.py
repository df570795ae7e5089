"""Gemma 3's tokenizer against transformers' (tests/fixtures/gemma_tokenizer.json: its ids for 314 strings, read
from the same GGUF file by tests/reference/make_gemma_fixtures.py), round trips, the start token, bad input, and
Japanese read as words against SmolLM2's byte pieces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.gemma import weights as gemma_weights
from attention_core.gemma.tokenizer import BOS_ID, BYTE, GemmaTokenizer
from tests.hypothesis_budget import examples

FIXTURE = Path(__file__).parent / "fixtures" / "gemma_tokenizer.json"
CASES = json.loads(FIXTURE.read_text(encoding="utf-8"))["cases"]
CONTROL_NAMES = ("<bos>", "<eos>", "<pad>", "<unk>", "<unused0>")
try:
    GGUF = gemma_weights.gguf_path()
except gemma_weights.GemmaUnavailable as missing:
    pytest.skip(f"Gemma's packages are absent: {missing}", allow_module_level=True)

JAPANESE = [  # 20 sentences written for this test (none in the tokenizer fixture)
    "今朝は駅まで歩いて行きました。", "この町には古いお寺がたくさんあります。", "彼は毎晩遅くまで本を読んでいる。",
    "雨の日は家で料理をするのが好きです。", "来週の月曜日に試験があります。", "母が作ったカレーはとてもおいしい。",
    "電車の中で財布を落としてしまった。", "私たちは夏に北海道へ旅行しました。", "窓を開けると冷たい風が入ってきた。",
    "この問題の答えを誰か知っていますか。", "弟は野球の練習に毎日通っている。", "新しい先生はとても親切な人です。",
    "週末は友達と山に登る予定です。", "空港までバスで一時間かかります。", "コンピューターが急に動かなくなった。",
    "川の近くに小さな公園ができた。", "朝ごはんにパンと牛乳を食べました。", "その映画は思ったより短かった。",
    "祖父は若いころ漁師として働いていた。", "明日の天気予報によると晴れるそうです。",
]


@pytest.fixture(scope="module")
def tokenizer() -> GemmaTokenizer:
    vocabulary = gemma_weights.read_vocabulary(GGUF)
    return GemmaTokenizer(vocabulary.tokens, vocabulary.token_type)


def test_the_fixture_covers_every_kind_of_text():
    texts = [case["text"] for case in CASES]
    assert len(texts) >= 300
    assert any("東京" in t for t in texts) and any("def " in t for t in texts) and any("😀" in t for t in texts)
    assert " " * 64 in texts and "\t" * 40 in texts and "<b>bold</b>" in texts and "" in texts
    assert sum(len(case["ids_split_special"]) for case in CASES) > 2000


def test_ids_equal_transformers_on_every_fixture_string(tokenizer):
    wrong = [(case["text"], tokenizer.encode(case["text"]), case["ids_split_special"]) for case in CASES
             if tokenizer.encode(case["text"]) != case["ids_split_special"]]
    assert not wrong, f"{len(wrong)} of {len(CASES)} differ, e.g. {wrong[:3]}"


def test_typed_control_names_stay_text_where_transformers_by_default_reads_them(tokenizer):
    for name in CONTROL_NAMES:
        default = next(case["ids"] for case in CASES if case["text"] == name)
        assert len(default) == 2 and default[1] < 10  # transformers' default: the control token itself
        ids = tokenizer.encode(name)
        assert len(ids) > 2 and tokenizer.decode(ids) == name
    other = [case for case in CASES if case["text"] not in CONTROL_NAMES]
    assert all(case["ids"] == case["ids_split_special"] for case in other)


def test_japanese_sentence_is_read_as_words(tokenizer):
    ids = tokenizer.encode("今日はとても良い天気ですね。")
    assert tokenizer.pieces(ids) == ["<bos>", "今日は", "とても", "良い", "天気", "ですね", "。"]


def test_space_runs_merge_as_transformers_does(tokenizer):
    # 32 spaces: 16 + 16 (the merges), not the longest run (31) + 1
    assert tokenizer.pieces(tokenizer.encode(" " * 32)) == ["<bos>", " " * 16, " " * 16]


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\u2581"), max_size=80))
def test_decode_gives_the_text_back(tokenizer, text):
    ids = tokenizer.encode(text)
    assert ids[0] == BOS_ID and BOS_ID not in ids[1:]
    assert tokenizer.decode(ids) == text
    assert "".join(tokenizer.pieces(ids[1:])) == text


def test_the_pieces_join_byte_tokens_into_the_character_they_complete(tokenizer):
    rare = "\U00020021"  # a CJK Extension B character with no token of its own: four byte tokens
    ids = tokenizer.encode("a" + rare)
    assert [tokenizer.token_type[i] for i in ids[2:]] == [BYTE] * 4
    assert tokenizer.pieces(ids) == ["<bos>", "a", "", "", "", rare]
    cut = ids[:4]  # two of the four bytes: no character completed, each shows its byte token's name
    assert tokenizer.pieces(cut)[2:] == ["<0xF0>", "<0xA0>"]
    assert tokenizer.decode(cut) == "a\ufffd"


@pytest.mark.parametrize("text", ["", " ", "x" * 10_000, "日本" * 5000, "😀" * 3000, "<script>alert(1)</script>",
                                  "\x00\x01\x1b[0m\x7f", "\ud800", "a\udfffb", "<eos><bos>", "\u2581" * 40])
def test_bad_input_never_raises_and_starts_with_the_start_token(tokenizer, text):
    ids = tokenizer.encode(text)
    assert ids[0] == BOS_ID and BOS_ID not in ids[1:]
    assert all(0 <= i < tokenizer.vocab_size for i in ids)
    assert len(tokenizer.pieces(ids)) == len(ids)
    if text == "":
        assert ids == [BOS_ID]
    elif "\u2581" not in text:
        expected = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        assert tokenizer.decode(ids) == expected


def test_decode_leaves_control_tokens_out(tokenizer):
    assert tokenizer.decode([BOS_ID, *tokenizer.encode("hi")[1:], tokenizer.eos_id]) == "hi"


def test_japanese_tokens_are_words_where_smollm2s_are_byte_pieces(tokenizer):
    from attention_core.smollm2 import default_model
    smollm2 = default_model()[1]
    characters = sum(len(s) for s in JAPANESE)
    gemma_ids = [tokenizer.encode(s)[1:] for s in JAPANESE]
    gemma_tokens = sum(len(ids) for ids in gemma_ids)
    assert all(tokenizer.token_type[i] != BYTE for ids in gemma_ids for i in ids)
    assert all(piece and piece in sentence for sentence, ids in zip(JAPANESE, gemma_ids)
               for piece in tokenizer.pieces(ids))
    assert gemma_tokens / characters < 0.8
    smollm2_ids = [smollm2.encode(s) for s in JAPANESE]
    smollm2_tokens = sum(len(ids) for ids in smollm2_ids)
    broken = sum(1 for ids in smollm2_ids for i in ids
                 if not _whole_characters(smollm2.token_bytes(i)))
    assert smollm2_tokens / characters > 1.2 and smollm2_tokens > 2 * gemma_tokens
    assert broken > smollm2_tokens / 2


def _whole_characters(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.slow
def test_the_vocabulary_equals_the_gguf_packages_reading():
    from gguf import GGUFReader
    fields = GGUFReader(str(GGUF)).fields

    def strings(name):
        return [bytes(fields[name].parts[i]).decode("utf-8") for i in fields[name].data]

    def numbers(name):
        return [int(fields[name].parts[i][0]) for i in fields[name].data]

    vocabulary = gemma_weights.read_vocabulary(GGUF)
    assert list(vocabulary.tokens) == strings("tokenizer.ggml.tokens")
    assert list(vocabulary.token_type) == numbers("tokenizer.ggml.token_type")


def test_normal_ids_are_exactly_the_files_normal_tokens(tokenizer):
    from attention_core.gemma.tokenizer import NORMAL_IDS

    normal = [i for i, kind in enumerate(tokenizer.token_type) if kind == 1]  # NORMAL in the GGUF's token types
    assert normal == list(NORMAL_IDS)
