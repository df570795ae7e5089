"""AppTest of the causal-mask page, what its text says: the CSV downloads, the number style, the KV-cache sentence
and the repeated-word ("bank") discussion, each with its numbers (split from tests/test_causal_page.py)."""

import re

import pytest

from tests.apptest_utils import recorded_downloads
from tests.test_causal_page import N, answer, open_clean, texts
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.pages


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_csv_downloads_have_a_bom_and_the_right_headers(lang, monkeypatch):
    """UTF-8 with a BOM; the matrices keep English snake_case headers, the leak table is translated."""
    files = recorded_downloads(monkeypatch)
    at = open_clean(lang)
    buttons = {b.key: files[b.proto.url] for b in at.get("download_button")}
    assert set(buttons) == {"causal_download", "causal_leak_csv"}
    for data in buttons.values():
        assert data.startswith(b"\xef\xbb\xbf")
    matrices = buttons["causal_download"].decode("utf-8-sig").splitlines()
    assert matrices[0] == "matrix,query_position,query_token,key_position,key_token,value"
    leak_header = buttons["causal_leak_csv"].decode("utf-8-sig").splitlines()[0]
    if lang == "ja":
        assert "位置" in leak_header or "トークン" in leak_header
        assert not any(w in leak_header for w in ("position", "token"))
    else:
        assert leak_header.startswith("position,token,")


E_NOTATION = re.compile(r"\d[eE][+-]?\d")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_numbers_are_powers_of_ten_and_lists_use_the_languages_separator(lang):
    """1.2 × 10⁻¹⁶, never 1.2e-16; the newest row's weights are listed with 、 in Japanese."""
    from ui.shared.i18n import Translator

    at = answer(open_clean(lang))
    shown = texts(at)
    assert not E_NOTATION.findall(shown), E_NOTATION.findall(shown)
    t = Translator(lang)
    caption = [c.value for c in at.caption if c.value.startswith(t("causal.matrices_caption").split("{")[0])]
    assert len(caption) == 1 and "× 10⁻" in caption[0]  # the rows' largest error from 1 is a float's rounding
    newest = [c.value for c in at.caption if c.value.startswith(t("causal.generation_caption").split("{")[0])]
    assert len(newest) == 1 and len(re.findall(r"\.\d{4}" + re.escape(t("common.list_separator")), newest[0])) == N - 1


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_kv_cache_sentence_says_it_needs_a_stack_of_layers(lang):
    """(The claim itself is held in tests/test_causal_core.py at the defaults.)"""
    strings = load_strings(lang)
    words = {"en": ("stack of layers", "single layer", "mask or not"), "ja": ("層を積み重ねた", "1 層だけ", "マスクがあってもなくても")}
    for key in ("causal.explain", "causal.generation_note"):
        assert all(w in strings[key] for w in words[lang]), key
    at = answer(open_clean(lang))
    assert strings["causal.generation_note"] in [c.value for c in at.caption]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_bank_preset_is_discussed_with_its_numbers(lang):
    at = answer(open_clean(lang, query={"causal_preset": "bank"}))
    strings = load_strings(lang)
    head = strings["causal.repeated_caption"].split("{")[0]
    shown = [c.value for c in at.caption if c.value.startswith(head)]
    assert len(shown) == 1, [c.value for c in at.caption]
    assert "bank" in shown[0] and re.search(r"(?<![\d.])5(?![\d.])", shown[0]) and re.search(r"(?<![\d.])14(?!\d)", shown[0])
    assert strings["causal.seen_words"].format(n=14) in shown[0]
