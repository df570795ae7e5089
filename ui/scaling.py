"""Lesson 4, why divide by sqrt(d_k): its controls, its sections and their cached calls. The page
(lessons/scaling.py) only puts them in order.

The table over every d is seed-independent: computed once per process in the background (ui/shared/startup.py).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import pandas as pd
import streamlit as st

from attention_core.attention import MAX_SEED
from attention_core.scaling import (
    DIM_CHOICES, KEY_RANGE, NEXT_WORD_SCORES, SAMPLE_COUNT, TABLE_DRAWS, TABLE_KEYS, TABLE_QUERIES,
    TEMPERATURE_CHOICES, density_histogram, logit_variance, normal_curve, prefix_weights, random_query_keys,
    row_summary, sampling_sweep, score_sample, softmax_inputs, sweep_table, table_standard_errors,
)
from charts.scaling import score_histogram, sweep_figure, temperature_sampling, weights_animation, weights_on_unit_axis
from ui.shared.common import csv_download, data_table, explanation, predict_then_reveal
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.shared.i18n import sci
from ui.shared.startup import register_startup

TABLE_SEED = 0  # the table is the statistical answer, not one seed's draw: one fixed seed, shared by everyone
TABLE = register_startup("scaling-table", lambda: sweep_table(TABLE_SEED))  # once per process, in the background


def table() -> dict:
    """The sweep_table columns at TABLE_SEED (read-only: shared by every session); waits until computed."""
    try:
        return TABLE.result()
    except Exception as exc:
        raise RuntimeError("the scaling table could not be computed") from exc

S = "scaling"
JACOBIAN_NORM = r"$\lVert \mathrm{diag}(p) - pp^\top \rVert_F$"  # the F a subscript (a typed "_F" is not)
DEFAULT_KEYS = TABLE_KEYS  # the bars, the animation and the question compare the same 16 keys the table averages over


@st.cache_data(show_spinner=False, max_entries=64)
def raw_scores(d: int, n_keys: int, seed: int):
    """(draws, n_keys) q . k of the histogram's draws; the toggle and tau only rescale them (softmax_inputs)."""
    return score_sample(d, n_keys, seed, scale=False)


@st.cache_data(show_spinner=False, max_entries=64)
def histogram_data(d: int, n_keys: int, seed: int, scale: bool, tau: float) -> dict:
    z = softmax_inputs(raw_scores(d, n_keys, seed), d, scale, tau)
    edges, density, counts = density_histogram(z)
    curve_x, curve_y = normal_curve(edges[0], edges[-1], logit_variance(d, scale, tau))
    return dict(edges=edges, density=density, counts=counts, curve_x=curve_x, curve_y=curve_y, n=z.size,
                draws=z.shape[0], var=float(z.var()), sd=float(z.std()), lo=float(z.min()), hi=float(z.max()))


@st.cache_data(show_spinner=False, max_entries=64)
def nested_weights(n_keys: int, seed: int, tau: float) -> dict:
    """{False: (9, n_keys) unscaled, True: scaled} weights of one query at every d of DIM_CHOICES."""
    q, K = random_query_keys(n_keys, seed)
    return {scale: prefix_weights(q, K, DIM_CHOICES, scale, tau) for scale in (False, True)}


@st.cache_data(show_spinner=False, max_entries=1)
def sampling() -> dict:
    """The next-word probabilities, entropies and samples at every tau of TEMPERATURE_CHOICES (seed 0)."""
    return sampling_sweep(NEXT_WORD_SCORES, TEMPERATURE_CHOICES, SAMPLE_COUNT, seed=0)


def num(x: float) -> str:
    """A number for a caption: 4 significant digits; thousands grouped; a power of ten (1.234 × 10⁻⁴) below 0.001."""
    return f"{x:,.0f}" if abs(x) >= 1e4 else f"{x:.4g}" if abs(x) >= 1e-3 or x == 0 else sci(x, 4)


