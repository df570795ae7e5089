"""Lesson 2, the QKV library: attention as a soft, differentiable lookup over four hand-designed books."""

import pandas as pd
import streamlit as st

from attention_core.library import PresetError, matching_query, rgb_plane, weighted_sum_expression
from charts.library import bars, blend_bar, key_heatmap, value_plane, value_swatches
from ui.common import (
    csv_download, current_lang, guarded_fragment, md_escape, page_header, predict_then_reveal, translator,
    url_selectbox, what_to_try,
)
from ui.display import show_plotly
from ui.figures import figure_spec
from ui.qkv_sections import TEMPERATURES, experiment, library

S = "qkv"
LATEX = r"s_i = \frac{q \cdot k_i}{\tau}, \qquad w = \mathrm{softmax}(s), \qquad \text{output} = \sum_i w_i \, v_i"


def number_text(x: float, places: int = 2) -> str:
    return f"{x:.{places}f}".replace("-", "−")


def vector_text(v, places: int = 1) -> str:
    return "(" + ", ".join(number_text(x, places) for x in v) + ")"


t = translator()
lang = current_lang()
page_header(t, S, LATEX)
st.caption(t("common.hand_designed") + " " + t("qkv.hand_designed_note"))
st.caption(t("qkv.scaling_note"))

try:
    lib = library()
except PresetError as exc:
    st.error(t("qkv.bad_data", detail=md_escape(str(exc))))
    st.stop()

by_id = {q.id: q for q in lib.queries}
default = lib.queries[0]
titles = [b.title[lang] for b in lib.books]
feature_names = [f.name[lang] for f in lib.features]


def load_preset_query() -> None:
    """Selecting a preset question moves the query sliders to its vector."""
    chosen = by_id.get(st.session_state.get("qkv_query"))
    for feature, value in zip(lib.features, chosen.vector if chosen else ()):
        st.session_state[f"qkv_q_{feature.id}"] = float(value)


def forget_preset_query() -> None:
    """Moving a slider writes a question of one's own; picking a preset again then reloads its vector."""
    st.session_state["qkv_query"] = None


