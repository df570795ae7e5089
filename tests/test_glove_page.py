"""AppTest of lesson 6 (the GloVe experiment): every section, training, both languages, and the numbers on screen
checked against attention_core (the learner's own sentences: tests/test_glove_sentence_page.py)."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.glove import embed
from attention_core.glove.rows import projected_row, ranks_in_rows, raw_row
from attention_core.text import tokenize
from tests.apptest_utils import assert_clean, decode_array, open_page, plotly_figures, recorded_downloads
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.pages

PAGE = "glove"
DEFAULT = "The animal did not cross the street because it was too tired"  # data/sentences.toml's first preset (Document A's)
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


def test_the_teachers_note_gives_document_a_row_and_its_rank():
    """Under the raw row, for Document A's sentence only: the row's numbers, and 11th (its prose) against 10th."""
    at = answer(open_clean())
    assert [e.label for e in at.expander][:1] == ["For teachers: Document A's row"]
    note = next(m.value for m in at.markdown if "Document A's published row" in m.value)
    assert "it 0.1801, not 0.1452, because 0.1198, …, animal 0.0310" in note
    assert "its weight is 0.180150" in note and "comes 11th of 12" in note and "ranks it 10th of 12" in note
    ja = answer(open_clean("ja"))
    note = next(m.value for m in ja.markdown if "Document A が公開した行" in m.value)
    assert "12 語中 11 位" in note and "このページでも 12 語中 10 位" in note
    at.selectbox(key="glove_target").set_value("street").run()  # another word's rank: not the one Document A gives
    assert not [e for e in at.expander if "Document A" in e.label]
    at.selectbox(key="glove_target").set_value("animal").run()
    assert [e for e in at.expander if "Document A" in e.label]
    at.text_input(key="glove_sentence").input(DEFAULT.replace("tired", "wide")).run()
    assert not [e for e in at.expander if "Document A" in e.label]


def test_the_histogram_caption_accounts_for_every_rank(glove):
    """Even n: the two halves sum to 100 %; odd n: the middle rank is said between them."""
    import re

    at = open_clean()
    caption = next(c.value for c in at.caption if "random draws" in c.value)
    halves = [float(x) for x in re.findall(r"half \(ranks [0-9–]+\) ([0-9.]+) %", caption)]
    assert len(halves) == 2 and sum(halves) == pytest.approx(100.0, abs=0.11)
    assert "Over 2,000 random draws" in caption
    at.text_input(key="glove_sentence").input("Mary gave John the book because she liked him").run()
    caption = next(c.value for c in at.caption if "random draws" in c.value)
    middle = re.search(r"the middle rank 5 ([0-9.]+) %", caption)
    halves = [float(x) for x in re.findall(r"half \(ranks [0-9–]+\) ([0-9.]+) %", caption)]
    assert middle and sum(halves) + float(middle.group(1)) == pytest.approx(100.0, abs=0.16)


def test_the_u_shape_sentence_is_computed_and_the_3d_view_says_what_it_is_not():
    at = open_clean()
    ends = next(m.value for m in at.markdown if "pile up at *both* ends" in m.value)
    assert "“animal” is first in 17.2 % of the draws and last in 18.5 %, against 8.3 % each" in ends
    cloud = next(c.value for c in at.caption if c.value.startswith("PCA of the 12 word vectors"))
    assert "the three axes keep 70.7 % of their variance" in cloud
    assert "Closeness in this view is not the attention score" in cloud


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_section_d_defines_its_symbols_and_says_it_is_an_encoder_setting(lang):
    at = open_clean(lang)
    text = shown(at)
    assert ("$e_c$ is the vector with 1 at $c$" in text and "$m$ is the number of training sentences" in text
            and "full-batch Adam (Adam: gradient descent" in text and "An encoder's view." in text
            and "GPT-style model, under lesson 5's causal mask" in text) if lang == "en" else (
            "$e_c$ は $c$ の位置だけ 1" in text and "エンコーダー（BERT 型）" in text and "因果マスク" in text)


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
    # the "wide" sentence of the minimal pair: after training "it" goes to "street"
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


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_held_out_accuracy_is_one_measure_before_and_after_and_says_chance(lang, glove):
    """The metrics before and after training count the same thing (the right noun gets the largest weight of all the
    words), checked against the core; the caption says so and gives chance (a word at random)."""
    from attention_core.glove.pronouns import load_pronoun_dataset, pronoun_batch
    from attention_core.glove.training import TrainSetting, accuracy, head_rows, train_head

    at = open_clean(lang)
    at.button(key="glove_train").click().run()
    check_clean(at)
    held = pronoun_batch(load_pronoun_dataset().held_out, glove)
    result = train_head(pronoun_batch(load_pronoun_dataset().train, glove), TrainSetting())
    before = accuracy(head_rows(result.W_q_init, result.W_k_init, held, True), held.answer)
    after = accuracy(head_rows(result.W_q, result.W_k, held, True), held.answer)
    metrics = {m.label: m.value for m in at.metric}
    strings = load_strings(lang)
    assert metrics[strings["glove.acc_before"]] == f"{100 * before:.1f} %" == "4.2 %"
    assert metrics[strings["glove.acc_held"]] == f"{100 * after:.1f} %" == "91.7 %"
    lengths = held.mask.sum(axis=1)
    chance = f"{100 * float(np.mean(1 / lengths)):.1f}"
    caption = next(c.value for c in at.caption if chance in c.value)
    if lang == "en":
        assert "before and after training alike: 2 of the 48 held-out sentences before training, 44 after" in caption
        assert f"Chance, a word picked at random, is {chance} %" in caption and "(12–13 words)" in caption
    else:
        assert "学習前は 2 文、学習後は 44 文" in caption and f"{chance} %" in caption