def at_d(frames, dim: int) -> str:
    return f"{frames[DIM_CHOICES.index(dim)].max():.3f}"


class Controls(NamedTuple):
    d: int
    scale: bool
    tau: float
    n_keys: int
    seed: int


def controls(t) -> Controls:
    """d, scaling on/off, the temperature, the number of keys and the seed, in one row."""
    c_d, c_scale, c_tau, c_keys, c_seed = st.columns([3, 2, 3, 2.2, 1.6], gap="medium", vertical_alignment="bottom")
    d = c_d.select_slider(t(f"{S}.d"), options=list(DIM_CHOICES), value=64, key="scaling_d", bind="query-params")
    scale = c_scale.toggle(t(f"{S}.scale"), value=True, key="scaling_scale", bind="query-params")
    tau = c_tau.select_slider(t(f"{S}.tau"), options=list(TEMPERATURE_CHOICES), value=1.0, key="scaling_tau",
                              bind="query-params")
    n_keys = c_keys.slider(t(f"{S}.n_keys"), KEY_RANGE[0], KEY_RANGE[1], DEFAULT_KEYS, key="scaling_keys",
                           bind="query-params")
    seed = c_seed.number_input(t("common.seed"), min_value=0, max_value=MAX_SEED, value=0, step=1,
                               key="scaling_seed", bind="query-params")
    return Controls(int(d), bool(scale), float(tau), int(n_keys), int(seed))


def try_values(c: Controls) -> dict:
    """The figures the "What to try" text quotes: this query's largest weight at three d, and the table's mean."""
    frames = nested_weights(c.n_keys, c.seed, c.tau)
    averaged = table()["max_scaled"]
    return dict(s4=at_d(frames[True], 4), s256=at_d(frames[True], 256), s1024=at_d(frames[True], 1024), n=c.n_keys,
                m4=f"{averaged[0]:.3f}", m1024=f"{averaged[-1]:.3f}", draws=f"{TABLE_DRAWS:,}", keys=TABLE_KEYS)


def _weights(c: Controls):
    return nested_weights(c.n_keys, c.seed, c.tau)[c.scale][DIM_CHOICES.index(c.d)]


def section_histogram(t, c: Controls) -> None:
    """What softmax receives, over many draws, with the normal density of the same variance; the row's metrics."""
    hist = histogram_data(c.d, c.n_keys, c.seed, c.scale, c.tau)
    theory = logit_variance(c.d, c.scale, c.tau)
    summary = {name: float(value) for name, value in row_summary(_weights(c)).items()}
    m_sd, m_max, m_h, m_j = st.columns(4)
    m_sd.metric(t(f"{S}.metric_sd"), num(hist["sd"]), help=t(f"{S}.metric_sd_help", theory=num(theory ** 0.5)))
    m_max.metric(t(f"{S}.metric_max"), f"{summary['max']:.3f}")
    m_h.metric(t(f"{S}.metric_entropy"), f"{summary['entropy']:.3f}", help=t(f"{S}.metric_entropy_help"))
    m_j.metric(t(f"{S}.metric_jacobian", norm=JACOBIAN_NORM), f"{summary['jacobian']:.3f}",
               help=t(f"{S}.metric_jacobian_help"))
    show_plotly(figure_spec(
        score_histogram, hist["edges"], hist["density"], hist["counts"], hist["curve_x"], hist["curve_y"],
        x_title=t(f"{S}.x_scaled" if c.scale else f"{S}.x_unscaled"), y_title=t(f"{S}.y_density"),
        bars_name=t(f"{S}.bars_name", n=f"{hist['n']:,}"), curve_name=t(f"{S}.curve_name", var=num(theory)),
        title=t(f"{S}.hist_title")), key="scaling_hist")
    st.caption(t(f"{S}.hist_caption", n=f"{hist['n']:,}", draws=f"{hist['draws']:,}", keys=c.n_keys, d=c.d, tau=num(c.tau),
                 measured=num(hist["var"]), theory=num(theory),
                 formula=t(f"{S}.formula_scaled" if c.scale else f"{S}.formula_unscaled"),
                 lo=num(hist["lo"]), hi=num(hist["hi"])))
    if c.d <= 16:
        explanation(t(f"{S}.small_d_note"), caption=True)


