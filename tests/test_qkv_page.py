"""AppTest for lesson 2, the QKV library: every step, every preset query, the sliders at both ends, both languages."""

import re

import numpy as np
import pytest

from attention_core.qkv import load_library, lookup
from tests.apptest_utils import assert_clean, decode_array, open_page, plotly_figures, recorded_downloads

pytestmark = pytest.mark.pages

PAGE = "qkv"
LIB = load_library()
FEATURES = [f.id for f in LIB.features]


def text_of(at) -> str:
    return "\n".join(str(el.value) for kind in ("markdown", "caption", "latex", "info", "subheader")
                     for el in at.get(kind))


def figure(at, title_part: str) -> dict:
    found = [f for f in plotly_figures(at) if title_part in (f["layout"].get("title") or {}).get("text", "")]
    assert len(found) == 1, [f["layout"].get("title") for f in plotly_figures(at)]
    return found[0]


def bar_values(fig: dict) -> np.ndarray:
    return decode_array(fig["data"][0]["y"]).astype(float)


def go_to(at, step: int, answer: int | None = 3):
    at.segmented_control(key="qkv_step").set_value(step).run()
    assert_clean(at)
    if step == 3 and answer is not None:
        at.radio(key="qkv_predict").set_value(answer).run()
        assert_clean(at)
    return at


def shares_shown(at) -> np.ndarray:
    """The weights (%) drawn on step 2's bar chart."""
    return bar_values(figure(at, "softmax"))


@pytest.fixture(scope="module")
def default_run():
    return open_page(PAGE)


def test_step_0_shows_the_setup(default_run):
    at = default_run
    assert_clean(at)
    assert at.segmented_control(key="qkv_step").value == 0
    assert "I want to know how cats feel" in text_of(at)
    heat = figure(at, "keys")
    z = decode_array(heat["data"][0]["z"])
    np.testing.assert_allclose(z[0], LIB.queries[0].vector)
    np.testing.assert_allclose(z[1:], LIB.keys)
    swatches = figure(at, "Values")
    assert [m.lower() for m in swatches["data"][0]["marker"]["color"]] == ["#e69f00", "#0072b2", "#009e73", "#cc79a7"]
    assert "hand-designed" in text_of(at).lower()
    assert at.get("download_button"), "the table has a CSV download"


def test_steps_1_to_3_in_english():
    at = open_page(PAGE)
    go_to(at, 1)
    shown = text_of(at)
    assert "1.0×2.0 + 1.0×2.0 + 0.0×0.0 + 0.0×0.0 = 4.00" in shown
    np.testing.assert_allclose(bar_values(figure(at, "Scores")), [4.0, 1.0, 1.5, 2.0])

    go_to(at, 2)
    shares = shares_shown(at)
    assert shares.sum() == pytest.approx(100.0)
    assert 78.5 <= shares[0] <= 79.5
    assert "78.9 %" in text_of(at) and "100.00 %" in text_of(at)
    table = at.dataframe[0].value
    assert table["weight (%)"].astype(float).sum() == pytest.approx(100.0, abs=0.02)

    go_to(at, 3, answer=None)
    assert not plotly_figures(at), "step 3 waits for the prediction"
    at.radio(key="qkv_predict").set_value(1).run()
    assert_clean(at)
    assert at.warning, "a wrong answer is told so, then the reveal follows"
    blend = figure(at, "take away")
    parts = [decode_array(tr["x"])[0] for tr in blend["data"][:4]]
    assert sum(parts) == pytest.approx(100.0) and parts[0] == pytest.approx(78.91, abs=0.01)
    plane = figure(at, "points")
    assert len(plane["data"]) == 6
    expected = lookup(LIB.queries[0].vector, LIB.keys, LIB.values, 1.0).output
    table = at.dataframe[0].value
    # one decimal on screen, as the caption writes the output (the table fits a 1280-px projector)
    assert table.iloc[-1]["w × v (RGB)"] == "(" + ", ".join(f"{v:.1f}" for v in expected) + ")"
    assert table.iloc[-1]["weight (%)"] == "100.00"
    assert (table.iloc[-1][["key k", "value v (RGB)", "q · k", "score q·k/τ"]] == "").all(), "empty, not None"
    assert not table.isna().any().any()
    assert "(203.3, 153.1, 32.3)" in text_of(at)


