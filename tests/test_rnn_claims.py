"""Every claim the RNN page's text makes, computed from the core at the page's default settings.

Also: the best case against an independent reference, the probe's reduced sizes against the old larger ones, float32
against float64, and the chart dicts against plotly.graph_objects validation.
"""

import functools
import re
import tomllib
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

from attention_core.rnn import elman_weights, rnn_states_after
from attention_core.rnn_probe import (
    best_case_memory,
    first_length_below,
    first_word_recall_rnn,
    last_length_at_least,
    linear_recall,
    memory_probe,
    orthogonal_matrix,
)
from charts.rnn import influence_chart, memory_probe_chart
from ui.rnn import DEFAULTS, FULL, LOST, PROBE_D, PROBE_HIDDEN, PROBE_LENGTHS, PROBE_TEST, PROBE_TRAIN, number_text

ROOT = Path(__file__).resolve().parent.parent
LOCALES = {lang: tomllib.loads((ROOT / f"locales/{lang}/rnn.toml").read_text("utf-8")) for lang in ("en", "ja")}


@functools.lru_cache(maxsize=None)
def probe(radius=DEFAULTS["radius"], seed=DEFAULTS["seed"]):
    return memory_probe(PROBE_LENGTHS, PROBE_HIDDEN, radius, seed, d_in=PROBE_D, n_train=PROBE_TRAIN, n_test=PROBE_TEST)


@functools.lru_cache(maxsize=None)
def best(seed=DEFAULTS["seed"]):
    return best_case_memory(PROBE_LENGTHS, PROBE_HIDDEN, seed, d_in=PROBE_D)


# --- the text ---------------------------------------------------------------------------------------------------------

def test_no_typed_figures_or_impossible_r2_in_the_text():
    for lang, strings in LOCALES.items():
        text = "\n".join(strings.values())
        assert "≥ {att_min}" not in text and ">= 1" not in text, lang
        assert "10⁻⁶" not in text and "1e-6" not in text, "the predicted ratio is computed, not typed"
        assert "dozen" not in text and "十数語" not in text, "the 'loses the first word after' length is computed"
        assert "128" not in text, "the probe sizes come from the code"


def test_attention_gap_is_printed_as_an_upper_bound():
    from ui.rnn import gap_text

    assert gap_text([1.0, 1.0]) == "1 × 10⁻¹⁶"
    assert gap_text([1.0, 1 - 3e-9]) == "3 × 10⁻⁹"
    assert power_of_ten_value(gap_text(probe().attention_r2)) >= float(np.max(1 - probe().attention_r2))


def power_of_ten_value(text: str) -> float:
    """ "3 × 10⁻⁹" -> 3e-09 (how the page writes a power of ten, read back)."""
    mantissa, power = text.split(" × 10")
    return float(mantissa) * 10.0 ** int(power.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))


# --- "the random RNN loses the first word; a bigger state a little later" -----------------------------------------------

@pytest.mark.parametrize("radius, seed", [(DEFAULTS["radius"], DEFAULTS["seed"]), (0.5, 1), (1.5, 2), (2.0, 0), (0.9, 7)])
def test_random_rnns_lose_the_first_word(radius, seed):
    p = probe(radius, seed)
    lost = [first_length_below(p.lengths, row, LOST) for row in p.rnn_r2]
    assert all(L is not None and L <= 12 for L in lost), lost
    assert np.all(np.abs(p.rnn_r2[:, -1]) < 0.1), p.rnn_r2[:, -1]  # nothing is left at 40 words
    assert np.all(p.rnn_r2[:, 0] > 0.5)  # one word: the state still holds it
    if (radius, seed) == (DEFAULTS["radius"], DEFAULTS["seed"]):
        assert lost == sorted(lost), "a bigger state remembers a little longer"


# --- "even the best state of N numbers holds no more than N/d words" ----------------------------------------------------