def section_weights(t, c: Controls) -> None:
    """One query's weights over the keys (the same query the animation, after the question, plays through every d)."""
    weights = _weights(c)
    summary = {name: float(value) for name, value in row_summary(weights).items()}
    key_labels = [f"k{i + 1}" for i in range(c.n_keys)]
    top = int(weights.argmax())
    show_plotly(figure_spec(weights_on_unit_axis, key_labels, weights, t(f"{S}.weights_title", n=c.n_keys, d=c.d),
                            t(f"{S}.weights_label")), key="scaling_weights")
    st.caption(t(f"{S}.weights_caption", max=f"{summary['max']:.4f}", top=key_labels[top],
                 h=f"{summary['entropy']:.4f}", n=c.n_keys,
                 hmax=f"{row_summary([1.0 / c.n_keys] * c.n_keys)['entropy']:.4f}", j=f"{summary['jacobian']:.4f}",
                 norm=JACOBIAN_NORM))


def section_animation(t, c: Controls) -> None:
    """The same query and keys, unscaled and scaled, d from 4 to 1024 (played in the browser)."""
    frames = nested_weights(c.n_keys, c.seed, c.tau)
    key_labels = [f"k{i + 1}" for i in range(c.n_keys)]
    st.subheader(t(f"{S}.anim_header"))
    show_plotly(figure_spec(weights_animation, DIM_CHOICES, frames[False], frames[True], key_labels,
                            (t(f"{S}.anim_left"), t(f"{S}.anim_right")), t(f"{S}.weights_label"),
                            play=t(f"{S}.play"), pause=t(f"{S}.pause")), key="scaling_anim")
    firsts = {f"{tag}{dim}": at_d(frames[scale_on], dim) for tag, scale_on in (("u", False), ("s", True))
              for dim in (4, 1024)}
    st.caption(t(f"{S}.anim_caption", n=c.n_keys, tau=num(c.tau), **firsts))


def section_question(t) -> bool:
    """The question, asked before the animation and the table that answer it; True once the learner has answered."""
    return predict_then_reveal(t, S, 4, 4, key="scaling_predict")


def section_table(t) -> None:
    """The table over every d (computed at start), shown once the learner has answered the question."""
    st.subheader(t(f"{S}.table_header"))
    with st.spinner(t(f"{S}.computing", draws=f"{TABLE_DRAWS:,}")):
        sweep = table()
    se = table_standard_errors(sweep)
    frame, columns = table_view(t, sweep)
    data_table(frame, hide_index=True, key="scaling_table", column_config=columns)
    worst = max(se["weights"], se["entropy"])
    explanation(t(f"{S}.table_note", draws=f"{TABLE_DRAWS:,}", rows=f"{TABLE_DRAWS * TABLE_QUERIES:,}",
                  keys=TABLE_KEYS, se_w=f"{se['weights']:.4f}", se_h=f"{se['entropy']:.4f}",
                  se_v=f"{se['var_ratio']:.4f}", two_se=f"{2 * worst:.4f}",
                  two_se_diff=f"{two_seed_bound(se):.4f}",
                  m4=f"{sweep['max_scaled'][0]:.3f}", m1024=f"{sweep['max_scaled'][-1]:.3f}"), caption=True)
    csv_download(t(f"{S}.csv"), pd.DataFrame(sweep), "scaling_table.csv", key="scaling_csv")  # English snake_case
    labels = {name: t(f"{S}.{key}") for name, key in (
        ("var", "chart_var"), ("max", "chart_max"), ("entropy", "chart_entropy"), ("jacobian", "chart_jacobian"),
        ("unscaled", "unscaled"), ("scaled", "scaled"), ("line_d", "line_d"), ("line_1", "line_1"),
        ("uniform", "uniform"), ("d", "col_d"))}
    show_plotly(figure_spec(sweep_figure, sweep, labels, TABLE_KEYS), key="scaling_sweep")


