"""Tokeniser, GloVe loader and preset loader."""

import numpy as np
import pytest

from attention_core import PresetError, embed, load_glove, load_sentences, read_preset, split_known, tokenize
from attention_core.glove import GloveUnavailable
from attention_core.sentences import _validate as validate_sentences


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("The animal didn't cross the street.", ["the", "animal", "did", "n't", "cross", "the", "street", "."]),
        ("It's I'm we'll they'd you're", ["it", "'s", "i", "'m", "we", "'ll", "they", "'d", "you", "'re"]),
        ("Can't WON'T", ["ca", "n't", "wo", "n't"]),
        ("don\u2019t", ["do", "n't"]),
        ("well-known 3.14, (yes)!", ["well-known", "3.14", ",", "(", "yes", ")", "!"]),
        ("", []),
        ("   \t\n ", []),
        ("a\x00b\x07c", ["a", "b", "c"]),
        ("<script>alert(1)</script>", ["<", "script", ">", "alert", "(", "1", ")", "<", "/", "script", ">"]),
    ],
)
def test_tokenize(text, tokens):
    assert tokenize(text) == tokens


def test_tokenize_never_fails_on_odd_text():
    for text in ["😀🙃", "猫がマットに座った", "שלום עולם", "\u202eabc", "x" * 10_000, "$\\", "[x](javascript:alert(1))"]:
        out = tokenize(text)
        assert isinstance(out, list) and all(isinstance(t, str) and t for t in out)


def test_glove_loads_real_vectors_without_copy(glove):
    assert len(glove.index_to_key) == 400_000 and glove.vector_size == 50
    np.testing.assert_allclose(glove["the"][:3], [0.418, 0.24968, -0.41242], rtol=1e-6)
    assert isinstance(glove.vectors, np.memmap)  # memory-mapped, not an 80 MB copy
    assert {"did", "n't", "animal", "it"} <= set(glove.key_to_index)


def test_embed_reports_unknown_words(glove):
    vectors, unknown = embed(tokenize("the animal 😀 xqzzyv the"), glove)
    assert vectors.shape == (3, 50) and vectors.dtype == np.float64
    assert unknown == ["😀", "xqzzyv"]
    assert split_known(["猫", "cat", "猫"], glove) == (["cat"], ["猫"])
    empty, unknown = embed(["猫"], glove)
    assert empty.shape == (0, 50) and unknown == ["猫"]


def test_load_glove_missing_files_is_a_clear_error(tmp_path):
    with pytest.raises(GloveUnavailable, match="pip install"):
        load_glove(tmp_path)


def test_load_glove_corrupt_files_is_a_clear_error(tmp_path):
    (tmp_path / "glove_6B_50d_emb.npy").write_bytes(b"not a numpy file")
    (tmp_path / "glove_6B_index.parquet").write_bytes(b"nope")
    with pytest.raises(GloveUnavailable, match="could not be read"):
        load_glove(tmp_path)


def test_sentences_load():
    sentences = load_sentences()
    assert sentences[0].id == "animal_tired"
    assert all(s.label["en"] and s.label["ja"] for s in sentences)


@pytest.mark.parametrize(
    "content, message",
    [
        ("sentences = 3", "field 'sentences'"),
        ("[[sentences]]\nid = 'a'\nlabel = {en='x', ja='y'}", "field 'sentences[0].text': is missing"),
        ("[[sentences]]\nid = 'a'\ntext = 'x'\nlabel = {en='x'}", "field 'sentences[0].label.ja': is missing"),
        ("[[sentences]]\nid = 'a'\ntext = 5\nlabel = {en='x', ja='y'}", "field 'sentences[0].text': must be str"),
        ("[[sentences]\n", "not valid TOML"),
    ],
)
def test_preset_errors_name_file_and_field(tmp_path, content, message):
    (tmp_path / "sentences.toml").write_text(content)
    with pytest.raises(PresetError, match="sentences.toml") as info:
        read_preset("sentences", validate_sentences, tmp_path)
    assert message in str(info.value)


def test_missing_preset_file(tmp_path):
    with pytest.raises(PresetError, match="missing"):
        load_sentences(tmp_path)


def test_one_sentence_one_tokenisation_across_pages(glove):
    """GloVe 6B (Stanford tokenizer) has "n't" as a word (and "did", "not"), not "didn't": so
    "didn't" -> "did" "n't" everywhere. The GloVe page and the causal page start from the same sentence, Document A's
    "did not", get the same tokens, and the GloVe page's raw row of "it" (18.0 % on itself)."""
    from attention_core.glove.rows import raw_row
    from tests.apptest_utils import open_page

    assert {"n't", "did", "not"} <= set(glove.key_to_index) and "didn't" not in glove.key_to_index
    at = open_page("glove")
    glove_page_text = at.text_input(key="glove_sentence").value
    causal_text = load_sentences()[0].text
    assert glove_page_text == causal_text
    tokens = tokenize(glove_page_text)
    assert tokens[2:4] == ["did", "not"]
    known = split_known(tokens, glove)[0]
    assert known == tokens
    X = embed(known, glove)[0]
    it = known.index("it")
    assert f"{raw_row(X, it)[it]:.1%}" == "18.0%" and f"{raw_row(X, it)[it]:.4f}" == "0.1801"