@pytest.mark.parametrize("seed", [DEFAULTS["seed"], 1, 2**31 - 1])
def test_best_case_is_bounded_by_the_state_size(seed):
    b = best(seed)
    caps = b.capacity
    np.testing.assert_allclose(caps, np.array(PROBE_HIDDEN) / PROBE_D)
    assert np.all(b.words_held <= caps[:, None] + 1e-6), "no state holds more than N/d words"
    np.testing.assert_allclose(b.words_held[:, -1], caps, rtol=1e-4)  # and the best case fills it
    lengths = np.array(PROBE_LENGTHS)
    theory = np.minimum(1.0, caps[:, None] / lengths[None, :])  # R^2 ~ N / (d T) once T > N / d
    np.testing.assert_allclose(b.first_r2, theory, atol=0.08)
    for cap, row in zip(caps, b.first_r2):
        assert last_length_at_least(lengths, row, FULL) == int(cap), "kept exactly up to N/d words, then it falls"
        assert row[-1] < FULL


def test_random_rnn_is_no_better_than_the_best_case_and_attention_stays_at_one():
    p, b = probe(), best()
    assert np.all(p.rnn_r2 <= b.first_r2 + 0.03), "the solid lines stay under the dotted ones (up to fitting noise)"
    assert np.all((b.first_r2 - p.rnn_r2)[:, -1] > 0.0)
    assert np.all(p.attention_r2 > 1 - 1e-12)


def test_linear_recall_against_an_explicit_pseudo_inverse():
    """The reference: A = [W_h^(T-1) W_x, ..., W_x] (N x T d); the best read-out of x is A^+ h, R^2_t = tr((A^+A)_tt)/d."""
    rng = np.random.default_rng(3)
    N, d = 12, 3
    W_x, W_h = rng.normal(0, 1 / np.sqrt(d), size=(N, d)), orthogonal_matrix(N, 4)
    first, held = linear_recall(W_x, W_h, range(1, 9))
    for T in range(1, 9):
        A = np.concatenate([np.linalg.matrix_power(W_h, T - 1 - t) @ W_x for t in range(T)], axis=1)
        P = np.linalg.pinv(A) @ A
        assert abs(first[T - 1] - np.trace(P[:d, :d]) / d) < 1e-5
        assert abs(held[T - 1] - np.linalg.matrix_rank(A) / d) < 1e-5


def test_linear_recall_against_sampled_sentences():
    """Monte Carlo: a ridge read-out fitted on many sampled sentences of the linear RNN comes close to the exact value."""
    rng = np.random.default_rng(5)
    N, d, T = 8, 4, 4
    W_x, W_h = rng.normal(0, 1 / np.sqrt(d), size=(N, d)), orthogonal_matrix(N, 6)
    X = rng.normal(size=(20000, T, d))
    h = np.zeros((len(X), N))
    for t in range(T):
        h = h @ W_h.T + X[:, t] @ W_x.T
    sampled = first_word_recall_rnn(h[:15000], h[15000:], X[:15000, 0], X[15000:, 0], alpha=1e-6)
    exact = linear_recall(W_x, W_h, [T])[0][0]
    assert abs(sampled - exact) < 0.02, (sampled, exact)


def test_orthogonal_matrix_is_orthogonal_and_seeded():
    Q = orthogonal_matrix(16, 0)
    np.testing.assert_allclose(Q @ Q.T, np.eye(16), atol=1e-12)
    np.testing.assert_array_equal(Q, orthogonal_matrix(16, 0))
    assert not np.allclose(Q, orthogonal_matrix(16, 1))


# --- the experiment's size and precision ------------------------------------------------------------------

def test_smaller_probe_keeps_the_conclusion_of_the_larger_one():
    small = probe()
    large = memory_probe(PROBE_LENGTHS, PROBE_HIDDEN, DEFAULTS["radius"], DEFAULTS["seed"], d_in=PROBE_D,
                         n_train=2000, n_test=500)
    assert np.max(np.abs(small.rnn_r2 - large.rnn_r2)) < 0.12
    for a, b in zip(small.rnn_r2, large.rnn_r2):
        assert abs(first_length_below(PROBE_LENGTHS, a, LOST) - first_length_below(PROBE_LENGTHS, b, LOST)) <= 2


