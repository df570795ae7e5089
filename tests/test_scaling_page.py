"""AppTest for the scaling page: every control at both ends, both languages, the numbers on screen, no NaN/inf."""

import math
import re

import numpy as np
import pytest

from attention_core.scaling import DIM_CHOICES, KEY_RANGE, TEMPERATURE_CHOICES, prefix_weights, random_query_keys
from tests.apptest_utils import assert_clean, decode_array, open_page, plotly_figures, recorded_downloads
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.pages

PAGE = "scaling"
NUMERIC_FIELDS = ("x", "y", "z", "width", "customdata")
BAD_WORDS = re.compile(r"\b(nan|inf|infinity)\b", re.IGNORECASE)


def numeric(value):
    """A figure field as a float array, or None when it holds text (e.g. key labels in customdata)."""
    try:
        arr = decode_array(value)
        return np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def traces(fig: dict):
    yield from fig["data"]
    for frame in fig.get("frames", []):
        yield from frame["data"]


def assert_all_finite(at) -> None:
    """No NaN or inf in any figure's numbers (frames included), nor as a word in any caption, metric or text."""
    checked = 0
    for fig in plotly_figures(at):
        for trace in traces(fig):
            for field in NUMERIC_FIELDS:
                if field in trace and (arr := numeric(trace[field])) is not None:
                    assert np.all(np.isfinite(arr)), (trace.get("name"), field)
                    checked += 1
            for text in trace.get("text") or []:
                assert not BAD_WORDS.search(str(text))
    assert checked, "no figure numbers drawn"
    shown = [c.value for c in at.caption] + [m.value for m in at.metric] + [str(m.value) for m in at.markdown]
    assert shown, "no text drawn"
    for text in shown:
        assert not BAD_WORDS.search(text), text


def set_controls(at, d, scale, tau, keys, seed):
    at.select_slider(key="scaling_d").set_value(d)
    at.toggle(key="scaling_scale").set_value(scale)
    at.select_slider(key="scaling_tau").set_value(tau)
    at.slider(key="scaling_keys").set_value(keys)
    at.number_input(key="scaling_seed").set_value(seed)
    at.radio(key="scaling_predict").set_value(4)  # the animation and the table come with the answer
    return at.run()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_default_view_renders_clean(lang):
    at = open_page(PAGE, lang)
    assert_clean(at)
    assert len(plotly_figures(at)) == 3  # histogram, weights, sampling (the animation and the table wait for a prediction)
    assert not at.dataframe and not at.get("download_button")
    assert at.select_slider(key="scaling_d").value == 64 and at.toggle(key="scaling_scale").value is True
    assert at.slider(key="scaling_keys").value == 16  # the 16 keys the question and the table compare
    assert_all_finite(at)


D_LO, D_HI = DIM_CHOICES[0], DIM_CHOICES[-1]
T_LO, T_HI = TEMPERATURE_CHOICES[0], TEMPERATURE_CHOICES[-1]
K_LO, K_HI = KEY_RANGE
EXTREMES = [  # every end of every control, each with scaling on and off
    (d, scale, tau, keys, seed)
    for d, tau, keys, seed in [(D_LO, T_LO, K_LO, 0), (D_HI, T_LO, K_HI, 2**31 - 1), (D_HI, T_HI, K_LO, 0),
                               (D_LO, T_HI, K_HI, 2**31 - 1)]
    for scale in (False, True)
]


