"""AppTest of the causal-mask page: every control at its extremes, bad input, both languages, the numbers shown."""

import re

import numpy as np
import pytest

from attention_core.causal import (
    RANDOM_DIM, causal_vs_bidirectional, leak_test, random_word_vectors,
)
from attention_core.text import tokenize
from tests.apptest_utils import assert_clean, decode_array, open_page, plotly_figures, recorded_downloads
from ui.shared.common import MAX_CHARS
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.pages

PAGE = "causal"
DEFAULT = "The animal did not cross the street because it was too tired"
N = len(tokenize(DEFAULT))  # 12


def open_clean(lang="en", query=None):
    at = open_page(PAGE, lang, query=query)
    assert_clean(at)
    return at


def check_figures(at) -> list[dict]:
    """No inf anywhere in any figure or frame; NaN only in heat maps (their grey, masked cells)."""
    figs = plotly_figures(at)
    assert figs, "no figure drawn"
    for fig in figs:
        traces = list(fig["data"]) + [tr for fr in fig.get("frames", []) for tr in fr["data"]]
        for tr in traces:
            for field in ("x", "y", "z"):
                if tr.get(field) is None:
                    continue
                try:
                    arr = decode_array(tr[field]).astype(float)
                except (ValueError, TypeError):
                    continue  # category labels
                assert not np.isinf(arr).any(), (tr.get("type"), field)
                if tr.get("type") != "heatmap" or field != "z":
                    assert not np.isnan(arr).any(), (tr.get("type"), field)
    return figs


def z_of(fig, frame=None):
    trace = fig["data"][0] if frame is None else fig["frames"][frame]["data"][0]
    return decode_array(trace["z"]).astype(float)


def answer(at, choice=1):
    at.radio(key="causal_predict").set_value(choice).run()
    assert_clean(at)
    return at


def use_text(at, text):
    at.selectbox(key="causal_preset").set_value("custom").run()
    at.text_input(key="causal_text").input(text).run()
    assert_clean(at)
    return at


