"""Lesson 9 with Japanese (issue 39 item 2, in part): a Japanese prompt is answered with SmolLM2's byte pieces beside
Gemma 3's tokens of the same text and the lesson that runs Gemma; the Japanese section sets Gemma's tokens of its
sentence beside SmolLM2's. The counts and tokens are computed here from the two tokenizers, not read from the page."""

from __future__ import annotations

import pytest

from attention_core.gemma import weights as gemma_weights
from attention_core.smollm2 import weights as gpt_weights
from tests.apptest_utils import assert_clean
from tests.seam import find_sentence, strings, texts

try:
    gpt_weights.gguf_path()
    gemma_weights.gguf_path()
except (gpt_weights.GPTUnavailable, gemma_weights.GemmaUnavailable) as missing:
    pytest.skip(f"a model package is absent: {missing}", allow_module_level=True)

from attention_core import gemma, smollm2  # noqa: E402
from tests.test_gpt_page import custom  # noqa: E402

PROMPT = "今日はとても良い天気ですね。"


def gemma_tokens(text: str) -> list[str]:
    tokenizer = gemma.default_model()[1]
    return [p.replace(" ", "·") for p in tokenizer.pieces(tokenizer.encode(text)[1:])]


def boxed(tokens) -> str:
    return " ".join(f"`{tok}`" for tok in tokens)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_japanese_prompt_is_set_beside_gemmas_words(lang):
    at = custom(PROMPT, lang)
    assert_clean(at)
    smol = smollm2.default_model()[1].encode(PROMPT)
    words = gemma_tokens(PROMPT)
    assert words == ["今日は", "とても", "良い", "天気", "ですね", "。"]  # whole words: no byte piece among them
    said = find_sentence([i.value for i in at.info], "gpt.ja_prompt", lang)
    assert (int(said["chars"]), int(said["n"].strip("*")), int(said["m"].strip("*"))) == (len(PROMPT), len(smol),
                                                                                           len(words))
    assert said["tokens"] == boxed(words) and int(said["pieces"]) > len(smol) // 2  # most of SmolLM2's are bytes
    assert [link.proto.page for link in at.get("page_link")] == ["modern"]  # the lesson that runs Gemma


def test_an_english_prompt_proposes_nothing():
    at = custom("The cat sat on the mat because it was tired")
    assert_clean(at)
    assert not [i for i in at.info if strings("en")["gpt.ja_prompt"][:20] in i.value]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_japanese_section_shows_gemmas_tokens_of_its_sentence(lang):
    from ui.shared.gpt_models import texts as gpt_texts

    at = custom("The cat sat on the mat", lang)
    sentence = gpt_texts().japanese
    said = find_sentence(texts(at), "gpt.ja_gemma", lang)
    words = gemma_tokens(sentence)
    assert int(said["n"].strip("*")) == len(words) and said["tokens"] == boxed(words)
    assert len(words) < len(smollm2.default_model()[1].encode(sentence))
