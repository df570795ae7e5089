"""Lesson 3, self-attention: its sections and their cached calls. The page (lessons/self_attention.py) puts them
in order and keeps the preset and the cut-off outside the sections: changing them reruns every section.

``section_lines``: the selected token (a selectbox, or a click on a token marker), its lines and outlined row;
``section_heads``: the three heads; ``section_question``: how a layer combines them (asked before the answer);
``section_mix``: their mixing by W_O (the page runs these three as one fragment,
so a token click reruns them only); ``section_forward``: where the lesson goes on (real word vectors: lesson 6).
Heat maps are built once per matrix (ui.shared.figures.figure_spec, outline on row 0) and the outline is moved to the
selected row on the dict (charts.self_attention.outline_row), so a token click builds one figure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from attention_core.self_attention import (
    HEADS, MULTI_HEAD_SEED, lines_to_keep, load_self_attention, matrix_csv, mix_steps, multi_head_parts,
    position_labels, preset_heads, top_targets,
)
from charts.self_attention import outline_row, swap_matrix
from charts.matrix import attention_heatmap
from charts.tokens import token_lines
from ui.shared.common import csv_download, data_table, explanation, heatmap_axes, md_escape, predict_then_reveal, translator
from ui.shared.display import on_touch_device, show_plotly
from ui.shared.figures import figure_spec
from ui.shared.i18n import percent
from ui.shared.links import url_selectbox

S = "self_attention"
HEAD_MAP_WIDTH = 400  # px: two maps per row at 1280 x 720 (wide layout, sidebar open), three at 1920, one on a phone
HEAD_MAP_HEIGHT = 460


# Link parameters of the GloVe part this page had (now lesson 6's experiment): an old link still opens the page.
RETIRED_PARAMS = ("sa_text", "sa_random", "sa_seed")
DEFAULT_CUTOFF = 0.8  # the share of a row's attention the lines carry when the page opens


# Preset results are the same for everyone and never change: one shared read-only copy (st.cache_resource), not a
# pickled copy per call (st.cache_data).
@st.cache_resource(show_spinner=False)
def sa_data():
    return load_self_attention()


def _read_only(array):
    array.setflags(write=False)
    return array


@st.cache_resource(show_spinner=False)
def sa_heads(preset_id: str):
    data = sa_data()
    return _read_only(preset_heads(data.by_id(preset_id), data.rule_score))


@st.cache_resource(show_spinner=False)
def sa_mix(preset_id: str):
    parts = multi_head_parts(sa_heads(preset_id))
    for array in vars(parts).values():
        _read_only(array)
    return parts


@st.cache_resource(show_spinner=False, max_entries=64)
def sa_csv_texts(preset_id: str, corner: str, token_col: str, concat_col: str, output_col: str) -> tuple[list[str], str]:
    """-> (each head's matrix CSV, the concatenation + output CSV), headers in the page's language; built once."""
    preset, heads, parts = sa_data().by_id(preset_id), sa_heads(preset_id), sa_mix(preset_id)
    head_csvs = [matrix_csv(weights, preset.tokens, corner) for weights in heads]
    table = pd.concat([pd.DataFrame({token_col: position_labels(preset.tokens)}),
                       pd.DataFrame(parts.concat, columns=[concat_col.format(k=j + 1) for j in range(parts.concat.shape[1])]),
                       pd.DataFrame(parts.output, columns=[output_col.format(k=j + 1) for j in range(parts.output.shape[1])])],
                      axis=1)
    return head_csvs, table.to_csv(index=False, float_format="%.6f")


def arrow_table(first_name: str, first_column, columns, values) -> pa.Table:
    """A small table for st.dataframe as Arrow (a labels column, then one column per name): st.dataframe sends it as
    it is, where a pandas DataFrame is converted on every rerun."""
    return pa.table({first_name: list(first_column), **{str(c): values[:, j] for j, c in enumerate(columns)}})


def heat(weights, tokens, row, **kwargs) -> dict:
    """A heat-map dict with ``row`` outlined; the figure is built once per matrix, the outline moves on the dict."""
    return outline_row(figure_spec(attention_heatmap, weights, list(tokens), highlight_row=0, label_every_column=True,
                                   **kwargs), row)


def tops(tokens, row, count: int = 3) -> str:
    return ("、" if translator().lang == "ja" else ", ").join(f"{md_escape(tokens[j])} {percent(row[j])}" for j in top_targets(row, count))


def _on_token_click():  # click on a token marker -> the selected token (the selectbox follows)
    points = (st.session_state.get("sa_lines") or {}).get("selection", {}).get("points", [])
    ys = [int(round(p["y"])) for p in points if isinstance(p.get("y"), (int, float))]
    if ys and 0 <= ys[0] < len(sa_data().by_id(st.session_state.get("sa_preset")).tokens):
        st.session_state.sa_token = ys[0]


def section_lines(t, preset_id: str, cutoff: float) -> int:
    """The selected token, its lines (cut off at ``cutoff`` of the row's weight) and the coreference matrix with its
    row outlined. -> the selected token's position."""
    preset = sa_data().by_id(preset_id)
    tokens, n = list(preset.tokens), len(preset.tokens)
    coref = sa_heads(preset.id)[0]
    # the token is in the link as its position (?sa_token=5); a bad one, or one past a shorter sentence, -> the pronoun
    sel = _token_box(t, tokens, preset)
    row = coref[sel]
    keep = lines_to_keep(row, cutoff)
    left, right = st.columns(2, gap="medium")
    with left:
        fig = figure_spec(token_lines, tokens, row, sel, keep=keep, title=t(f"{S}.lines_title", token=tokens[sel]),
                          value_label=t(f"{S}.value_label"), query_label=t(f"{S}.query_label"),
                          key_label=t(f"{S}.key_label"))
        show_plotly(fig, key="sa_lines", on_select=_on_token_click, selection_mode="points")
        caption = f"{S}.lines_caption_touch" if on_touch_device() else f"{S}.lines_caption"  # no "hover"
        st.caption(t(caption, token=md_escape(tokens[sel]), pos=sel + 1, top=tops(tokens, row),
                     shown=int(keep.sum()), n=n, mass=percent(row[keep].sum()), cutoff=percent(cutoff, 0)))
    with right:
        show_plotly(heat(coref, tokens, sel, title=t(f"{S}.heat_title"), value_label=t(f"{S}.value_label"),
                         height=fig["layout"]["height"], axis_titles=heatmap_axes(t)), key="sa_heat")
        csv_download(t(f"{S}.download"), _csv_texts(t, preset.id)[0][0], f"self_attention_{preset.id}.csv", key="sa_csv")
        with st.expander(t(f"{S}.table")):
            labels = position_labels(tokens)
            data_table(arrow_table(t(f"{S}.csv_corner"), labels, labels, np.round(coref, 4)), hide_index=True,
                       key="sa_table", matrix=True)
    return sel


def _csv_texts(t, preset_id: str) -> tuple[list[str], str]:
    return sa_csv_texts(preset_id, t(f"{S}.csv_corner"), t(f"{S}.csv_token"), t(f"{S}.csv_concat", k="{k}"),
                        t(f"{S}.csv_output", k="{k}"))


def _token_box(t, tokens, preset) -> int:
    with st.columns(2)[0]:
        label = t(f"{S}.token_phone" if on_touch_device() else f"{S}.token")  # (a phone cannot click the chart)
        return url_selectbox(label, list(range(len(tokens))), "sa_token",
                             format_func=lambda i: f"{tokens[i]} ({i + 1})", default=preset.pronoun)


def section_heads(t, preset_id: str, sel: int) -> None:
    """The three heads side by side, each map at least HEAD_MAP_WIDTH wide: a row that is too narrow wraps."""
    preset, heads = sa_data().by_id(preset_id), sa_heads(preset_id)
    tokens = list(preset.tokens)
    st.subheader(t(f"{S}.heads_title"))
    explanation(t(f"{S}.heads_explain", score=f"{sa_data().rule_score:g}"))
    # one figure built per preset and language (head 1); the other heads swap in their matrix and title
    first = figure_spec(attention_heatmap, heads[0], tokens, highlight_row=0, title=t(f"{S}.head_{HEADS[0]}"),
                        height=HEAD_MAP_HEIGHT, show_values=False, value_label=t(f"{S}.value_label"),
                        axis_titles=heatmap_axes(t), label_every_column=True)
    with st.container(horizontal=True, gap="medium", key="sa_heads_grid"):
        for k, (name, weights) in enumerate(zip(HEADS, heads)):
            with st.container(width=HEAD_MAP_WIDTH, key=f"sa_head_box_{name}"):
                spec = swap_matrix(first, weights, t(f"{S}.head_{name}")) if k else first
                show_plotly(outline_row(spec, sel), key=f"sa_head_{name}")
                target = top_targets(weights[sel], 1)[0]
                st.caption(t(f"{S}.head_caption", source=md_escape(tokens[sel]), target=md_escape(tokens[target]),
                             weight=percent(weights[sel, target])))
                csv_download(t(f"{S}.download_head"), _csv_texts(t, preset.id)[0][k],
                             f"self_attention_{preset.id}_{name}.csv", key=f"sa_head_csv_{name}")
    st.page_link("lessons/pretrained.py", label=t(f"{S}.trained_heads_link"), icon=":material/arrow_forward:")


def _numbers(values) -> list[str]:
    return ["" if v != v else f"{v:+.2f}" for v in values]  # NaN (no number in this head's columns) -> empty cell


def section_question(t, preset_id: str) -> bool:
    """How does a layer combine the heads? Asked before section_mix, which shows it; True once answered."""
    parts = sa_mix(preset_id)
    h, n, d_v = parts.head_outputs.shape
    return predict_then_reveal(t, S, 4, 3, key="sa_predict", h=h, n=n, d_v=d_v, hd=parts.concat.shape[1])


def section_mix(t, preset_id: str, sel: int) -> None:
    """Concatenate the heads' outputs and mix them with W_O: the shapes, the selected token's numbers, every token."""
    preset = sa_data().by_id(preset_id)
    tokens = list(preset.tokens)
    parts = sa_mix(preset.id)
    h, n, d_v = parts.head_outputs.shape
    hd, d_model = parts.concat.shape[1], parts.output.shape[1]
    sizes = dict(h=h, n=n, d_v=d_v, hd=hd, d_model=d_model)
    st.markdown(f"#### {t(f'{S}.mix_title')}")
    explanation(t(f"{S}.mix_explain", h=h, seed=MULTI_HEAD_SEED))
    st.markdown(f"**{t(f'{S}.mix_shapes', **sizes)}**")
    st.caption(t(f"{S}.mix_table_caption", token=md_escape(tokens[sel]), pos=sel + 1, **sizes))
    names = [t(f"{S}.mix_name_{name}") for name in HEADS]
    index = [t(f"{S}.mix_row_head", k=k + 1, name=names[k], **sizes) for k in range(h)]
    index += [t(f"{S}.mix_row_concat", **sizes), t(f"{S}.mix_row_output", **sizes)]
    steps = np.array([_numbers(r) for r in mix_steps(parts, sel)], dtype=object)
    data_table(arrow_table(t(f"{S}.mix_step"), index, range(1, hd + 1), steps), hide_index=True, key="sa_mix_steps",
               matrix=True)
    labels = position_labels(tokens)
    with st.expander(t(f"{S}.mix_full")):
        st.caption(t(f"{S}.mix_concat_label", **sizes))
        data_table(arrow_table(t(f"{S}.csv_token"), labels, [t(f"{S}.csv_concat", k=j + 1) for j in range(hd)],
                               np.round(parts.concat, 3)), hide_index=True, key="sa_mix_concat", matrix=True)
        st.caption(t(f"{S}.mix_output_label", **sizes))
        data_table(arrow_table(t(f"{S}.csv_token"), labels, [t(f"{S}.csv_output", k=j + 1) for j in range(d_model)],
                               np.round(parts.output, 3)), hide_index=True, key="sa_mix_output", matrix=True)
    csv_download(t(f"{S}.mix_download"), _csv_texts(t, preset.id)[1], f"self_attention_{preset.id}_multi_head.csv",
                 key="sa_mix_csv")


def retired_link_note(t) -> None:
    """A link to this page's old GloVe part (its sentence, random projections, seed) opens the page as it is now, with
    a note and a link to lesson 6, where that experiment is; the parameters stay in the link for lesson 6's reader."""
    if any(name in st.query_params for name in RETIRED_PARAMS):
        st.info(t(f"{S}.retired_link"), icon=":material/info:")
        st.page_link("lessons/glove.py", label=t(f"{S}.glove_link"), icon=":material/arrow_forward:")


def section_forward(t) -> None:
    """Where the lesson goes on: these heads' numbers were written by hand; lesson 6 asks what real, untrained word
    vectors do (the question only: its answer is lesson 6's)."""
    st.subheader(t(f"{S}.forward_title"))
    explanation(t(f"{S}.forward_explain"))
    st.page_link("lessons/glove.py", label=t(f"{S}.glove_link"), icon=":material/arrow_forward:")
