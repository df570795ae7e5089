"""4 · Why divide by sqrt(d_k): random q . k has variance d; unscaled, softmax saturates and the gradient dies."""

import pandas as pd
import streamlit as st

from attention_core.scaling import (
    DIM_CHOICES, KEY_RANGE, NEXT_WORD_SCORES, SAMPLE_COUNT, TABLE_DRAWS, TABLE_KEYS, TABLE_QUERIES,
    TEMPERATURE_CHOICES, logit_variance, row_summary, table_standard_errors,
)
from charts.scaling import score_histogram, sweep_figure, temperature_sampling, weights_animation, weights_on_unit_axis
from ui.common import csv_download, guarded_fragment, page_header, predict_then_reveal, translator
from ui.display import show_plotly
from ui.scaling_sections import histogram_data, nested_weights, sampling, table as scaling_table

S = "scaling"
t = translator()
page_header(t, S, r"\operatorname{Var}(q \cdot k) = d_k \qquad "
                  r"\mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}\,\tau}\right)")


def num(x: float) -> str:
    """A number for a caption: 4 significant digits; thousands grouped; an exponent only below 0.001."""
    return f"{x:,.0f}" if abs(x) >= 1e4 else f"{x:.4g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.3e}"


def at_d(frames, dim: int) -> str:
    return f"{frames[DIM_CHOICES.index(dim)].max():.3f}"


@guarded_fragment
def experiment() -> None:
    """The controls, the histogram, one query's weights and the d animation: a control change reruns only this."""
    try_box = st.empty()
    c_d, c_scale, c_tau, c_keys, c_seed = st.columns([3, 2, 3, 2.2, 1.6], gap="medium", vertical_alignment="bottom")
    d = c_d.select_slider(t(f"{S}.d"), options=list(DIM_CHOICES), value=64, key="scaling_d", bind="query-params")
    scale = c_scale.toggle(t(f"{S}.scale"), value=True, key="scaling_scale", bind="query-params")
    tau = c_tau.select_slider(t(f"{S}.tau"), options=list(TEMPERATURE_CHOICES), value=1.0, key="scaling_tau",
                              bind="query-params")
    n_keys = c_keys.slider(t(f"{S}.n_keys"), KEY_RANGE[0], KEY_RANGE[1], 8, key="scaling_keys", bind="query-params")
    seed = c_seed.number_input(t("common.seed"), min_value=0, max_value=2**31 - 1, value=0, step=1,
                               key="scaling_seed", bind="query-params")
    d, n_keys, seed, tau, scale = int(d), int(n_keys), int(seed), float(tau), bool(scale)

    # Top: what softmax receives, over many draws, with the normal density of the same variance.
    hist = histogram_data(d, n_keys, seed, scale, tau)
    theory = logit_variance(d, scale, tau)
    frames = nested_weights(n_keys, seed, tau)
    weights = frames[scale][DIM_CHOICES.index(d)]
    summary = {name: float(value) for name, value in row_summary(weights).items()}
    averaged = scaling_table()["max_scaled"]
    try_box.info(t(f"{S}.try", s4=at_d(frames[True], 4), s256=at_d(frames[True], 256),
                   s1024=at_d(frames[True], 1024), m4=f"{averaged[0]:.3f}", m1024=f"{averaged[-1]:.3f}",
                   draws=f"{TABLE_DRAWS:,}", keys=TABLE_KEYS), icon=":material/lightbulb:")
    m_sd, m_max, m_h, m_j = st.columns(4)
    m_sd.metric(t(f"{S}.metric_sd"), num(hist["sd"]), help=t(f"{S}.metric_sd_help", theory=num(theory ** 0.5)))
    m_max.metric(t(f"{S}.metric_max"), f"{summary['max']:.3f}")
    m_h.metric(t(f"{S}.metric_entropy"), f"{summary['entropy']:.3f}")
    m_j.metric(t(f"{S}.metric_jacobian"), f"{summary['jacobian']:.3f}")
    show_plotly(score_histogram(
        hist["edges"], hist["density"], hist["counts"], hist["curve_x"], hist["curve_y"],
        x_title=t(f"{S}.x_scaled" if scale else f"{S}.x_unscaled"), y_title=t(f"{S}.y_density"),
        bars_name=t(f"{S}.bars_name", n=hist["n"]), curve_name=t(f"{S}.curve_name", var=num(theory)),
        title=t(f"{S}.hist_title")), key="scaling_hist")
    st.caption(t(f"{S}.hist_caption", n=hist["n"], draws=hist["draws"], keys=n_keys, d=d, tau=num(tau),
                 measured=num(hist["var"]), theory=num(theory),
                 formula=t(f"{S}.formula_scaled" if scale else f"{S}.formula_unscaled"),
                 lo=num(hist["lo"]), hi=num(hist["hi"])))
    if d <= 16 and not st.session_state.get("presenter", False):
        st.caption(t(f"{S}.small_d_note"))

    # Bottom: one query's weights over the keys (the same query the animation below plays through every d).
    key_labels = [f"k{i + 1}" for i in range(n_keys)]
    top = int(weights.argmax())
    show_plotly(weights_on_unit_axis(key_labels, weights, t(f"{S}.weights_title", n=n_keys, d=d),
                                     t(f"{S}.weights_label")), key="scaling_weights")
    st.caption(t(f"{S}.weights_caption", max=f"{summary['max']:.4f}", top=key_labels[top],
                 h=f"{summary['entropy']:.4f}", n=n_keys,
                 hmax=f"{row_summary([1.0 / n_keys] * n_keys)['entropy']:.4f}", j=f"{summary['jacobian']:.4f}"))

    # The animation: the same query and keys, unscaled and scaled, d from 4 to 1024 (played in the browser).
    st.subheader(t(f"{S}.anim_header"))
    show_plotly(weights_animation(DIM_CHOICES, frames[False], frames[True], key_labels,
                                  (t(f"{S}.anim_left"), t(f"{S}.anim_right")), t(f"{S}.weights_label"),
                                  play=t(f"{S}.play"), pause=t(f"{S}.pause")), key="scaling_anim")
    firsts = {f"{tag}{dim}": at_d(frames[scale_on], dim) for tag, scale_on in (("u", False), ("s", True))
              for dim in (4, 1024)}
    st.caption(t(f"{S}.anim_caption", n=n_keys, tau=num(tau), **firsts))