@pytest.mark.parametrize("d,scale,tau,keys,seed", EXTREMES)
def test_extremes_stay_finite_and_show_the_core_numbers(d, scale, tau, keys, seed):
    at = set_controls(open_page(PAGE), d, scale, tau, keys, seed)
    assert_clean(at)
    assert_all_finite(at)
    hist, bars, anim, _sweep, _sampling = plotly_figures(at)
    # Histogram: a density (area 1) under a normal curve whose peak is 1 / sqrt(2 pi var), var = d / tau^2 or 1 / tau^2.
    widths, density = decode_array(hist["data"][0]["width"]), decode_array(hist["data"][0]["y"])
    assert np.sum(widths * density) == pytest.approx(1.0)
    variance = (1.0 if scale else d) / tau**2
    assert decode_array(hist["data"][1]["y"]).max() == pytest.approx(1 / math.sqrt(2 * math.pi * variance), rel=1e-3)
    # Weights: exactly the core's softmax of this seed's query over its keys.
    q, K = random_query_keys(keys, seed)
    expected = prefix_weights(q, K, [d], scale, tau)[0]
    np.testing.assert_allclose(decode_array(bars["data"][0]["y"]), expected, rtol=1e-12, atol=1e-300)
    assert at.metric[1].value == f"{expected.max():.3f}"
    # Animation: one frame per d, the unscaled and scaled weights of the same query.
    assert [f["name"] for f in anim["frames"]] == [f"d = {dim}" for dim in DIM_CHOICES]
    last = anim["frames"][-1]["data"]
    np.testing.assert_allclose(decode_array(last[0]["y"]), prefix_weights(q, K, [1024], False, tau)[0], atol=1e-12)
    np.testing.assert_allclose(decode_array(last[1]["y"]), prefix_weights(q, K, [1024], True, tau)[0], atol=1e-12)


def test_extreme_unscaled_is_one_hot_on_screen():
    at = open_page(PAGE, "ja", query={"scaling_d": "1024", "scaling_scale": "false", "scaling_tau": "0.05",
                                     "scaling_keys": "64"})
    assert_clean(at)
    assert at.select_slider(key="scaling_d").value == 1024 and at.toggle(key="scaling_scale").value is False
    assert [m.value for m in at.metric][1:] == ["1.000", "0.000", "0.000"]
    assert_all_finite(at)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_prediction_reveals_the_table_and_its_chart(lang):
    at = open_page(PAGE, lang)
    at.radio(key="scaling_predict").set_value(4).run()
    assert_clean(at)
    assert at.success, "answer 4 (above 0.9) is the right one"
    df = at.dataframe[0].value  # one row per measure, one column per d (numbers as text)
    strings = load_strings(lang)
    assert list(df.columns)[1:] == [f"{strings['scaling.col_d']} = {d}" for d in DIM_CHOICES]  # headers as shown
    rows = {row[0]: [float(x.replace(",", "")) for x in row[1:]] for row in df.itertuples(index=False)}
    assert list(rows) == [strings[f"scaling.{k}"] for k in ("col_var", "col_ratio", "col_max_u", "col_max_s",
                                                             "col_h_u", "col_h_s", "col_j_u", "col_j_s")]
    max_unscaled, max_scaled = np.array(rows[strings["scaling.col_max_u"]]), np.array(rows[strings["scaling.col_max_s"]])
    assert max_unscaled[-1] > 0.9
    assert ((max_scaled > 0.2) & (max_scaled < 0.3)).all()
    assert np.all(np.abs(np.array(rows[strings["scaling.col_ratio"]]) - 1) < 0.05)  # var(q.k / sqrt d) = 1 at every d
    np.testing.assert_allclose(rows[strings["scaling.col_var"]], DIM_CHOICES, rtol=0.05)  # var(q.k) = d
    assert at.get("download_button")
    figs = plotly_figures(at)
    assert len(figs) == 5
    sweep = figs[3]
    assert len(sweep["data"]) >= 10
    assert_all_finite(at)


def test_wrong_prediction_still_reveals_with_the_explanation():
    at = open_page(PAGE)
    at.radio(key="scaling_predict").set_value(2).run()
    assert_clean(at)
    assert at.warning and at.dataframe





