"""AppTest of lesson 6 (the GloVe experiment): every control, hostile sentences, training, both languages,
and the numbers on screen checked against attention_core."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.glove import embed
from attention_core.glove_rows import projected_row, ranks_in_rows, raw_row
from attention_core.text import tokenize
from tests.apptest_utils import assert_clean, decode_array, open_page, plotly_figures, recorded_downloads

pytestmark = pytest.mark.pages

PAGE = "glove"
DEFAULT = "The animal didn't cross the street because it was too tired"  # as the other pages write it
WORDS = tokenize(DEFAULT)
QI, TI = WORDS.index("it"), WORDS.index("animal")


def open_clean(lang="en", query=None):
    at = open_page(PAGE, lang, query=query)
    assert_clean(at)
    return at


def shown(at) -> str:
    parts = []
    for kind in ("markdown", "caption", "info", "warning", "success", "subheader"):
        parts += [str(el.value) for el in at.get(kind)]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    return "\n".join(parts)


def numbers_of(trace):
    """Every numeric array in a Plotly trace (x, y, z, customdata, marker size and colour)."""
    out = []
    for field in ("x", "y", "z", "customdata"):
        if trace.get(field) is not None:
            out.append(trace[field])
    marker = trace.get("marker") or {}
    out += [marker[f] for f in ("size", "color") if isinstance(marker.get(f), (list, dict))]
    arrays = []
    for value in out:
        try:
            arr = decode_array(value)
        except (ValueError, TypeError):
            continue
        if arr.dtype.kind in "fiu":
            arrays.append(arr.astype(float))
    return arrays


def check_clean(at):
    """No exception or error box, no NaN/inf in any figure or table, no 'nan' in the text."""
    assert_clean(at)
    for fig in plotly_figures(at):
        for trace in fig["data"]:
            for arr in numbers_of(trace):
                assert np.isfinite(arr).all(), trace.get("type")
    for df in at.dataframe:
        numeric = df.value.select_dtypes("number")
        assert np.isfinite(numeric.to_numpy(dtype=float)).all()
    assert "nan" not in shown(at).lower().split()
    return at


def answer(at, choice=3):
    at.radio(key="glove_predict").set_value(choice).run()
    return check_clean(at)


def titles(at):
    return [fig["layout"].get("title", {}).get("text", "") for fig in plotly_figures(at)]


def bar_values(fig):
    return decode_array(fig["data"][0]["y"]).astype(float)


@pytest.fixture(scope="module")
def X(glove):
    return embed(WORDS, glove)[0]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_default_page_in_both_languages(lang, X):
    at = open_clean(lang)
    check_clean(at)
    assert at.title[0].value
    assert len(at.latex) >= 4
    assert len(at.dataframe) == 0, "the raw table waits for the prediction"
    answer(at)
    assert len(at.dataframe) == 1
    table = at.dataframe[0].value
    weights = table.iloc[:, 3].to_numpy(dtype=float)
    np.testing.assert_allclose(weights, np.sort(raw_row(X, QI))[::-1], atol=1e-12)
    assert table.iloc[:, 0].tolist() == sorted(table.iloc[:, 0].tolist())
    target_row = [i for i, w in enumerate(table.iloc[:, 1]) if "◀" in w]
    assert len(target_row) == 1 and table.iloc[target_row[0], 0] == 10  # "animal" ranks 10 of 12
    if lang == "en":
        assert "ranks **10 of 12**" in shown(at)
    assert len(at.get("download_button")) >= 2
    assert at.button(key="glove_train").value is False


def test_raw_bars_and_projected_numbers_match_the_core(X):
    at = answer(open_clean())
    figs = plotly_figures(at)
    np.testing.assert_allclose(bar_values(figs[0]), raw_row(X, QI), atol=1e-12)
    proj = projected_row(X, QI, 16, 0)
    np.testing.assert_allclose(bar_values(figs[1]), proj, atol=1e-12)
    rank = int(ranks_in_rows(proj, TI))
    assert f"ranks **{rank} of 12**" in shown(at)
    hist = figs[2]
    shares = decode_array(hist["data"][0]["y"]).astype(float)
    counts = decode_array(hist["data"][0]["customdata"]).astype(float)
    assert counts.sum() == 2000 and shares.sum() == pytest.approx(100.0)
    np.testing.assert_allclose(decode_array(hist["data"][1]["y"]).astype(float), 100 / 12)
    cloud = figs[3]
    assert {tr["type"] for tr in cloud["data"]} == {"scatter3d"}


def test_reroll_seed_and_dk(X):
    at = open_clean()
    at.button(key="glove_reroll").click().run()
    check_clean(at)
    assert at.number_input(key="glove_seed").value == 1
    assert f"ranks **{int(ranks_in_rows(projected_row(X, QI, 16, 1), TI))} of 12**" in shown(at)
    for d_k in (50, 64, 16):
        at.selectbox(key="glove_dk").set_value(d_k).run()
        check_clean(at)
        assert f"d_k = {d_k}" in shown(at)
    for seed in (0, 2**31 - 1, 12345):
        at.number_input(key="glove_seed").set_value(seed).run()
        check_clean(at)
        rank = int(ranks_in_rows(projected_row(X, QI, 16, seed), TI))
        assert f"With seed {seed} and d_k = 16, “animal” ranks **{rank} of 12**" in shown(at)
    at.number_input(key="glove_seed").set_value(2**31 - 1).run()
    at.button(key="glove_reroll").click().run()  # wraps around instead of passing the largest seed
    check_clean(at)
    assert at.number_input(key="glove_seed").value == 0


def test_query_and_target_words(X):
    at = answer(open_clean())
    at.selectbox(key="glove_target").set_value("street").run()
    check_clean(at)
    si = WORDS.index("street")
    assert f"“street” ranks **{int(ranks_in_rows(raw_row(X, QI), si))} of 12**" in shown(at)
    at.selectbox(key="glove_query").set_value("tired").run()
    check_clean(at)
    assert "tired" not in at.selectbox(key="glove_target").options
    at.selectbox(key="glove_query").set_value("the").run()  # repeated word: the first is used, and said so
    check_clean(at)
    assert "occurs 2 times" in shown(at)


@pytest.mark.parametrize("text, message", [
    ("", "Type a sentence first"),
    ("     ", "Type a sentence first"),
    ("xqzzyv blorptang fnordle", "at least two words"),
    ("😀 🙃 🐱", "at least two words"),
    ("猫がマットの上に座った。それは満足そうだった。", "English-only"),  # not a chart of "。"
    ("猫が座った。", "at least two words"),
    ("it", "at least two words"),
    ("the the the", "at least two different words"),
    (" ".join(["word"] * 60), "at most 40"),
])
def test_sentences_without_a_figure_say_why(text, message):
    at = open_clean()
    at.text_input(key="glove_sentence").input(text).run()
    check_clean(at)
    assert message in shown(at)
    assert not plotly_figures(at)


@pytest.mark.parametrize("text", [
    "<script>alert(1)</script> the dog ran because it was hungry",
    "**bold** [x](javascript:alert(1)) # the cat and it $\\frac{1}{0}$",
    "the dog barked at the mailman because it was angry",
    "dog it",
    "the cat sat on the mat " * 6,  # 36 tokens, under the limit of 40
])
def test_other_sentences_render(text):
    at = answer(open_clean())
    at.text_input(key="glove_sentence").input(text).run()
    check_clean(at)
    assert len(plotly_figures(at)) >= 4
    assert all("<script>" not in m.value for m in at.markdown)


def test_sentence_without_it_or_animal_explains_the_fallback():
    at = open_clean()
    at.text_input(key="glove_sentence").input("the dog chased the cat across the road").run()
    check_clean(at)
    text = shown(at)
    assert "There is no “it” in this sentence" in text and "There is no “animal” in this sentence" in text


def test_unknown_words_are_listed_and_left_out():
    at = open_clean()
    at.text_input(key="glove_sentence").input("the animal xqzzyv did not cross because it was tired").run()
    check_clean(at)
    assert any("xqzzyv" in c.value for c in at.caption)


def test_training_button_trains_and_reports(X):
    at = answer(open_clean())
    assert "Press **Train the head**" in shown(at)
    at.button(key="glove_train").click().run()
    check_clean(at)
    state = at.session_state["glove_trained"]
    assert state["W_q"].shape == (50, 8) and np.isfinite(state["losses"]).all()
    text = shown(at)
    assert "Trained with d_k = 8, learning rate 0.03, 300 steps, weight decay 0.0001, seed 0, context on" in text
    held = next(m for m in at.metric if m.label.startswith("Held-out accuracy (trained)"))
    assert float(held.value.split()[0]) >= 90.0
    assert "goes from rank" in text and "to rank **1 of 12**" in text
    assert "not in the training set" in text
    assert "trained head (d)" in at.radio(key="glove_cloud").options
    at.radio(key="glove_cloud").set_value("trained").run()
    check_clean(at)
    assert any("trained head" in x for x in titles(at))
    # the "wide" twin: after training "it" goes to "street"
    at.text_input(key="glove_sentence").input(DEFAULT.replace("tired", "wide")).run()
    at.selectbox(key="glove_target").set_value("street").run()
    check_clean(at)
    assert "to rank **1 of 12**" in shown(at)


def test_training_controls_at_their_ends():
    at = answer(open_clean())
    at.slider(key="glove_train_steps").set_value(20).run()
    at.selectbox(key="glove_train_dk").set_value(2).run()
    at.selectbox(key="glove_train_lr").set_value(0.3).run()
    at.selectbox(key="glove_train_wd").set_value(0.01).run()
    at.number_input(key="glove_train_seed").set_value(2**31 - 1).run()
    at.button(key="glove_train").click().run()
    check_clean(at)
    assert "Trained with d_k = 2, learning rate 0.3, 20 steps, weight decay 0.01, seed 2147483647" in shown(at)
    at.slider(key="glove_train_steps").set_value(800).run()
    at.selectbox(key="glove_train_dk").set_value(64).run()
    at.selectbox(key="glove_train_lr").set_value(0.003).run()
    at.toggle(key="glove_train_context").set_value(False).run()
    check_clean(at)
    assert "The controls now differ" in shown(at)
    at.button(key="glove_train").click().run()
    check_clean(at)
    text = shown(at)
    assert "d_k = 64, learning rate 0.003, 800 steps" in text and "context off" in text
    held = next(m for m in at.metric if m.label.startswith("Held-out accuracy (trained)"))
    assert float(held.value.split()[0]) <= 50.0  # the cap without context


def test_japanese_training_and_odd_sentence():
    at = open_clean("ja")
    at.button(key="glove_train").click().run()
    check_clean(at)
    assert "学習しました" in shown(at)
    at.text_input(key="glove_sentence").input("🐱 it dog").run()
    check_clean(at)
    at.text_input(key="glove_sentence").input("").run()
    check_clean(at)
    assert at.warning and not plotly_figures(at)


def test_link_opens_the_same_view(X):
    at = open_clean(query={"glove_seed": "5", "glove_dk": "64", "glove_target": "street"})
    check_clean(at)
    si = WORDS.index("street")
    assert f"With seed 5 and d_k = 64, “street” ranks **{int(ranks_in_rows(projected_row(X, QI, 64, 5), si))} of 12**" \
        in shown(at)


def _tracked(at):
    """(query box, target box, the target word the page's rank sentence names)."""
    import re

    q, tgt = at.selectbox(key="glove_query"), at.selectbox(key="glove_target")
    assert q.value in q.options and tgt.value in tgt.options and q.value != tgt.value
    proto_default = tgt.proto.default if not tgt.proto.set_value else None
    named = re.search(r"“([^”]+)” ranks \*\*", shown(at)).group(1)
    return q.value, tgt.value, named, proto_default


def test_sentence_long_short_one_word_long_in_one_session():
    """Query and target follow the sentence; the boxes show the words the page computes."""
    at = open_clean()
    at.selectbox(key="glove_target").set_value("street").run()
    at.selectbox(key="glove_query").set_value("tired").run()
    check_clean(at)
    sequence = [
        "the cat sat on the mat because it wanted to sleep !",  # no "tired", no "street": both fall back
        "the dog didn't sleep because it was cold",
        "it dog",
        "dog",  # one word: no boxes, a message
        "the the the",
        DEFAULT,
        "Paris is where I was born , and after many years of travel , long winters , new languages and new friends",
        DEFAULT,
    ]
    for text in sequence:
        at.text_input(key="glove_sentence").input(text).run()
        assert_clean(at)
        if text in ("dog", "the the the"):
            assert not [s for s in at.selectbox if s.key in ("glove_query", "glove_target")]
            continue
        query, target, named, _ = _tracked(at)
        assert named == target, (text, named, target)  # what the box shows is what the page tracks
        tokens = tokenize(text)
        assert query in tokens and target in tokens
        if "it" in tokens:
            assert query == "it"  # "tired" left with the first sentence; the default query came back and stays
    assert _tracked(at)[:3] == ("it", "animal", "animal")


def test_a_kept_word_stays_and_a_box_is_rewritten_when_the_options_change():
    at = open_clean()
    at.selectbox(key="glove_target").set_value("street").run()
    at.text_input(key="glove_sentence").input("the street was wide and it was long").run()
    assert _tracked(at)[1:3] == ("street", "street")  # still there: kept
    at.text_input(key="glove_sentence").input("the road was wide and it was long !").run()
    target = at.selectbox(key="glove_target")
    assert target.value == "the" and _tracked(at)[2] == "the"  # "street" is gone: the first other word
    assert target.proto.set_value, "the browser is told the new value, not left showing an old index"


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_japanese_typed_says_english_only(lang):
    at = open_clean(lang)
    at.text_input(key="glove_sentence").input("猫がマットの上に座った。").run()
    check_clean(at)
    note = " ".join(i.value for i in at.info)
    assert ("English-only" in note) if lang == "en" else ("英語専用" in note)
    assert not plotly_figures(at) and "。" in note
    assert "“。”" not in shown(at) and "「。」" not in shown(at)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_csv_downloads_have_a_bom_and_translated_headers(lang, monkeypatch):
    files = recorded_downloads(monkeypatch)
    at = answer(open_clean(lang))
    data = {b.key: files[b.proto.url] for b in at.get("download_button")}
    assert {"glove_raw_download", "glove_hist_download"} <= set(data)
    for blob in data.values():
        assert blob.startswith(b"\xef\xbb\xbf")
    header = data["glove_hist_download"].decode("utf-8-sig").splitlines()[0]
    assert header == ("rank,draws,share,uniform share" if lang == "en" else "順位,試行回数,割合,一様分布の割合") or (
        lang == "ja" and not any(c.isascii() and c.isalpha() for c in header))