@guarded_fragment
def table_section() -> None:
    """The table over every d: revealed once the learner has committed to a prediction (computed at start)."""
    st.subheader(t(f"{S}.table_header"))
    if not predict_then_reveal(t, S, 4, 4, key="scaling_predict"):
        return
    with st.spinner(t(f"{S}.computing", draws=TABLE_DRAWS)):
        table = scaling_table()
    se = table_standard_errors(table)
    shown = {"col_d": "d", "col_var": "var_qk", "col_ratio": "var_ratio", "col_max_u": "max_unscaled",
             "col_max_s": "max_scaled", "col_h_u": "entropy_unscaled", "col_h_s": "entropy_scaled",
             "col_j_u": "jacobian_unscaled", "col_j_s": "jacobian_scaled"}
    frame = pd.DataFrame({t(f"{S}.{label}"): table[column] for label, column in shown.items()})
    st.dataframe(frame, hide_index=True, key="scaling_table", column_config={
        t(f"{S}.col_var"): st.column_config.NumberColumn(format="%.1f"),
        **{t(f"{S}.{label}"): st.column_config.NumberColumn(format="%.3f")
           for label in shown if label not in ("col_d", "col_var")},
    })
    if not st.session_state.get("presenter", False):
        st.caption(t(f"{S}.table_note", draws=f"{TABLE_DRAWS:,}", rows=f"{TABLE_DRAWS * TABLE_QUERIES:,}",
                     keys=TABLE_KEYS, se_w=f"{se['weights']:.4f}", se_h=f"{se['entropy']:.4f}",
                     se_v=f"{se['var_ratio']:.4f}", two_se=f"{2 * max(se['weights'], se['entropy']):.4f}",
                     m4=f"{table['max_scaled'][0]:.3f}", m1024=f"{table['max_scaled'][-1]:.3f}"))
    csv_download(t(f"{S}.csv"), pd.DataFrame(table), "scaling_table.csv", key="scaling_csv")  # English snake_case
    labels = {name: t(f"{S}.{key}") for name, key in (
        ("var", "chart_var"), ("max", "chart_max"), ("entropy", "chart_entropy"), ("jacobian", "chart_jacobian"),
        ("unscaled", "unscaled"), ("scaled", "scaled"), ("line_d", "line_d"), ("line_1", "line_1"),
        ("uniform", "uniform"), ("d", "col_d"))}
    show_plotly(sweep_figure(table, labels, TABLE_KEYS), key="scaling_sweep")


def temperature_section() -> None:
    """The same knob in a language model: softmax over next-word scores; the slider is answered by the browser."""
    st.subheader(t(f"{S}.lm_header"))
    words = [t(f"{S}.lm_word_{i + 1}") for i in range(len(NEXT_WORD_SCORES))]
    if not st.session_state.get("presenter", False):
        st.markdown(t(f"{S}.lm_explain", prompt=t(f"{S}.lm_prompt")))
    st.caption(t("common.hand_designed") + " " + t(f"{S}.lm_scores", scores=t(f"{S}.lm_sep").join(
        f"{w} {s:.1f}" for w, s in zip(words, NEXT_WORD_SCORES))))
    run = sampling()
    probs, one = run["probs"], TEMPERATURE_CHOICES.index(1.0)
    show_plotly(temperature_sampling(words, probs, TEMPERATURE_CHOICES, run["samples"], run["entropy"], one, {
        "title": t(f"{S}.lm_title"), "y": t(f"{S}.lm_y"), "slider": t(f"{S}.lm_slider")}), key="scaling_lm")
    top = int(probs[one].argmax())
    st.caption(t(f"{S}.lm_caption", lo=f"{TEMPERATURE_CHOICES[0]:g}", hi=f"{TEMPERATURE_CHOICES[-1]:g}",
                 top=words[top], p_lo=f"{probs[0, top]:.3f}", p_one=f"{probs[one, top]:.3f}",
                 min_hi=f"{probs[-1].min():.3f}", max_hi=f"{probs[-1].max():.3f}", uniform=f"{1 / len(words):.3f}",
                 h_lo=f"{run['entropy'][0]:.2f}", h_hi=f"{run['entropy'][-1]:.2f}", m=SAMPLE_COUNT))


experiment()
table_section()
temperature_section()
