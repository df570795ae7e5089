"""Japanese text is split into words by MeCab (fugashi + UniDic), English as before; the reference segmentations
below are UniDic's short units, checked by hand."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, strategies as st

from attention_core.text import JapaneseSegmenterUnavailable, clean_text, has_japanese, tokenize
from tests.apptest_utils import assert_clean, open_page
from ui.shared.common import md_escape
from ui.shared.i18n import load_strings

JAPANESE = st.text(alphabet=st.sampled_from("猫がマットの上に座ったそれは満足そうだ。、「」花子太郎本を貸しー々"), max_size=30)


def test_the_lesson_sentences_are_split_into_words():
    assert tokenize("猫がマットの上に座った。それは満足そうだった。") == [
        "猫", "が", "マット", "の", "上", "に", "座っ", "た", "。", "それ", "は", "満足", "そう", "だっ", "た", "。"]
    assert tokenize("花子は太郎に本を貸した。") == ["花子", "は", "太郎", "に", "本", "を", "貸し", "た", "。"]


def test_mixed_text_keeps_english_rules_around_japanese_words():
    assert tokenize("The cat didn't sit: 猫が座った!") == ["the", "cat", "did", "n't", "sit", ":", "猫", "が", "座っ", "た", "!"]
    assert tokenize("ＡＢＣの本") == ["abc", "の", "本"]  # full-width letters are NFKC-folded to ASCII first


def test_english_only_text_is_tokenised_as_glove_was():
    assert tokenize("It's the animal's street, isn't it?") == [
        "it", "'s", "the", "animal", "'s", "street", ",", "is", "n't", "it", "?"]
    assert not has_japanese("The animal didn't cross the street") and has_japanese("猫") and has_japanese("。")


@given(JAPANESE)
def test_japanese_words_join_back_to_the_text(text):
    words = tokenize(text)
    assert "".join(words) == re.sub(r"\s", "", clean_text(text))
    assert all(w and not re.search(r"\s", w) for w in words)


@given(st.text(max_size=60))
def test_any_text_gives_tokens_without_spaces(text):
    assert all(token and not re.search(r"\s", token) for token in tokenize(text))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_page_shows_the_japanese_words_it_found(lang):
    at = open_page("causal", lang)
    at.selectbox(key="causal_preset").set_value("custom").run()
    at.text_input(key="causal_text").input("猫がマットの上に座った。").run()
    assert_clean(at)
    words = " · ".join(["猫", "が", "マット", "の", "上", "に", "座っ", "た", "。"])
    assert any(words in c.value for c in at.caption), [c.value for c in at.caption]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_without_the_word_splitter_japanese_text_gets_a_message(monkeypatch, lang):
    def missing():
        raise JapaneseSegmenterUnavailable("No module named 'fugashi'")

    monkeypatch.setattr("attention_core.text.japanese_segmenter", missing)
    at = open_page("causal", lang)
    at.selectbox(key="causal_preset").set_value("custom").run()
    at.text_input(key="causal_text").input("猫がマットの上に座った。").run()
    assert not at.exception
    assert [e.value for e in at.error] == [load_strings(lang)["common.japanese_unavailable"].format(
        detail=md_escape("No module named 'fugashi'"))]
    at.text_input(key="causal_text").input("The cat sat on the mat").run()  # English needs no splitter
    assert_clean(at)
