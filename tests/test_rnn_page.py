"""AppTest: the RNN-bottleneck page with every control at its extremes, typed and bad sentences, both languages."""

import functools

import numpy as np
import pytest

from attention_core.glove import embed
from attention_core.rnn import influence_profile
from attention_core.rnn_probe import best_case_memory, memory_probe
from attention_core.sentences import load_sentences
from attention_core.text import tokenize
from tests.apptest_utils import assert_clean, decode_array, open_page, plotly_figures
from ui.shared.i18n import sci

pytestmark = pytest.mark.pages

# The memory probe as the lesson states it (state sizes, sentence lengths, training/test sentences, word size).
PROBE_HIDDEN = (8, 32, 64)
PROBE_LENGTHS = (*range(1, 13), 14, 16, 18, 20, 24, 28, 32, 36, 40)
PROBE_TRAIN, PROBE_TEST, PROBE_D = 1000, 250, 8

PAGE = "rnn"


def influence_figure(at) -> dict | None:
    """The Jacobian-norm figure: two traces on a log y axis."""
    found = [f for f in plotly_figures(at) if f["layout"].get("yaxis", {}).get("type") == "log"]
    return found[0] if found else None


def probe_figure(at) -> dict:
    found = [f for f in plotly_figures(at) if f["layout"].get("yaxis", {}).get("type") != "log"]
    assert len(found) == 1
    return found[0]


def trace_y(fig: dict) -> list[np.ndarray]:
    return [decode_array(trace["y"]).astype(float) for trace in fig["data"]]


def metrics(at) -> list[str]:
    return [str(m.value) for m in at.metric]


def reveal(at):
    at.radio(key="rnn_predict").set_value(4).run()
    assert_clean(at)
    return at


@functools.lru_cache(maxsize=None)
def expected_probe(radius: float, seed: int):
    return memory_probe(PROBE_LENGTHS, PROBE_HIDDEN, radius, seed, d_in=PROBE_D, n_train=PROBE_TRAIN, n_test=PROBE_TEST)


@functools.lru_cache(maxsize=None)
def expected_best(seed: int):
    return best_case_memory(PROBE_LENGTHS, PROBE_HIDDEN, seed, d_in=PROBE_D)


