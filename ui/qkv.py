"""Lesson 2, the QKV library: its controls, its four steps and the table, and their cached calls. The page
(lessons/qkv.py) only puts them in order."""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd
import streamlit as st

from attention_core.qkv import (
    PresetError, centroid, convex_hull, dot_product_expression, load_library, lookup, matching_query, output_path,
    rgb_plane, temperature_sweep, weighted_sum_expression, zero_temperature_output,
)
from charts.qkv import bars, blend_bar, key_heatmap, value_plane, value_swatches
from ui.shared.common import data_table, csv_download, explanation, md_escape, predict_then_reveal
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.shared.links import url_selectbox

SECTION = "qkv"
TEMPERATURES = [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0]
STEPS = [0, 1, 2, 3]


@st.cache_data(show_spinner=False)
def library():
    return load_library()


@st.cache_data(show_spinner=False, max_entries=512)
def experiment(query: tuple, temperature: float) -> dict:
    """Everything the page shows for one query vector and temperature, computed by the core."""
    lib = library()
    keys, values = lib.keys, lib.values
    temps = temperature_sweep(TEMPERATURES[0], TEMPERATURES[-1])
    path = output_path(query, keys, values, temps)
    points = rgb_plane(values)
    return dict(
        found=lookup(query, keys, values, temperature),
        lines=[dot_product_expression(query, k) for k in keys],
        temps=temps, path=path, path_2d=rgb_plane(path), points=points, hull=convex_hull(points),
        cold=zero_temperature_output(query, keys, values), hot=centroid(values),
    )


def number_text(x: float, places: int = 2) -> str:
    return f"{x:.{places}f}".replace("-", "−")


def vector_text(v, places: int = 1) -> str:
    return "(" + ", ".join(number_text(x, places) for x in v) + ")"


def library_or_message(t):
    """The library, or None with the file's problem shown (a broken data/qkv.toml)."""
    try:
        return library()
    except PresetError as exc:
        st.error(t("qkv.bad_data", detail=md_escape(str(exc))))
        return None


class Controls(NamedTuple):
    query: tuple
    temperature: float
    step: int


def _load_preset_query() -> None:
    """Selecting a preset question moves the query sliders to its vector."""
    lib = library()
    chosen = {q.id: q for q in lib.queries}.get(st.session_state.get("qkv_query"))
    for feature, value in zip(lib.features, chosen.vector if chosen else ()):
        st.session_state[f"qkv_q_{feature.id}"] = float(value)


def _forget_preset_query() -> None:
    """Moving a slider writes a question of one's own; picking a preset again then reloads its vector."""
    st.session_state["qkv_query"] = None


def controls(t, lib) -> Controls:
    """The question (a preset, or one slider per feature), the temperature and the step, in one box."""
    lang = t.lang
    by_id = {q.id: q for q in lib.queries}
    with st.container(border=True):
        left, right = st.columns([3, 2], gap="large")
        with left:
            from_link = "qkv_query" not in st.session_state and "qkv_query" in st.query_params  # + sliders it omits
            if url_selectbox(t("qkv.query_preset"), list(by_id), "qkv_query", format_func=lambda i: by_id[i].text[lang],
                             allow_none=True, on_change=_load_preset_query,
                             placeholder=t("qkv.query_own")) and from_link:
                _load_preset_query()
            st.caption(t("qkv.query_sliders"))
            query = tuple(
                float(col.slider(feature.name[lang], -3.0, 3.0, float(value), 0.1, key=f"qkv_q_{feature.id}",
                                 bind="query-params", on_change=_forget_preset_query))
                for col, feature, value in zip(st.columns(len(lib.features)), lib.features, lib.queries[0].vector)
            )
        with right:
            temperature = st.select_slider(
                t("qkv.temperature"), sorted(set(TEMPERATURES) | {lib.default_temperature}),
                value=lib.default_temperature, key="qkv_temp", bind="query-params", help=t("qkv.temperature_help"),
            )
            step = url_selectbox(t("qkv.step"), STEPS, "qkv_step", widget=st.segmented_control, required=True)
    return Controls(query, float(temperature), step)


def _titles(t, lib) -> list[str]:
    return [b.title[t.lang] for b in lib.books]