@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_csv_has_a_bom_and_keeps_english_snake_case_headers(lang, monkeypatch):
    """Scaling_table.csv is UTF-8 with a BOM, its headers English snake_case in both languages."""
    files = recorded_downloads(monkeypatch)
    at = open_page(PAGE, lang)
    at.radio(key="scaling_predict").set_value(4).run()
    assert_clean(at)
    (button,) = at.get("download_button")
    data = files[button.proto.url]
    assert data.startswith(b"\xef\xbb\xbf")
    lines = data.decode("utf-8-sig").splitlines()
    assert lines[0].startswith("d,var_qk,var_qk_se,var_ratio,var_ratio_se,max_unscaled")
    assert len(lines) == 1 + len(DIM_CHOICES)


# --- how the page writes numbers, lists and its jargon ---

@pytest.mark.parametrize("lang", ["en", "ja"])
def test_numbers_and_lists_read_as_written(lang):
    """No 1.7e-07, no 2000 without its separator, no ASCII ", " in a Japanese list: at the defaults (revealed) and
    with a temperature that makes the theory's variance tiny."""
    from tests.number_style import number_style_problems

    at = open_page(PAGE, lang)
    at.radio(key="scaling_predict").set_value(4).run()
    assert_clean(at)
    assert number_style_problems(at, lang) == []
    assert any("4,096" in c.value for c in at.caption), "the histogram's count is grouped"
    at = set_controls(at, 4, True, T_HI, 16, 0)
    assert_clean(at)
    assert number_style_problems(at, lang) == []


def test_the_number_checks_catch_each_rule():
    from tests.number_style import text_problems

    assert text_problems(["first 4.1e-06, last 1.3"], "en") and text_problems(["Averaging 2000 random draws"], "en")
    assert text_problems(["猫 78.9 %, 犬 10.0 %"], "ja") and not text_problems(["猫 78.9 %、犬 10.0 %"], "ja")
    assert text_problems(["4.1 × 10⁻⁶", "2,000 draws", "d = 1024", "16 × 1024", "0.1234", "q = (1.0, 2.0)",
                          "%{y:.4e}", "at d = 1024."], "en") == []
    assert text_problems(["at d = 10240."], "en")


def test_num_writes_small_numbers_as_powers_of_ten():
    from ui.scaling import num

    assert num(0.000123456) == "1.235 × 10⁻⁴" and num(0.0025) == "0.0025" and num(12345.6) == "12,346"


GLOSSED = {  # the jargon of the page -> where it is explained at first sight (a metric's tooltip, the intro)
    "en": {"entropy": "how spread the weights are", "nats": "natural log", "Frobenius": "sum of the squared entries",
           "Jacobian": "how much each weight moves when one score is nudged"},
    "ja": {"エントロピー": "散らばり具合", "ナット": "自然対数", "フロベニウスノルム": "2 乗和の平方根",
           "ヤコビアン": "各重みがどれだけ動くか"},
}


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_jargon_is_glossed_and_the_norm_written_properly(lang, presenter):
    """Entropy, nats, the Frobenius norm and the Jacobian each get a one-line gloss on the page (the metrics' tooltips
    stay in presenter mode); the norm's F is a subscript (LaTeX or <sub>), never a typed "_F"."""
    from tests.visible_text import visible_texts

    at = open_page(PAGE, lang, query={"presenter": "true"} if presenter else None)
    at.radio(key="scaling_predict").set_value(4).run()
    assert_clean(at)
    helps = " ".join(m.help for m in at.metric)
    texts = visible_texts(at)
    shown = " ".join(texts)
    for term, gloss in GLOSSED[lang].items():
        assert term in shown and gloss in shown, term
    for term in ("entropy", "Frobenius") if lang == "en" else ("エントロピー", "フロベニウスノルム"):
        assert term.lower() in helps.lower(), term
    jacobian_label = at.metric[3].label
    assert r"\rVert_F$" in jacobian_label and jacobian_label.count("$") == 2
    assert [t for t in texts if "‖_F" in t or "‖J‖_F" in t] == []
