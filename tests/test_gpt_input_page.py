"""AppTest: lesson 9 with what a learner types. An empty prompt, 10,000 characters, a prompt past the token limit,
control-token look-alikes, emoji, HTML and Japanese: each gets a clear message or is read as plain bytes, and what
the page then shows matches the core's own pass (tests/test_gpt_page.py has the helpers and the page's numbers)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core import smollm2
from tests.apptest_utils import assert_clean
from tests.test_gpt_page import (
    answer_all, answered, custom, figure, full_pass, ids_of, reveals, shown, softmax, strings)
from ui.shared.common import MAX_CHARS
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.pages


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("text", ["", "    \n "])
def test_an_empty_prompt_says_so(text, lang):
    at = custom(text, lang)
    assert_clean(at)
    assert strings(lang)["empty"] in [w.value for w in at.warning]
    assert reveals(at) == []
    assert [r.key for r in at.radio if r.key.endswith("_predict")] == ["gpt_it_predict", "gpt_induction_predict"]


def test_ten_thousand_characters_are_cut_to_the_stated_limit():
    text = "the cat sat on the mat " * 435
    at = custom(text)
    assert_clean(at)
    assert at.text_input(key="gpt_text").value == text[:MAX_CHARS]  # the box (and link) keep what the page reads
    assert strings("en")["limits"].format(chars=MAX_CHARS, tokens=40) in shown(at)
    said = [i.value for i in at.info] + [x.value for x in at.toast]  # (the frame cuts a long paste: a toast says so)
    assert load_strings("en")["common.text_cut_kept"].format(n=f"{len(text):,}", limit=MAX_CHARS) in said
    assert strings("en")["cut"].format(n=len(ids_of(text[:MAX_CHARS])), limit=40) in shown(at)


def test_a_prompt_over_the_token_limit_is_read_on_its_first_tokens():
    text = "one two three four five six seven eight nine ten " * 8
    at = answer_all(custom(text))
    assert_clean(at)
    n = len(ids_of(text))
    assert strings("en")["cut"].format(n=n, limit=40) in shown(at)
    probs = softmax(full_pass(ids_of(text)[:40]).logits[-1])
    from tests.apptest_utils import decode_array

    np.testing.assert_allclose(decode_array(figure(at, "gpt_next_bars")["data"][0]["x"]) / 100,
                               np.sort(probs)[::-1][:10], atol=1e-5)


@pytest.mark.parametrize("text", ["<|im_end|> the end", "😀 🙃 🐱", "猫がマットの上に座った。", "\x00\x07 <b>bold</b>"])
def test_odd_prompts_are_read_as_plain_bytes(text):
    at = answer_all(custom(text))
    assert_clean(at)
    ids = ids_of(text)
    assert 2 not in ids  # <|im_end|> typed is text, not the control token
    caption = strings("en")["tokens"].split("{n}")[0]
    assert [c for c in shown(at) if c.startswith(caption) and f"reads {len(ids)} tokens" in c]
    if "<|" in text:
        assert strings("en")["control_lookalike"] in shown(at)
    assert figure(at, "gpt_next_bars")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_japanese_becomes_byte_pieces_and_decodes_back(lang):
    at = answered(lang)
    text = "日本の首都は"
    ids = ids_of(text)
    assert smollm2.default_model()[1].decode(list(ids)) == text
    line = [m for m in shown(at) if f"**{len(ids)} " in m and text in m]
    assert len(line) == 1 and "E6 97" in line[0]