@guarded_fragment
def lesson() -> None:
    """The controls and every step: a control change reruns only this, not the frame and the header."""
    with st.container(border=True):
        left, right = st.columns([3, 2], gap="large")
        with left:
            from_link = "qkv_query" not in st.session_state and "qkv_query" in st.query_params  # + sliders it omits
            if url_selectbox(t("qkv.query_preset"), list(by_id), "qkv_query", format_func=lambda i: by_id[i].text[lang],
                             allow_none=True, on_change=load_preset_query,
                             placeholder=t("qkv.query_own")) and from_link:
                load_preset_query()
            st.caption(t("qkv.query_sliders"))
            query = tuple(
                float(col.slider(name, -3.0, 3.0, float(value), 0.1, key=f"qkv_q_{feature.id}",
                                bind="query-params", on_change=forget_preset_query))
                for col, name, feature, value in zip(st.columns(len(lib.features)), feature_names, lib.features,
                                                     default.vector)
            )
        with right:
            temperature = st.select_slider(
                t("qkv.temperature"), sorted(set(TEMPERATURES) | {lib.default_temperature}),
                value=lib.default_temperature, key="qkv_temp", bind="query-params", help=t("qkv.temperature_help"),
            )
            if st.query_params.get("qkv_step") == "":  # Streamlit would seed "no step" from an empty ?qkv_step=
                st.query_params.pop("qkv_step")
                st.rerun()
            step = st.segmented_control(t("qkv.step"), [0, 1, 2, 3], default=0, required=True,
                                        key="qkv_step", bind="query-params")
            step = step if step in (0, 1, 2, 3) else 0

    match = matching_query(lib.queries, query)
    if match:
        st.markdown(t("qkv.query_line", text=match.text[lang], vector=vector_text(query)))
    else:
        st.markdown(t("qkv.query_line_own", vector=vector_text(query)))

    run = experiment(query, float(temperature))
    found = run["found"]
    tau = f"{temperature:g}"
    st.subheader(t(f"qkv.step_{step}"))
    st.markdown(t(f"qkv.step_{step}_note"))
    revealed = False

    if step == 0:
        c1, c2 = st.columns([3, 2], gap="large")
        with c1:
            fig = figure_spec(key_heatmap, [query, *lib.keys], [t("qkv.query_row"), *titles], feature_names,
                              x_title=t("qkv.feature"), y_title="", value_label=t("qkv.number"),
                              title=t("qkv.keys_title"))
            show_plotly(fig, key="qkv_keys")
        with c2:
            show_plotly(figure_spec(value_swatches, titles, lib.values, "v", title=t("qkv.values_title")),
                        key="qkv_values")
        st.caption(t("qkv.setup_caption"))
    elif step == 1:
        for title, line, dot, score in zip(titles, run["lines"], found.dots, found.scores):
            st.markdown(t("qkv.dot_line", title=title, expr=line, dot=number_text(dot), tau=tau,
                          score=number_text(score)))
        show_plotly(figure_spec(bars, titles, found.scores, title=t("qkv.scores_title"), highlight=found.best,
                                value_label=t("qkv.score")), key="qkv_scores")
    elif step == 2:
        st.latex(r"w_{%d} = \frac{e^{%.2f}}{%s} = %.4f" % (
            found.best + 1, found.scores[found.best], " + ".join(f"e^{{{s:.2f}}}" for s in found.scores),
            found.weights[found.best]))
        show_plotly(figure_spec(bars, titles, found.weights, title=t("qkv.weights_title"), highlight=found.best,
                                value_label=t("qkv.weight"), as_percent=True), key="qkv_weights")
        shares = ", ".join(f"{title} {100 * w:.1f} %" for title, w in zip(titles, found.weights))
        st.markdown(t("qkv.weights_caption", shares=shares, total=100 * found.total))
        st.markdown(t("qkv.top_line", number=found.best + 1, title=titles[found.best],
                      share=100 * found.weights[found.best]))
    else:
        revealed = predict_then_reveal(t, S, 4, 3, key="qkv_predict")
        if revealed:
            st.markdown(t("qkv.blend_line", expr=weighted_sum_expression(found.weights, lib.values)))
            show_plotly(figure_spec(blend_bar, titles, lib.values, found.weights, found.output, t("qkv.mix"),
                                    t("qkv.output"), t("qkv.share"), title=t("qkv.blend_title")), key="qkv_blend")
            names = {k: t(f"qkv.plane_{k}", tau=tau)
                     for k in ("hull", "path", "current", "cold", "hot", "temperature", "x", "y")}
            fig = figure_spec(value_plane, run["points"], lib.values, titles, run["hull"], run["path_2d"], run["path"],
                              run["temps"], rgb_plane(found.output), found.output, rgb_plane(run["cold"]),
                              rgb_plane(run["hot"]), names, title=t("qkv.plane_title"))
            show_plotly(fig, key="qkv_plane")
            if not st.session_state.get("presenter", False):
                st.markdown(t("qkv.plane_note"))
            st.caption(t("qkv.plane_caption", tau=tau, rgb=vector_text(found.output), cold=vector_text(run["cold"]),
                         hot=vector_text(run["hot"])))
    if step >= 2 and found.all_tied:
        st.info(t("qkv.all_tied"))

    with st.expander(t("qkv.table_title"), expanded=step > 0):
        rows = []
        for i, book in enumerate(lib.books):
            row = {t("qkv.col_book"): titles[i], t("qkv.col_key"): vector_text(book.key),
                   t("qkv.col_value"): vector_text(book.value, 0)}
            if step >= 1:
                row |= {t("qkv.col_dot"): found.dots[i], t("qkv.col_score"): found.scores[i]}
            if step >= 2:
                row[t("qkv.col_weight")] = 100 * found.weights[i]
            if revealed:
                row[t("qkv.col_contribution")] = vector_text(found.contributions[i], 2)
            rows.append(row)
        if revealed:  # the output has no key, value, dot product or score of its own: those cells stay empty
            rows.append({t("qkv.col_book"): t("qkv.output_row"), t("qkv.col_weight"): 100 * found.total,
                         t("qkv.col_contribution"): vector_text(found.output, 2)})
        table = pd.DataFrame(rows)  # numbers as numbers (the CSV); the screen shows them as text, blanks as ""
        st.dataframe(pd.DataFrame([{c: number_text(v) if isinstance(v, float) else v for c, v in row.items()}
                                   for row in rows], columns=table.columns).fillna(""), hide_index=True)
        csv_download(t("qkv.csv"), table, f"qkv_library_step{step}.csv", key="qkv_csv")
    what_to_try(t, S)


lesson()