def two_seed_bound(se: dict) -> float:
    """95 % bound on how far another seed's figure lies from this one: the difference of two independent means has
    sqrt(2) times the standard error of one."""
    return 2 * math.sqrt(2) * max(se["weights"], se["entropy"])


# The table's rows: (label key, sweep column, format). One row per measure and one column per d: nine narrow number
# columns fit a 1280-px projector in both languages, where nine measure columns did not.
TABLE_ROWS = (("col_var", "var_qk", "{:,.1f}"), ("col_ratio", "var_ratio", "{:.3f}"),
              ("col_max_u", "max_unscaled", "{:.3f}"), ("col_max_s", "max_scaled", "{:.3f}"),
              ("col_h_u", "entropy_unscaled", "{:.3f}"), ("col_h_s", "entropy_scaled", "{:.3f}"),
              ("col_j_u", "jacobian_unscaled", "{:.3f}"), ("col_j_s", "jacobian_scaled", "{:.3f}"))


def table_view(t, sweep: dict) -> tuple[pd.DataFrame, dict]:
    """sweep_table columns -> (the table as shown: a measure per row, a d per column, numbers as text; its columns)."""
    dims = [int(d) for d in sweep["d"]]
    measure = t(f"{S}.col_measure")
    heads = [f"{t(f'{S}.col_d')} = {d}" for d in dims]
    frame = pd.DataFrame([{measure: t(f"{S}.{label}"), **{head: fmt.format(sweep[column][i]) for i, head in
                                                           enumerate(heads)}} for label, column, fmt in TABLE_ROWS])
    columns = {head: st.column_config.TextColumn(alignment="right") for head in heads}
    return frame, {measure: st.column_config.TextColumn(measure, pinned=True), **columns}


def section_temperature(t) -> None:
    """The same knob in a language model: softmax over next-word scores; the slider is answered by the browser."""
    st.subheader(t(f"{S}.lm_header"))
    words = [t(f"{S}.lm_word_{i + 1}") for i in range(len(NEXT_WORD_SCORES))]
    explanation(t(f"{S}.lm_explain", prompt=t(f"{S}.lm_prompt")))
    st.caption(t("common.hand_designed") + " " + t(f"{S}.lm_scores", scores=t.join(
        f"{w} {s:.1f}" for w, s in zip(words, NEXT_WORD_SCORES))))
    run = sampling()
    probs, one = run["probs"], TEMPERATURE_CHOICES.index(1.0)
    show_plotly(figure_spec(temperature_sampling, words, probs, TEMPERATURE_CHOICES, run["samples"], run["entropy"],
                            one, {"title": t(f"{S}.lm_title"), "y": t(f"{S}.lm_y"), "slider": t(f"{S}.lm_slider")}),
                key="scaling_lm")
    top = int(probs[one].argmax())
    st.caption(t(f"{S}.lm_caption", lo=f"{TEMPERATURE_CHOICES[0]:g}", hi=f"{TEMPERATURE_CHOICES[-1]:g}",
                 top=words[top], p_lo=f"{probs[0, top]:.3f}", p_one=f"{probs[one, top]:.3f}",
                 min_hi=f"{probs[-1].min():.3f}", max_hi=f"{probs[-1].max():.3f}", uniform=f"{1 / len(words):.3f}",
                 h_lo=f"{run['entropy'][0]:.2f}", h_hi=f"{run['entropy'][-1]:.2f}", m=SAMPLE_COUNT))
    st.page_link("lessons/gpt.py", label=t(f"{S}.gpt_link"), icon=":material/arrow_forward:")  # the real distribution
