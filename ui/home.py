"""The home page's sections: the map of the lesson, and a live toy example of the formula."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.attention import MAX_SEED
from attention_core import scaled_dot_product_attention
from charts import attention_heatmap
from ui.shared.common import csv_download, heatmap_axes
from ui.shared.display import on_touch_device, show_plotly
from ui.shared.figures import figure_spec
from ui.shared.i18n import Translator

LESSONS = [  # (page script, locales section), in the order of the lesson
    ("lessons/rnn.py", "rnn"),
    ("lessons/qkv.py", "qkv"),
    ("lessons/self_attention.py", "self_attention"),
    ("lessons/scaling.py", "scaling"),
    ("lessons/causal.py", "causal"),
    ("lessons/glove.py", "glove"),
    ("lessons/transformer.py", "transformer"),
    ("lessons/pretrained.py", "pretrained"),
    ("lessons/gpt.py", "gpt"),
    ("lessons/heads.py", "heads"),
    ("lessons/modern.py", "modern"),
    ("lessons/tiny_gpt.py", "tiny_gpt"),
    ("lessons/summary.py", "summary"),
]
DEMO_TOKENS = ["a", "b", "c", "d", "e"]


def section_map(t: Translator) -> None:
    """Every lesson: its link and the claim it makes."""
    st.subheader(t("home.map_title"))
    for path, key in LESSONS:
        st.page_link(path, label=t(f"nav.{key}"))
        st.caption(t(f"home.claim_{key}"))


def section_demo(t: Translator) -> None:
    """Seeded random Q, K, V for five tokens -> the attention weights as a heat map, a table and a CSV."""
    st.subheader(t("home.demo_title"))
    seed = st.number_input(t("common.seed"), min_value=0, max_value=MAX_SEED, value=0, step=1, key="home_seed",
                           bind="query-params")
    rng = np.random.default_rng(int(seed))
    Q, K, V = (rng.normal(size=(len(DEMO_TOKENS), 4)) for _ in range(3))
    _, weights = scaled_dot_product_attention(Q, K, V)
    show_plotly(figure_spec(attention_heatmap, weights, DEMO_TOKENS, title=t("home.demo_caption"),
                            axis_titles=heatmap_axes(t), value_label=t("common.weight")), key="home_heatmap")
    st.caption(t("home.demo_note_touch" if on_touch_device() else "home.demo_note"))  # no "hover"
    table = pd.DataFrame(weights, index=DEMO_TOKENS, columns=DEMO_TOKENS).rename_axis(t("common.axis_query"))
    with st.expander(t("home.table_title")):
        st.dataframe(table.round(4))
    csv_download(t("home.download"), table.reset_index(), file_name=f"attention_demo_seed{seed}.csv", key="home_csv")