def assert_probe_matches_core(at, radius: float, seed: int):
    """Traces: per size the random RNN (measured) then its best case (exact), then attention."""
    fig = probe_figure(at)
    ys = trace_y(fig)
    probe, best = expected_probe(radius, seed), expected_best(seed)
    assert len(ys) == 2 * len(PROBE_HIDDEN) + 1
    for i in range(len(PROBE_HIDDEN)):
        np.testing.assert_allclose(ys[2 * i], probe.rnn_r2[i], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(ys[2 * i + 1], best.first_r2[i], rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(decode_array(fig["data"][2 * i]["x"]), PROBE_LENGTHS)
    np.testing.assert_allclose(ys[-1], probe.attention_r2, rtol=1e-12)
    assert np.all(ys[-1] > 1 - 1e-9)


def assert_influence_finite(at, n: int):
    fig = influence_figure(at)
    assert fig is not None, "the Jacobian figure is shown once the question is answered"
    for y in trace_y(fig):
        assert y.shape == (n,)
        assert np.all(np.isfinite(y)) and np.all(y > 0)
    return fig


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_default_view_shows_the_right_numbers(lang, glove):
    at = open_page(PAGE, lang)
    assert_clean(at)
    text = next(s.text for s in load_sentences() if s.id == "long_memory")
    n = len(tokenize(text))
    assert metrics(at) == [str(n), "1", f"{n} × {n} = {n * n:,}"]
    assert influence_figure(at) is None, "the figure that settles the question waits for an answer"
    assert_probe_matches_core(at, 0.9, 0)
    reveal(at)
    fig = assert_influence_finite(at, n)
    X, _ = embed(tokenize(text), glove)
    expected = influence_profile(X, 32, 0.9, 0)
    rnn_y, att_y = trace_y(fig)
    np.testing.assert_allclose(rnn_y, expected.rnn_norm, rtol=1e-9)
    np.testing.assert_allclose(att_y, expected.attention_norm, rtol=1e-9)
    assert rnn_y[0] / rnn_y[-1] < 1e-2  # the answer the page asks learners to predict
    ratio = sci(expected.rnn_norm[0] / expected.rnn_norm[-1], 2)  # 1.7 × 10⁻⁷, as the page writes it
    captions = " ".join(c.value for c in at.caption)
    assert captions.count(ratio) >= 2, "the predicted ratio is formatted from the computation (answer and caption)"
    assert len(at.get("download_button")) == 2
    if lang == "ja":
        assert at.title[0].value.endswith("RNN のボトルネック")
        assert at.metric[0].label == "RNN：順番に進むステップ数"


def test_every_preset_and_typed_sentences(glove):
    at = open_page(PAGE)
    reveal(at)
    for preset in load_sentences():
        at.selectbox(key="rnn_preset").set_value(preset.id).run()
        assert_clean(at)
        n = len(embed(tokenize(preset.text), glove)[0])
        assert metrics(at)[0] == str(n)
        assert_influence_finite(at, n)
    at.selectbox(key="rnn_preset").set_value("custom").run()
    assert_clean(at)
    at.text_input(key="rnn_text").input("The cat sat on the mat").run()
    assert_clean(at)
    assert metrics(at) == ["6", "1", "6 × 6 = 36"]
    assert_influence_finite(at, 6)
    at.text_input(key="rnn_text").input("hello").run()  # a single word: one point per line
    assert_clean(at)
    assert_influence_finite(at, 1)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_bad_sentences_give_messages_not_errors(lang):
    at = open_page(PAGE, lang)
    at.selectbox(key="rnn_preset").set_value("custom").run()
    assert_clean(at)
    cases = {
        "": "common.empty_sentence",
        "   ": "common.empty_sentence",
        "😀😀 🎉": "rnn.no_known",
        "qwzxv blorptification": "rnn.no_known",
        "猫がマットに座った": "rnn.no_known",
    }
    from ui.shared.i18n import Translator

    t = Translator(lang)
    for text, message in cases.items():
        at.text_input(key="rnn_text").input(text).run()
        assert_clean(at)
        warnings = [w.value for w in at.warning]
        expected = t(message, n=41, limit=40) if "too_many" in message else t(message)
        assert expected in warnings, (text, warnings)
        assert influence_figure(at) is None
        assert_probe_matches_core(at, 0.9, 0)  # the probe does not need the sentence: it is still there
    # 41 tokens: the first 40 are read, with a notice (the figure needs two known words; "word" is one of them)
    at.text_input(key="rnn_text").input(" ".join(["word"] * 41)).run()
    assert_clean(at)
    assert t("common.too_many_tokens", n=41, limit=40) in [i.value for i in at.info]
    for text in ("<script>alert(1)</script> [link](javascript:x) $\\frac{1}{0}$", "x" * 600):
        at.text_input(key="rnn_text").input(text).run()
        assert_clean(at)


def test_controls_at_their_extremes(glove):
    at = open_page(PAGE)
    reveal(at)
    n = len(tokenize(next(s.text for s in load_sentences() if s.id == "long_memory")))
    settings = [("rnn_hidden", 1), ("rnn_hidden", 256), ("rnn_radius", 0.1), ("rnn_radius", 2.0)]
    for key, value in settings:
        at.slider(key=key).set_value(value).run()
        assert_clean(at)
        assert_influence_finite(at, n)
    for seed in (2**31 - 1, 0):
        at.number_input(key="rnn_seed").set_value(seed).run()
        assert_clean(at)
        assert_influence_finite(at, n)
    # now hidden 256, radius 2.0, seed 0: the figure shows exactly these settings
    text = next(s.text for s in load_sentences() if s.id == "long_memory")
    expected = influence_profile(embed(tokenize(text), glove)[0], 256, 2.0, 0)
    np.testing.assert_allclose(trace_y(influence_figure(at))[0], expected.rnn_norm, rtol=1e-9)
    assert_probe_matches_core(at, 2.0, 0)


def test_settings_come_from_the_link():
    at = open_page(PAGE, "ja", query={"rnn_hidden": "8", "rnn_radius": "0.5", "rnn_seed": "3", "rnn_text": "the cat sat"})
    assert_clean(at)
    assert at.slider(key="rnn_hidden").value == 8
    assert abs(at.slider(key="rnn_radius").value - 0.5) < 1e-12
    assert at.number_input(key="rnn_seed").value == 3
    assert at.selectbox(key="rnn_preset").value == "custom"
    assert metrics(at)[0] == "3"
    assert_probe_matches_core(at, 0.5, 3)


def preset_count(glove, preset_id: str) -> int:
    text = next(s.text for s in load_sentences() if s.id == preset_id)
    return len(embed(tokenize(text), glove)[0])


def use_text(at, text: str):
    at.selectbox(key="rnn_preset").set_value("custom").run()
    at.text_input(key="rnn_text").input(text).run()
    assert_clean(at)
    return at


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_long_short_one_word_long_in_one_session(lang, glove):
    """The page follows the sentence through presets and typed text in one session."""
    at = open_page(PAGE, lang)
    reveal(at)
    at.slider(key="rnn_hidden").set_value(256).run()
    for preset in ("long_memory", "cat_mat", "bank", "long_memory"):
        at.selectbox(key="rnn_preset").set_value(preset).run()
        assert_clean(at)
        n = preset_count(glove, preset)
        assert metrics(at)[0] == str(n)
        assert_influence_finite(at, n)
    for text, n in (("The cat sat on the mat", 6), ("hello", 1), ("", None), ("猫", None),
                    (next(s.text for s in load_sentences() if s.id == "long_memory"), preset_count(glove, "long_memory")),
                    ("dog", 1)):
        use_text(at, text)
        if n is None:
            assert influence_figure(at) is None
        else:
            assert metrics(at)[0] == str(n)
            assert_influence_finite(at, n)
        assert_probe_matches_core(at, 0.9, 0)
    at.selectbox(key="rnn_preset").set_value("long_memory").run()
    assert_clean(at)
    assert_influence_finite(at, preset_count(glove, "long_memory"))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_japanese_typed_text_is_told_english_only(lang):
    at = use_text(open_page(PAGE, lang), "猫がマットに座った")
    from ui.shared.i18n import Translator

    t = Translator(lang)
    assert any(t("rnn.no_known") in w.value for w in at.warning)
    assert at.info, "show_unknown says the vectors are English-only"


def test_probe_csv_has_every_curve_and_translated_headers():
    from ui.shared.i18n import Translator

    for lang in ("en", "ja"):
        at = open_page(PAGE, lang)
        t = Translator(lang)
        buttons = [b for b in at.get("download_button") if b.proto.id and "rnn_download_probe" in b.proto.id]
        assert buttons
        # the table behind it is the probe + best case; its headers are the translated trace names
        fig = probe_figure(at)
        names = [tr["name"] for tr in fig["data"]]
        assert names[0] == t("rnn.fig2_rnn", hidden=PROBE_HIDDEN[0]) and names[1] == t("rnn.fig2_best", hidden=PROBE_HIDDEN[0])
        assert names[-1] == t("rnn.fig2_attention")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_presenter_mode_and_the_framing(lang):
    from ui.shared.i18n import Translator

    at = open_page(PAGE, lang, query={"presenter": "true"})
    assert_clean(at)
    assert Translator(lang)("rnn.framing") in [i.value for i in at.info], "from memory to retrieval, in presenter mode too"
    reveal(at)
    at.slider(key="rnn_radius").set_value(1.55).run()
    assert_clean(at)
    assert len(plotly_figures(at)) == 2  # (figure fonts in presenter mode: tests/test_sharing.py)
    assert_probe_matches_core(at, 1.55, 0)


# --- what the reveal says of attention's line; numbers; jargon ---

def test_attentions_line_varies_with_the_words_not_with_distance(glove):
    """Predict_why: attention's line is not flat (about tenfold from the smallest to the largest at the defaults), yet
    nothing in it shrinks with distance: a word repeated at two positions gets the same norm (no position in the
    layer), and the first word is above the median word."""
    from ui.shared.i18n import load_strings

    tokens = tokenize(next(s.text for s in load_sentences() if s.id == "long_memory"))
    att = influence_profile(embed(tokens, glove)[0], 32, 0.9, 0).attention_norm
    assert 7 < att.max() / att.min() < 14, "about tenfold"
    before = att[:-1]  # the last word is the query itself
    repeated = [w for w in set(tokens[:-1]) if tokens[:-1].count(w) > 1]
    assert repeated, "the long preset repeats a word"
    for word in repeated:
        values = [before[i] for i, w in enumerate(tokens[:-1]) if w == word]
        np.testing.assert_allclose(values, values[0], rtol=1e-9)
    assert att[0] > np.median(before)
    assert "about tenfold" in load_strings("en")["rnn.predict_why"]
    assert "およそ 10 倍" in load_strings("ja")["rnn.predict_why"]
    assert "stays flat" not in load_strings("en")["rnn.predict_why"]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_numbers_read_as_written(lang, glove):
    """1.7 × 10⁻⁷, never 1.7e-07 (caption, answer, table, probe lines, hover); 1,000 sentences."""
    from tests.number_style import number_style_problems

    at = reveal(open_page(PAGE, lang))
    assert number_style_problems(at, lang) == []
    captions = " ".join(c.value for c in at.caption)
    assert "× 10⁻" in captions and "1,000" in captions
    table = at.dataframe[0].value
    assert "× 10⁻" in table.iloc[0, 2], "the first word's tiny RNN norm is a power of ten in the table"
    hover = influence_figure(at)["data"][0]
    assert "× 10⁻" in hover["customdata"][0][2] and "%{y:.4e}" not in hover["hovertemplate"]


GLOSSES = {  # term -> the words of its one-line explanation on the page
    "en": {"spectral radius": "largest eigenvalue magnitude", "singular value": "stretches a vector",
           "Jacobian": "how much each number of the output moves", "ridge regression": "small penalty on large weights",
           "R²": "share of the first word's variation"},
    "ja": {"スペクトル半径": "固有値の絶対値の最大", "特異値": "伸びる倍率", "ヤコビアン": "出力の各数がどれだけ動くか",
           "リッジ回帰": "罰則", "R²": "取り戻せた割合"},
}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_jargon_is_glossed_on_the_page(lang):
    from tests.visible_text import visible_texts

    at = reveal(open_page(PAGE, lang))
    shown = " ".join(visible_texts(at)) + " ".join(c.value for c in at.caption)
    for term, gloss in GLOSSES[lang].items():
        assert term in shown and gloss in shown, term
    assert GLOSSES[lang]["spectral radius" if lang == "en" else "スペクトル半径"] in at.slider(key="rnn_radius").help