def test_float32_states_match_float64():
    X = np.random.default_rng(2).normal(size=(300, 20, 8)) * 0.7
    w = elman_weights(8, 64, 0.9, seed=1)
    for (L64, h64), (L32, h32) in zip(rnn_states_after(X, w, range(1, 21)),
                                      rnn_states_after(X.astype(np.float32), w, range(1, 21))):
        assert h32.dtype == np.float32 and L64 == L32
        np.testing.assert_allclose(h32, h64, atol=2e-5)
        r64 = first_word_recall_rnn(h64[:200], h64[200:], X[:200, 0], X[200:, 0], 10.0)
        r32 = first_word_recall_rnn(h32[:200], h32[200:], X[:200, 0].astype(np.float32), X[200:, 0], 10.0)
        assert abs(r64 - r32) < 1e-4


def test_length_helpers():
    assert first_length_below([1, 2, 3], [0.9, 0.05, 0.0], 0.1) == 2
    assert first_length_below([1, 2], [0.9, 0.5], 0.1) is None
    assert last_length_at_least([1, 2, 4], [1.0, 1.0, 0.5], 0.999) == 2
    assert last_length_at_least([1, 2], [0.5, 1.0], 0.999) is None


# --- the generated sentences at the defaults --------------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "ja"])
def test_generated_probe_lines_quote_the_computation(lang):
    from ui.shared.i18n import Translator
    from ui.rnn import probe_lines

    lines = probe_lines(Translator(lang), probe(), best())
    assert len(lines) == 2 * len(PROBE_HIDDEN) + 1
    for line, row in zip(lines, probe().rnn_r2):
        lost = first_length_below(PROBE_LENGTHS, row, LOST)
        assert f"{row[0]:.3f}" in line and f" {lost} " in line
    for line, hidden in zip(lines[len(PROBE_HIDDEN):], PROBE_HIDDEN):
        assert f"{hidden // PROBE_D}" in line
    assert not re.search(r"[{}]", " ".join(lines))


# --- charts: plain dicts that Plotly accepts -------------------------------------------------------------------------

def test_chart_dicts_validate_as_plotly_figures():
    names = {"rnn": "r {hidden}", "best": "b {hidden}", "attention": "a", "x": "x", "y": "y", "steps": "s"}
    p, b = probe(), best()
    spec = memory_probe_chart(p.lengths, p.rnn_r2, p.hidden_sizes, p.attention_r2, b.first_r2, names)
    fig = go.Figure(spec)  # validates every property: raises on a wrong key or value
    assert len(fig.data) == 2 * len(PROBE_HIDDEN) + 1
    np.testing.assert_allclose(fig.data[1].y, b.first_r2[0])
    spec = influence_chart(["a", "b"], [1e-3, 1.0], [0.5, 0.5], [2, 1], [1, 1], names)
    fig = go.Figure(spec)
    assert fig.layout.yaxis.type == "log" and list(fig.data[0].customdata[0]) == ["a", 2, "0.001"]
    spec = influence_chart(["a", "b"], [1.7e-7, 1.0], [0.5, 0.5], [2, 1], [1, 1], names, value_text=number_text)
    assert spec["data"][0]["customdata"][0][2] == "1.700 × 10⁻⁷" and "%{y:" not in spec["data"][0]["hovertemplate"]