def section_query(t, lib, c: Controls) -> dict:
    """The question as a line of text, then the step's heading; -> the experiment of this query and temperature."""
    match = matching_query(lib.queries, c.query)
    if match:
        st.markdown(t("qkv.query_line", text=match.text[t.lang], vector=vector_text(c.query)))
    else:
        st.markdown(t("qkv.query_line_own", vector=vector_text(c.query)))
    st.subheader(t(f"qkv.step_{c.step}"))
    st.markdown(t(f"qkv.step_{c.step}_note"))
    return experiment(c.query, c.temperature)


def section_setup(t, lib, c: Controls) -> None:
    """Step 0: the query and the books' keys as a heat map, their values as colours."""
    titles, feature_names = _titles(t, lib), [f.name[t.lang] for f in lib.features]
    c1, c2 = st.columns([3, 2], gap="large")
    with c1:
        fig = figure_spec(key_heatmap, [c.query, *lib.keys], [t("qkv.query_row"), *titles], feature_names,
                          x_title=t("qkv.feature"), y_title="", value_label=t("qkv.number"), title=t("qkv.keys_title"))
        show_plotly(fig, key="qkv_keys")
    with c2:
        show_plotly(figure_spec(value_swatches, titles, lib.values, "v", title=t("qkv.values_title")),
                    key="qkv_values")
    st.caption(t("qkv.setup_caption"))


def section_scores(t, lib, c: Controls, run: dict) -> None:
    """Step 1: each book's dot product with the query, divided by the temperature."""
    titles, found = _titles(t, lib), run["found"]
    for title, line, dot, score in zip(titles, run["lines"], found.dots, found.scores):
        st.markdown(t("qkv.dot_line", title=title, expr=line, dot=number_text(dot), tau=f"{c.temperature:g}",
                      score=number_text(score)))
    show_plotly(figure_spec(bars, titles, found.scores, title=t("qkv.scores_title"), highlight=found.best,
                            value_label=t("qkv.score")), key="qkv_scores")


def section_weights(t, lib, run: dict) -> None:
    """Step 2: softmax turns the scores into shares that add up to 100 %."""
    titles, found = _titles(t, lib), run["found"]
    st.latex(r"w_{%d} = \frac{e^{%.2f}}{%s} = %.4f" % (
        found.best + 1, found.scores[found.best], " + ".join(f"e^{{{s:.2f}}}" for s in found.scores),
        found.weights[found.best]))
    show_plotly(figure_spec(bars, titles, found.weights, title=t("qkv.weights_title"), highlight=found.best,
                            value_label=t("qkv.weight"), as_percent=True), key="qkv_weights")
    shares = t.join(f"{title} {100 * w:.1f} %" for title, w in zip(titles, found.weights))
    st.markdown(t("qkv.weights_caption", shares=shares, total=100 * found.total))
    st.markdown(t("qkv.top_line", number=found.best + 1, title=titles[found.best],
                  share=100 * found.weights[found.best]))
    _all_tied(t, found)


def section_blend(t, lib, c: Controls, run: dict) -> bool:
    """Step 3, after a prediction: the values mixed by their shares, and the output's path over the temperature.
    -> True once revealed."""
    titles, found, tau = _titles(t, lib), run["found"], f"{c.temperature:g}"
    revealed = predict_then_reveal(t, SECTION, 4, 3, key="qkv_predict")
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
        explanation(t("qkv.plane_note"))
        st.caption(t("qkv.plane_caption", tau=tau, rgb=vector_text(found.output), cold=vector_text(run["cold"]),
                     hot=vector_text(run["hot"])))
    _all_tied(t, found)
    return revealed


def _all_tied(t, found) -> None:
    if found.all_tied:
        st.info(t("qkv.all_tied"))


def section_table(t, lib, c: Controls, run: dict, revealed: bool) -> None:
    """The books with every number of the steps shown so far (an expander, open after step 0), and its CSV."""
    titles, found, step = _titles(t, lib), run["found"], c.step
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
        shown = pd.DataFrame([{col: number_text(v) if isinstance(v, float) else v for col, v in row.items()}
                              for row in rows], columns=table.columns).fillna("")
        if revealed:  # w x v to one decimal on screen, as the caption writes the output (the table fits a projector)
            vectors = [*found.contributions, found.output]
            shown[t("qkv.col_contribution")] = [vector_text(v, 1) for v in vectors]
        data_table(shown, hide_index=True)
        csv_download(t("qkv.csv"), table, f"qkv_library_step{step}.csv", key="qkv_csv")
