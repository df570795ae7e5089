"""Lesson 8's model view: all heads at a glance in one clickable chart, and the head picked there opened as lines and
a matrix for one token (a fragment: a head, layer or token picked inside reruns only this section).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.pretrained import heads
from attention_core.self_attention import top_targets
from charts.matrix import HALF_PAGE_PLOT_PX, attention_heatmap
from charts.model_view import (
    LABEL_PX, MAP_PX, MODEL_VIEW_SELECTION, PHONE_MAP_PX, model_view, model_view_table, upright_keys,
)
from charts.self_attention import outline_row
from charts.tokens import token_lines
from ui.shared.common import csv_download, explanation, guarded_fragment, heatmap_axes, md_escape, presenting
from ui.shared.links import url_selectbox
from ui.shared.display import PRESENTER_FONT_SIZE, on_touch_device, show_plotly
from ui.shared.figures import figure_spec
from ui.pretrained.page import S, featured, pronoun_token, sentence_view, viewed

SIDE_BY_SIDE_TOKENS = 16  # up to this many tokens the opened head's matrix stands beside its lines, each key labelled
FULL_PAGE_PLOT_PX = 600  # the matrix's plot width when it takes the page's width (a 1280 px screen's column: ~700)


def _on_head_click():
    points = ((st.session_state.get("pretrained_model_view") or {}).get("selection") or {}).get(MODEL_VIEW_SELECTION)
    if points and isinstance(points, list) and isinstance(points[0], dict):
        layer, head = points[0].get("layer"), points[0].get("head")
        if isinstance(layer, int) and isinstance(head, int) and 0 <= layer < 6 and 0 <= head < 12:
            st.session_state.pretrained_layer, st.session_state.pretrained_head = layer, head


def head_table(t, tokens, weights) -> pd.DataFrame:
    """One head's shown matrix (n, n) -> one row per (query, key) cell: positions counted from 1 as the token picker
    counts them, the tokens, the weight (headers in the page's language)."""
    n = len(tokens)
    col = lambda key: t(f"{S}.view.col_{key}")  # noqa: E731
    return pd.DataFrame({col("query_position"): np.repeat(np.arange(1, n + 1), n), col("query"): np.repeat(tokens, n),
                         col("key_position"): np.tile(np.arange(1, n + 1), n), col("key"): np.tile(tokens, n),
                         col("weight"): np.round(np.asarray(weights, dtype=np.float64).ravel(), 6)})


@guarded_fragment
def heads_section(t, text: str, hide: bool) -> None:
    """All heads at a glance (click one), the picked head as lines + matrix for one token."""
    tokens, shown, _ = viewed(text, hide)
    layers, count, n = shown.shape[0], shown.shape[1], len(tokens)
    best = featured()[0]
    st.subheader(t(f"{S}.model_view_title"))
    explanation(t(f"{S}.model_view_explain", layers=layers, heads=count, total=layers * count))
    c_layer, c_head, c_token = st.columns(3)
    with c_layer:
        layer = url_selectbox(t(f"{S}.layer"), list(range(layers)), "pretrained_layer", default=best.layer)
    with c_head:
        head = url_selectbox(t(f"{S}.head"), list(range(count)), "pretrained_head", default=best.head)
    spec = model_view(tokens, layers, count, (layer, head), layer_label=t(f"{S}.layer_short", k=""),
                      head_label=t(f"{S}.head_short", k=""), query_label=t("common.axis_query"),
                      key_label=t("common.axis_key"), value_label=t("common.weight"),
                      map_px=PHONE_MAP_PX if on_touch_device() else MAP_PX,
                      label_px=PRESENTER_FONT_SIZE - 2 if presenting() else LABEL_PX)  # (presenter: Plotly's ticks)
    st.vega_lite_chart(model_view_table(shown), spec, on_select=_on_head_click, selection_mode=MODEL_VIEW_SELECTION,
                       key="pretrained_model_view", width="content")
    st.caption(t(f"{S}.view.caption_touch") if on_touch_device() else t(f"{S}.model_view_caption"))  # no "hover"
    # the token is kept as its position in the whole sentence, so hiding [CLS]/[SEP] keeps the same token picked
    every = sentence_view(text).tokens
    positions = [i for i, tok in enumerate(every) if not hide or tok not in heads.SPECIAL_TOKENS]
    pronoun = pronoun_token(sentence_view(text))  # lesson 6's rule: the first pronoun, as find-the-head starts
    if pronoun is None or pronoun not in positions:
        pronoun = positions[min(1, n - 1)]
    with c_token:
        picked = url_selectbox(t(f"{S}.token"), positions, "pretrained_token",
                               format_func=lambda i: f"{every[i]} ({i + 1})", default=pronoun)
    sel = positions.index(picked)
    weights = np.asarray(shown[layer, head], dtype=np.float64)
    name = t(f"{S}.head_name", layer=layer, head=head)
    # every key token keeps its label (the "it" column too): a long sentence's map, or a projector's larger labels,
    # take the page's width to fit them
    wide = n > SIDE_BY_SIDE_TOKENS or presenting()
    left, right = (st.container(), st.container()) if wide else st.columns(2, gap="medium")
    with left:
        fig = figure_spec(token_lines, list(tokens), weights[sel], sel, title=t(f"{S}.lines_title", head=name,
                          token=tokens[sel]), value_label=t("common.weight"), query_label=t("common.axis_query"),
                          key_label=t("common.axis_key"))
        show_plotly(fig, key="pretrained_lines")
    with right:
        heat = figure_spec(attention_heatmap, weights, list(tokens), highlight_row=0, title=name,
                           value_label=t("common.weight"), height=None if wide else fig["layout"]["height"],
                           axis_titles=heatmap_axes(t), label_every_column=True,
                           plot_width=FULL_PAGE_PLOT_PX if wide else HALF_PAGE_PLOT_PX)
        show_plotly(upright_keys(outline_row(heat, sel)), key="pretrained_heat")
        csv_download(t(f"{S}.view.download", head=name), head_table(t, tokens, weights), f"{S}_{name}.csv",
                     "pretrained_head_csv")
    sep = "、" if t.lang == "ja" else ", "
    top = sep.join(f"{md_escape(tokens[j])} {weights[sel, j]:.1%}" for j in top_targets(weights[sel], 3))
    st.caption(t(f"{S}.head_caption", head=name, token=md_escape(tokens[sel]), top=top))
