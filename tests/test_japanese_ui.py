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
from ui.shared.i18n import load_strings

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


# ---- Japanese axis titles read upright --------------------------------------------------------------------------

def _y_titles(fig: dict) -> list[str]:
    return [(axis.get("title") or {}).get("text", "") if isinstance(axis.get("title"), dict) else axis.get("title") or ""
            for name, axis in fig["layout"].items() if re.fullmatch(r"yaxis\d*", name) and isinstance(axis, dict)]


def test_upright_y_titles_moves_only_japanese_titles_above_their_axis():
    from charts.style import upright_y_titles

    fig = {"data": [], "layout": {"yaxis": {"title": {"text": "正答率", "font": {"size": 12}}, "range": [0, 1]},
                                  "yaxis2": {"title": {"text": "weight"}, "anchor": "x2"},
                                  "yaxis3": {"title": "層", "anchor": "x3"}, "annotations": [{"text": "n"}]}}
    out = upright_y_titles(fig)
    assert fig["layout"]["yaxis"]["title"]["text"] == "正答率", "the cached dict is not written to"
    assert _y_titles(out) == ["", "weight", ""] and out["layout"]["yaxis"]["range"] == [0, 1]
    added = out["layout"]["annotations"][1:]
    assert [(a["text"], a["xref"], a["yref"], a["y"], a["yanchor"]) for a in added] == [
        ("正答率", "x domain", "y domain", 1, "bottom"), ("層", "x3 domain", "y3 domain", 1, "bottom")]
    assert added[0]["font"] == {"size": 12} and "textangle" not in added[0]
    english = {"layout": {"yaxis": {"title": {"text": "accuracy"}}}}
    assert upright_y_titles(english) is english


@pytest.mark.parametrize("section", ["scaling", "rnn"])
def test_a_japanese_page_draws_no_y_title_sideways(section):
    """Every y-axis title with Japanese text is drawn as a horizontal label; the English page keeps Plotly's."""
    import json

    ja, en = (render(section, {}, True), open_page(section, "en"))
    ja_figs = [json.loads(c.proto.spec) for c in ja.get("plotly_chart")]
    assert [t for fig in ja_figs for t in _y_titles(fig) if _JAPANESE.search(t)] == []
    labels = [a["text"] for fig in ja_figs for a in fig["layout"].get("annotations", []) if a.get("yanchor") == "bottom"
              and str(a.get("yref", "")).endswith("domain")]
    assert labels and all(_JAPANESE.search(text) for text in labels)
    en_titles = [t for c in en.get("plotly_chart") for t in _y_titles(json.loads(c.proto.spec)) if t]
    assert en_titles, "the English page keeps its turned y titles"


# ---- Japanese typed on the pages with GloVe (lessons 5 and 7) ---------------------------------------------------

@pytest.mark.parametrize("section, box, query", [("causal", "causal_text", {"causal_preset": "custom"}),
                                                 ("transformer", "transformer_text", {})])
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_japanese_typed_with_glove_on_is_drawn_on_random_vectors(section, box, query, lang):
    strings = load_strings(lang)
    at = open_page(section, lang, query=query)
    at.text_input(key=box).input("生徒は、先生に本を返した。彼女は").run()
    assert_clean(at)
    assert at.toggle(key=f"{section}_glove").value is True
    said = [i.value for i in at.info if i.value == strings["common.glove_fallback"].format(seed=0)]
    assert len(said) == 1 and not at.warning
    assert at.get("plotly_chart"), "the sentence is drawn"
    shown = "\n".join(visible_texts(at))
    for contradiction in ("英語で入力", "English-only", "英語専用", "GloVe off", "オフにして"):
        assert contradiction not in shown


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_list_of_left_out_tokens_quotes_each_one(lang):
    """Lesson 1 needs GloVe: its list of the tokens left out quotes each, so the token 「、」 reads apart from the
    separator 、 (it read 「生徒、に、、、彼女」)."""
    at = open_page("rnn", lang, query={"rnn_preset": "custom"})
    at.text_input(key="rnn_text").input("生徒に、彼女").run()
    assert_clean(at)
    want = "「生徒」、「に」、「、」、「彼女」" if lang == "ja" else "“生徒”, “に”, “、”, “彼女”"
    assert [i.value for i in at.info if want in i.value]
