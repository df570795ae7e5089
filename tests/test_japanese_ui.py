"""Japanese pages show no English UI text: every page, in several states, rendered with ?lang=ja.

The English locale values that differ from the Japanese ones are the "English UI strings". A long one (split at
its {placeholders}) must not appear anywhere in a visible text; a short one (a word or two) must not be a whole
visible text item (a label, an option, an axis or legend title, a piece of a hover text). Proper nouns, formulas,
numbers and the tokens of English example sentences are not in the English locale as such, so they may appear.
"""

from __future__ import annotations

import re
import string

import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.visible_text import visible_texts
from ui.i18n import load_strings

pytestmark = pytest.mark.pages

LONG = 12  # a fragment this long (with a space in it) is looked for inside every text
# Short English values that are also legitimate as they are on a Japanese page (symbols, names, units).
ALLOWED_SHORT = {"RNN", "GloVe", "softmax", "NumPy", "Plotly", "PNG", "SVG", "CSV"}

# (page section, link parameters, answer the prediction?, extra action) -> one rendered state per case.
CASES = [
    ("home", {}, False),
    ("rnn", {}, True),
    ("rnn", {"rnn_preset": "custom", "rnn_text": "the cat sat on the mat"}, True),
    ("rnn", {"rnn_preset": "custom"}, False),
    ("qkv", {}, False),
    ("qkv", {"qkv_step": "1"}, False),
    ("qkv", {"qkv_step": "2"}, False),
    ("qkv", {"qkv_step": "3", "qkv_query": "none"}, True),
    ("self_attention", {}, True),
    ("self_attention", {"sa_preset": "animal", "sa_token": "4"}, False),
    ("scaling", {}, True),
    ("scaling", {"scaling_scale": "false", "scaling_d": "4"}, True),
    ("causal", {}, True),
    ("causal", {"causal_glove": "false", "causal_leak_how": "random"}, True),
    ("causal", {"causal_preset": "custom", "causal_text": "   "}, False),
    ("glove", {}, True),
    ("glove", {"glove_sentence": "猫 が 座った"}, False),
    ("summary", {}, False),
]


def _fragments(template: str) -> list[str]:
    """A locale template -> its literal parts (placeholders removed), stripped."""
    parts = [literal for literal, *_ in string.Formatter().parse(template)]
    return [p.strip(" \n\t:：.,;()（）") for p in parts if p.strip()]


def english_ui_strings() -> tuple[set[str], set[str]]:
    """(long fragments, short values) of the English locale that differ from the Japanese."""
    en, ja = load_strings("en"), load_strings("ja")
    long_parts, short = set(), set()
    for key, value in en.items():
        if value == ja.get(key):
            continue
        parts = _fragments(value)
        long_parts |= {part for part in parts if len(part) >= LONG and " " in part}
        if parts == [value.strip(" \n\t:：.,;()（）")] and re.search(r"[A-Za-z]{3}", value) and "\n" not in value:
            short.add(parts[0])  # a short value without placeholders: looked for as a whole text item
    short -= ALLOWED_SHORT
    return long_parts, short


_PIECES = re.compile(r"<br>|<extra>|</extra>|%\{[^}]*\}|\s=\s|:\s|[（(][^)）]*[)）]")


def text_items(texts: list[str]) -> set[str]:
    """Visible texts and their pieces (hover templates split at <br>, '=', ':' and %{...})."""
    items = set()
    for text in texts:
        items.add(text.strip())
        items |= {piece.strip(" :=") for piece in _PIECES.split(text) if piece and piece.strip(" :=")}
    return items


def render(section: str, query: dict, answer: bool):
    at = open_page(section, "ja", query=query)
    assert_clean(at)
    if answer:
        for radio in at.radio:
            if radio.key and radio.key.endswith("_predict"):
                radio.set_value(1)
        at.run()
        if section == "glove":
            at.button(key="glove_train").click().run()
        assert_clean(at)
    return at


_HOVER_LABEL = re.compile(r"(?:^|<br>)([^<=%]*?)\s=\s")
_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def hover_label_leaks(texts: list[str]) -> set[str]:
    """Names before ' = ' in hover texts ('weight = %{y}') that are English words: hard-coded in a chart builder."""
    labels = {m.group(1).strip() for text in texts if "%{" in text for m in _HOVER_LABEL.finditer(text)}
    return {label for label in labels if re.search(r"[A-Za-z]{4}", label) and not _JAPANESE.search(label)}


def english_leaks(texts: list[str]) -> list[str]:
    long_parts, short = english_ui_strings()
    leaks = {part for part in long_parts if any(part in text for text in texts)}
    return sorted(leaks | (text_items(texts) & short) | hover_label_leaks(texts))


@pytest.mark.parametrize("section, query, answer", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_japanese_page_shows_no_english_ui_text(section, query, answer):
    at = render(section, query, answer)
    texts = visible_texts(at)
    assert len(texts) > 10
    typed = {word for value in query.values() for word in str(value).split()}  # the case's own English sentence
    assert [leak for leak in english_leaks(texts) if leak not in typed] == []


def test_the_check_finds_an_english_leak():
    """The detector itself: an English label, a hover text and a long sentence are all caught."""
    en = load_strings("en")
    assert english_leaks([en["common.presenter"]]) == [en["common.presenter"]]
    assert english_leaks([f"%{{x}}<br>{en['scaling.y_density']} = %{{y:.4g}}<extra></extra>"])
    assert english_leaks(["前置き " + en["common.predict_hint"]])
    assert english_leaks(["z = %{x:.4g}<br>density = %{y:.4g}<extra></extra>"]) == ["density"]
    assert english_leaks(["%{customdata}<br>重み = %{y:.4f}<br>d = %{x}<extra></extra>"]) == []
    assert english_leaks(["プレゼンター", "重み", "the", "animal", "GloVe", "d = 64"]) == []