@pytest.mark.parametrize("query", LIB.queries, ids=lambda q: q.id)
def test_every_preset_query(query):
    at = open_page(PAGE, query={"qkv_step": "2"})
    at.selectbox(key="qkv_query").set_value(query.id).run()
    assert_clean(at)
    sliders = [at.slider(key=f"qkv_q_{f}").value for f in FEATURES]
    np.testing.assert_allclose(sliders, query.vector)
    assert query.text["en"] in text_of(at)
    shares = shares_shown(at)
    expected = lookup(query.vector, LIB.keys, LIB.values, 1.0).weights * 100
    np.testing.assert_allclose(shares, expected, rtol=1e-9)
    assert shares.sum() == pytest.approx(100.0)
    if query.id == "physics":
        np.testing.assert_allclose(shares, 25.0)
        assert at.info and "same" in " ".join(i.value for i in at.info)


def test_query_sliders_and_temperature_at_their_extremes():
    at = open_page(PAGE)
    go_to(at, 3)
    for feature in FEATURES:
        for end in (-3.0, 3.0):
            at.slider(key=f"qkv_q_{feature}").set_value(end).run()
            assert_clean(at)
            assert "your own question, written with the sliders" in text_of(at)
    q = np.array([at.slider(key=f"qkv_q_{f}").value for f in FEATURES])
    np.testing.assert_allclose(q, 3.0)
    for tau in (0.05, 20.0):
        at.select_slider(key="qkv_temp").set_value(tau).run()
        assert_clean(at)
        found = lookup(q, LIB.keys, LIB.values, tau)
        blend = figure(at, "take away")
        parts = np.array([decode_array(tr["x"])[0] for tr in blend["data"][:4]])
        np.testing.assert_allclose(parts, 100 * found.weights, rtol=1e-9)
        for trace in figure(at, "points")["data"]:
            for axis in ("x", "y"):
                assert np.isfinite(decode_array(trace[axis])).all()
    go_to(at, 2)
    assert shares_shown(at).sum() == pytest.approx(100.0)
    assert shares_shown(at).max() < 30.0, "at tau = 20 the shares are close to even"
    at.select_slider(key="qkv_temp").set_value(0.05).run()
    assert shares_shown(at).max() > 99.9, "at tau = 0.05 one book takes (almost) everything"


def test_japanese_page_through_every_step():
    at = open_page(PAGE, lang="ja")
    assert_clean(at)
    assert "猫がどう感じているのか知りたい" in text_of(at)
    go_to(at, 1)
    assert "スコア" in text_of(at)
    go_to(at, 2)
    assert shares_shown(at).sum() == pytest.approx(100.0)
    assert "78.9 %" in text_of(at)
    go_to(at, 3)
    parts = [decode_array(tr["x"])[0] for tr in figure(at, "持ち帰る")["data"][:4]]
    assert sum(parts) == pytest.approx(100.0)
    assert figure(at, "凸包")["data"]


def test_a_link_opens_the_same_view():
    at = open_page(PAGE, query={"qkv_step": "2", "qkv_temp": "0.5", "qkv_q_dogs": "2.0"})
    assert_clean(at)
    assert at.segmented_control(key="qkv_step").value == 2
    assert at.select_slider(key="qkv_temp").value == 0.5
    q = [at.slider(key=f"qkv_q_{f}").value for f in FEATURES]
    assert q == [1.0, 1.0, 2.0, 0.0]
    np.testing.assert_allclose(shares_shown(at), 100 * lookup(q, LIB.keys, LIB.values, 0.5).weights, rtol=1e-9)


def test_bad_link_values_fall_back_to_defaults():
    at = open_page(PAGE, query={"qkv_step": "9", "qkv_temp": "abc", "qkv_q_cats": "1e9"})
    assert_clean(at)
    assert at.segmented_control(key="qkv_step").value == 0
    assert at.select_slider(key="qkv_temp").value == 1.0
    assert -3.0 <= at.slider(key="qkv_q_cats").value <= 3.0


