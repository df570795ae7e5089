"""Home: what attention is, the formula, a live toy example, and the map of the lesson."""

import numpy as np
import pandas as pd
import streamlit as st

from attention_core import scaled_dot_product_attention
from charts import attention_heatmap
from ui.common import csv_download, heatmap_axes, page_header, translator
from ui.display import show_plotly
from ui.figures import figure_spec

t = translator()
page_header(t, "home", r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V")

left, right = st.columns([3, 2], gap="large")
with left:
    st.subheader(t("home.map_title"))
    for path, key in [
        ("lessons/rnn_bottleneck.py", "rnn"),
        ("lessons/qkv_library.py", "qkv"),
        ("lessons/self_attention.py", "self_attention"),
        ("lessons/scaling.py", "scaling"),
        ("lessons/causal_mask.py", "causal"),
        ("lessons/glove_experiment.py", "glove"),
        ("lessons/transformer_block.py", "transformer"),
        ("lessons/pretrained.py", "pretrained"),
    ]:
        st.page_link(path, label=t(f"nav.{key}"))
        st.caption(t(f"home.claim_{key}"))

with right:
    st.subheader(t("home.demo_title"))
    seed = st.number_input(t("common.seed"), min_value=0, max_value=2**31 - 1, value=0, step=1, key="home_seed",
                           bind="query-params")
    rng = np.random.default_rng(int(seed))
    tokens = ["a", "b", "c", "d", "e"]
    Q, K, V = (rng.normal(size=(len(tokens), 4)) for _ in range(3))
    _, weights = scaled_dot_product_attention(Q, K, V)
    show_plotly(figure_spec(attention_heatmap, weights, tokens, title=t("home.demo_caption"),
                            axis_titles=heatmap_axes(t), value_label=t("common.weight")), key="home_heatmap")
    st.caption(t("home.demo_note"))
    table = pd.DataFrame(weights, index=tokens, columns=tokens).rename_axis(t("common.axis_query"))
    with st.expander(t("home.table_title")):
        st.dataframe(table.round(4))
    csv_download(t("home.download"), table.reset_index(), file_name=f"attention_demo_seed{seed}.csv", key="home_csv")