def texts(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [x.value for x in at.success] + [x.value for x in at.warning] + [x.value for x in at.info]
    return "\n".join(parts)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_default_page_both_languages(lang):
    at = open_clean(lang)
    figs = check_figures(at)
    assert len(figs) == 3, "scores, generation, leak before the prediction is answered"
    scores = z_of(figs[0])
    upper = np.triu(np.ones((N, N), dtype=bool), k=1)
    assert np.isnan(scores[upper]).all() and np.isfinite(scores[~upper]).all()
    minus_inf = figs[0]["data"][1]
    assert set(minus_inf["text"]) == {"−∞"} and len(minus_inf["text"]) == N * (N - 1) // 2
    answer(at)
    figs = check_figures(at)
    assert len(figs) == 5
    bi, causal = z_of(figs[1]), z_of(figs[2])
    assert np.isfinite(bi).all()
    np.testing.assert_allclose(bi.sum(axis=1), 1.0, atol=1e-12)
    assert np.isnan(causal[upper]).all()
    assert causal[0, 0] == 1.0
    np.testing.assert_allclose(np.nansum(causal, axis=1), 1.0, atol=1e-12)
    assert at.success, "the right answer is confirmed"
    assert [b.key for b in at.get("download_button")] == ["causal_download", "causal_leak_csv"]  # matrices, leak table
    assert at.dataframe


def test_numbers_match_the_core_in_random_mode():
    at = open_clean()
    at.toggle(key="causal_glove").set_value(False).run()
    at.number_input(key="causal_seed").set_value(11).run()
    answer(at)
    figs = check_figures(at)
    words = tokenize(DEFAULT)
    X = random_word_vectors(words, RANDOM_DIM, 11)
    res = causal_vs_bidirectional(X, 11)
    np.testing.assert_array_equal(z_of(figs[1]), res["bidirectional"].weights)
    lower = np.tril(np.ones((N, N), dtype=bool))
    np.testing.assert_array_equal(z_of(figs[2])[lower], res["causal"].weights[lower])
    j = (N + 1) // 2 - 1
    expected = leak_test(X, j, random_word_vectors(["dog"], RANDOM_DIM, 11)[0], 11)
    bars = figs[4]["data"]
    np.testing.assert_array_equal(decode_array(bars[0]["y"]), expected.row_change["causal"])
    np.testing.assert_array_equal(decode_array(bars[1]["y"]), expected.row_change["bidirectional"])
    assert "max |Δ| = 0.0 exactly" in at.success[-1].value
    assert f"{N} of {N} rows changed" in texts(at)


def test_seed_changes_the_matrices():
    at = open_clean()
    z0 = z_of(plotly_figures(at)[0])
    at.number_input(key="causal_seed").set_value(2**31 - 1).run()
    assert_clean(at)
    z1 = z_of(check_figures(at)[0])
    assert not np.allclose(np.nan_to_num(z0), np.nan_to_num(z1))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_tokens_generated_at_one_and_n(lang):
    at = open_clean(lang)
    at.slider(key="causal_generated").set_value(1).run()
    assert_clean(at)
    gen = check_figures(at)[1]
    z = z_of(gen)
    assert z[0, 0] == 1.0 and np.isnan(z).sum() == N * N - 1
    assert gen["layout"]["sliders"][0]["active"] == 0
    assert len(gen["frames"]) == N
    box = gen["data"][1]  # the newest row's outline
    assert set(decode_array(box["y"]).tolist()) == {-0.5, 0.5}
    at.slider(key="causal_generated").set_value(N).run()
    assert_clean(at)
    gen = check_figures(at)[1]
    z = z_of(gen)
    lower = np.tril(np.ones((N, N), dtype=bool))
    assert np.isfinite(z[lower]).all() and np.isnan(z[~lower]).all()
    for k in range(1, N + 1):  # frame k shows exactly the first k rows
        zk = z_of(gen, k - 1)
        assert np.isfinite(zk[:k][lower[:k]]).all() and np.isnan(zk[k:]).all()
        np.testing.assert_array_equal(zk[:k][lower[:k]], z[:k][lower[:k]])


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_leak_token_first_and_last(lang):
    at = open_clean(lang)
    at.slider(key="causal_leak_pos").set_value(N).run()
    assert_clean(at)
    bars = check_figures(at)[2]["data"]
    causal, bi = decode_array(bars[0]["y"]), decode_array(bars[1]["y"])
    assert np.all(causal[:-1] == 0.0) and causal[-1] > 0
    assert np.all(bi > 0)
    assert at.success and "0.0" in at.success[-1].value
    table = at.dataframe[0].value
    assert table.iloc[:-1, 4].all() and not table.iloc[-1, 4]
    at.slider(key="causal_leak_pos").set_value(1).run()
    assert_clean(at)
    bars = check_figures(at)[2]["data"]
    assert np.all(decode_array(bars[0]["y"]) > 0) and np.all(decode_array(bars[1]["y"]) > 0)


def test_leak_random_vector_and_unknown_word():
    at = open_clean()
    at.radio(key="causal_leak_how").set_value("random").run()
    assert_clean(at)
    check_figures(at)
    assert "0.0 exactly" in at.success[-1].value
    at.radio(key="causal_leak_how").set_value("word").run()
    at.text_input(key="causal_leak_word").input("qqzxv🙂").run()
    assert_clean(at)
    assert "unknown to GloVe" in texts(at)
    at.text_input(key="causal_leak_word").input("").run()
    assert_clean(at)
    check_figures(at)
    at.text_input(key="causal_leak_word").input("the").run()  # the same word as token 6: nothing changes
    assert_clean(at)
    assert any("equals the old one" in x.value for x in at.info)


@pytest.mark.parametrize("glove", [True, False])
@pytest.mark.parametrize("text", ["", "   "], ids=["empty", "spaces"])
def test_no_usable_sentence_gives_a_message(text, glove):
    at = open_clean()
    at.toggle(key="causal_glove").set_value(glove).run()
    use_text(at, text)
    assert at.warning


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_long_sentence_is_shown_on_its_first_tokens_and_a_long_paste_is_cut(lang):
    """60 words: the first 40 are shown, with a notice naming both counts; 10,000 characters: the first 500 are read
    (not an empty box), with a notice; the limits are said under the box."""
    strings = load_strings(lang)
    at = open_clean(lang)
    use_text(at, " ".join(["cat", "dog", "bird"] * 20))
    assert _pattern(strings["common.text_limits"]).fullmatch(" ".join(c.value for c in at.caption
                                                                        if "500" in c.value and "40" in c.value))
    notes = [i.value for i in at.info if _pattern(strings["common.too_many_tokens"]).fullmatch(i.value)]
    assert len(notes) == 1 and "60" in notes[0] and "40" in notes[0]
    assert z_of(check_figures(at)[0]).shape == (40, 40)
    text = "the cat sat on the mat " * 455  # 10,010 characters
    use_text(at, text)
    assert at.text_input(key="causal_text").value == text[:MAX_CHARS], "the box (and link) keep what the page reads"
    notes = [x.value for x in at.toast if _pattern(strings["common.text_cut_kept"]).fullmatch(x.value)]
    assert len(notes) == 1 and f"{len(text):,}" in notes[0]  # the frame cut the paste: a toast says how long it was
    n = len(tokenize(text[:500]))  # 500 characters hold more than 40 tokens: both notices, 40 shown
    assert n > 40 and z_of(check_figures(at)[0]).shape == (40, 40)


def _pattern(text: str):
    return re.compile(".+?".join(re.escape(part) for part in re.split(r"\{[^{}]*\}", text)), re.S)


@pytest.mark.parametrize("glove", [True, False])
def test_markup_in_the_sentence_stays_text(glove):
    text = "<script>alert(1)</script> <b>bold</b> [link](http://x) $x$"
    at = open_clean()
    at.toggle(key="causal_glove").set_value(glove).run()
    use_text(at, text)
    figs = check_figures(at)
    assert len(figs) == 3
    assert "<script>" not in texts(at)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_one_token_sentence(lang):
    at = open_clean(lang)
    use_text(at, "hello")
    answer(at)
    figs = check_figures(at)
    assert len(figs) == 5
    assert z_of(figs[2]).tolist() == [[1.0]]
    assert not at.slider, "no slider can span 1..1"
    assert len(at.success) == 1, "only the prediction's confirmation: no rows come before the only token"
    assert decode_array(figs[4]["data"][0]["y"]).shape == (1,)


def test_forty_tokens_and_emoji():
    at = open_clean()
    at.toggle(key="causal_glove").set_value(False).run()
    use_text(at, " ".join(f"w{i}" for i in range(39)) + " 🙂")
    figs = check_figures(at)
    n = len(tokenize(" ".join(f"w{i}" for i in range(39)) + " 🙂"))
    assert z_of(figs[1]).shape == (n, n)
    at.slider(key="causal_generated").set_value(1).run()
    at.slider(key="causal_leak_pos").set_value(n).run()
    assert_clean(at)
    assert "0.0 exactly" in at.success[-1].value


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_text_glove_cannot_read_runs_on_random_vectors(lang):
    """Japanese, or no word GloVe knows, with GloVe on: the sentence runs on seeded random vectors (the same as GloVe
    off), said once; no "type English" next to "turn GloVe off", no list of dropped tokens."""
    strings = load_strings(lang)
    for text in ("猫がマットに座った qqzxv", "qqzxv blorptang"):
        at = open_clean(lang)
        use_text(at, text)
        assert not at.warning
        assert [i.value for i in at.info][1:] == [strings["common.glove_fallback"].format(seed=0)]  # (after the hint)
        with_glove = z_of(check_figures(at)[0])
        at.toggle(key="causal_glove").set_value(False).run()
        assert_clean(at)
        np.testing.assert_array_equal(z_of(check_figures(at)[0]), with_glove)  # the same random vectors
        assert not [i for i in at.info if i.value == strings["common.glove_fallback"].format(seed=0)]


def test_long_preset_and_link_state():
    at = open_clean(query={"causal_glove": "false", "causal_seed": "5", "causal_generated": "3"})
    assert at.toggle(key="causal_glove").value is False
    assert at.number_input(key="causal_seed").value == 5
    assert at.slider(key="causal_generated").value == 3
    at.selectbox(key="causal_preset").set_value("long_memory").run()
    assert_clean(at)
    figs = check_figures(at)
    n = len(figs[1]["frames"])
    assert n == 38
    answer(at, 3)
    assert at.warning, "a wrong answer is told so, with the reason"
    check_figures(at)


def _sliders_valid(at):
    n_tokens = None
    for key in ("causal_generated", "causal_leak_pos"):
        found = [s for s in at.slider if s.key == key]
        if found:
            s = found[0]
            assert s.min <= s.value <= s.max, (key, s.value, s.max)
            n_tokens = s.max
    return n_tokens


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_sentence_long_short_one_word_long_in_one_session(lang):
    """The sliders follow the sentence (presets and typed text), never StreamlitValueAboveMaxError."""
    at = open_clean(lang)
    answer(at)
    at.selectbox(key="causal_preset").set_value("bank").run()
    assert_clean(at)
    n_bank = len(tokenize("She went to the bank to deposit money before walking along the river bank"))
    at.slider(key="causal_generated").set_value(n_bank).run()
    at.slider(key="causal_leak_pos").set_value(n_bank).run()
    assert_clean(at)
    at.selectbox(key="causal_preset").set_value("cat_mat").run()  # shorter: the sliders clamp to its length
    assert_clean(at)
    n_cat = len(tokenize("The cat sat on the mat and it looked very happy"))
    assert _sliders_valid(at) == n_cat
    assert at.slider(key="causal_generated").value == n_cat and at.slider(key="causal_leak_pos").value == n_cat
    at.selectbox(key="causal_preset").set_value("long_memory").run()
    assert_clean(at)
    at.slider(key="causal_generated").set_value(30).run()
    at.slider(key="causal_leak_pos").set_value(30).run()
    use_text(at, "Hi")  # one word: no sliders at all
    assert not [s for s in at.slider if s.key in ("causal_generated", "causal_leak_pos")]
    use_text(at, "Hi there")
    assert _sliders_valid(at) == 2
    use_text(at, "the dog did not jump over the fence because it was too tired and sleepy")
    assert _sliders_valid(at) == 15
    at.slider(key="causal_generated").set_value(15).run()
    at.selectbox(key="causal_preset").set_value("animal_tired").run()
    assert_clean(at)
    assert _sliders_valid(at) == N
    check_figures(at)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_japanese_text_runs_on_random_vectors_and_says_so_once(lang):
    """Japanese typed with GloVe on (the default): MeCab's tokens, all of them, on random vectors; one note, which
    contradicts nothing (no "type English", no "turn GloVe off")."""
    strings = load_strings(lang)
    at = open_clean(lang)
    use_text(at, "生徒は、先生に本を返した。彼女は")
    words = tokenize("生徒は、先生に本を返した。彼女は")
    assert len(z_of(check_figures(at)[0])) == len(words)
    shown = texts(at)
    assert shown.count(strings["common.glove_fallback"].format(seed=0)) == 1
    for contradiction in ("English-only", "英語専用", "英語で入力", "Type English", "GloVe off", "オフにして"):
        assert contradiction not in shown, contradiction
    assert _sliders_valid(at) == len(words)