def test_no_nan_or_inf_is_shown_at_the_extremes():
    at = open_page(PAGE, query={"qkv_temp": "0.05"})
    for step in (1, 2, 3):
        go_to(at, step)
        assert not re.search(r"(?<![A-Za-z])(nan|inf)(?![A-Za-z])", text_of(at), re.IGNORECASE)


def test_moving_a_slider_makes_it_your_own_question_and_a_preset_restores_it():
    at = open_page(PAGE)
    at.slider(key="qkv_q_cooking").set_value(2.5).run()
    assert_clean(at)
    assert at.selectbox(key="qkv_query").value is None
    assert "your own question, written with the sliders" in text_of(at)
    at.selectbox(key="qkv_query").set_value("cats_feel").run()
    assert_clean(at)
    assert [at.slider(key=f"qkv_q_{f}").value for f in FEATURES] == [1.0, 1.0, 0.0, 0.0]
    assert "I want to know how cats feel" in text_of(at)




@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_output_row_shows_empty_cells_and_the_csv_has_a_bom(lang, monkeypatch):
    """No "None" in the output row; the CSV is UTF-8 with a BOM, headers in the page's language."""
    files = recorded_downloads(monkeypatch)
    at = go_to(open_page(PAGE, lang), 3)
    table = at.dataframe[0].value
    assert len(table) == len(LIB.books) + 1
    assert not table.isna().any().any()
    assert "None" not in table.astype(str).to_numpy().ravel().tolist()
    assert (table.iloc[-1] == "").sum() == 4  # key, value, dot product, score: the output has none of its own
    (button,) = at.get("download_button")
    data = files[button.proto.url]
    assert data.startswith(b"\xef\xbb\xbf")
    header = data.decode("utf-8-sig").splitlines()[0]
    assert header.split(",")[0] == ("book" if lang == "en" else "本")
    last = data.decode("utf-8-sig").splitlines()[-1].split(",")
    assert last[0] and last[1:5] == ["", "", "", ""], last  # empty cells in the CSV too, the numbers stay numbers


def test_a_preset_after_your_own_question_and_back_never_raises():
    """The selectbox that a slider's callback sets to None (your own question) follows every change."""
    at = go_to(open_page(PAGE), 2)
    for feature, value in (("cats", -3.0), ("dogs", 3.0)):
        at.slider(key=f"qkv_q_{feature}").set_value(value).run()
        assert_clean(at)
        assert at.selectbox(key="qkv_query").value is None
    chosen = [q for q in LIB.queries if q.id != LIB.queries[0].id][0]
    at.selectbox(key="qkv_query").set_value(chosen.id).run()
    assert_clean(at)
    assert [at.slider(key=f"qkv_q_{f}").value for f in FEATURES] == [float(v) for v in chosen.vector]
    at.slider(key="qkv_q_cats").set_value(0.3).run()
    at.segmented_control(key="qkv_step").set_value(3).run()
    assert_clean(at)
    assert at.selectbox(key="qkv_query").value is None


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_shares_are_listed_as_the_language_lists(lang):
    """Step 2's sentence lists the four books' shares with the language's separator (、 in Japanese), and no number or
    list on any step breaks the page's number style."""
    from tests.number_style import number_style_problems
    from ui.shared.i18n import Translator

    t = Translator(lang)
    at = go_to(open_page(PAGE, lang), 2)
    titles = [b.title[lang] for b in LIB.books]
    found = lookup(LIB.queries[0].vector, LIB.keys, LIB.values, 1.0)
    listed = t.join(f"{title} {100 * w:.1f} %" for title, w in zip(titles, found.weights))
    assert any(listed in m.value for m in at.markdown)
    assert (", " not in listed) if lang == "ja" else ("、" not in listed)
    for step in (0, 1, 2, 3):
        go_to(at, step)
        assert number_style_problems(at, lang) == [], step