def test_dense_words_stand_upright_without_overlapping():
    """40 words on the influence chart's full-width axis: upright labels, each at least a label's width apart."""
    from charts.matrix import TICK_MIN_PX
    from charts.rnn import FULL_PAGE_PLOT_PX

    names = {"rnn": "r", "attention": "a", "x": "x", "y": "y", "steps": "s"}
    words = [f"w{i}" for i in range(40)]
    axis = influence_chart(words, [1.0] * 40, [1.0] * 40, [1] * 40, [1] * 40, names)["layout"]["xaxis"]
    assert axis["tickangle"] == -90
    spacing = FULL_PAGE_PLOT_PX / 40 * (axis["tickvals"][1] - axis["tickvals"][0])
    assert spacing >= TICK_MIN_PX
    few = influence_chart(["a", "b", "c"], [1.0] * 3, [1.0] * 3, [1] * 3, [1] * 3, names)["layout"]["xaxis"]
    assert few["ticktext"] == ["a", "b", "c"] and "tickangle" not in few  # Plotly's own choice: flat when it fits


# --- the fast influence path ---------------------------------------------------------------------------

@pytest.mark.parametrize("hidden", [1, 32, 256])
@pytest.mark.parametrize("radius", [0.1, 0.9, 2.0])
def test_fast_influence_profile_matches_the_float64_jacobians(hidden, radius):
    from attention_core.rnn import (
        attention_input_jacobians,
        attention_weights_for,
        influence_profile,
        spectral_norms,
    )
    from tests.reference_rnn import input_jacobians

    X = 0.7 * np.random.default_rng(hidden).normal(size=(40, 50))
    got = influence_profile(X, hidden, radius, seed=3)
    rng = np.random.default_rng(3)
    rnn = elman_weights(50, hidden, radius, rng)
    att = attention_weights_for(50, hidden, rng)
    ref_rnn = np.linalg.norm(input_jacobians(X, rnn), ord=2, axis=(-2, -1))  # SVD, float64
    ref_att = np.linalg.norm(attention_input_jacobians(X, att), ord=2, axis=(-2, -1))
    np.testing.assert_allclose(got.rnn_norm, ref_rnn, rtol=2e-5)
    np.testing.assert_allclose(got.attention_norm, ref_att, rtol=1e-10)
    assert np.all(got.rnn_norm > 0)
    np.testing.assert_allclose(spectral_norms(input_jacobians(X, rnn)), ref_rnn, rtol=1e-10)
    again = influence_profile(X, hidden, radius, seed=3)  # the memoised draws are not changed by a call
    np.testing.assert_array_equal(again.rnn_norm, got.rnn_norm)


def test_one_step_can_stretch_but_the_chain_shrinks_at_the_defaults():
    """Predict_why: W_h's largest singular value is above 1 (one step can stretch), its powers shrink like rho^k."""
    W_h = elman_weights(50, DEFAULTS["hidden"], DEFAULTS["radius"], DEFAULTS["seed"]).W_h
    assert np.linalg.svd(W_h, compute_uv=False)[0] > 1
    k = 60
    growth = np.linalg.norm(np.linalg.matrix_power(W_h, k), 2) ** (1 / k)  # Gelfand: -> the spectral radius
    assert abs(growth - DEFAULTS["radius"]) < 0.1
    assert "largest singular value is above 1" in LOCALES["en"]["predict_why"]
    assert "最大特異値は 1 を超えて" in LOCALES["ja"]["predict_why"]


def test_the_n_over_d_bound_is_said_to_hold_for_a_linear_read_out_only():
    assert "*linear* read-out" in LOCALES["en"]["fig2_shows"] and "not bound the same way" in LOCALES["en"]["fig2_shows"]
    assert "*線形*に読み出す" in LOCALES["ja"]["fig2_shows"]
    assert round(np.log2(400_000)) == 19  # "about 19 bits a word"


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_nothing_above_the_question_answers_it(lang):
    """The intro, the framing and the try box say nothing of how far the first word fades (the answer)."""
    above = " ".join(LOCALES[lang][key] for key in ("explain", "framing", "try"))
    giveaways = {"en": ["powers of ten", "vanish", "fade", "shrinks", "drops"], "ja": ["何桁", "消え", "薄れ", "小さくな"]}
    assert [word for word in giveaways[lang] if word in above] == []
