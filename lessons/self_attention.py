"""Lesson 3, self-attention: hand-designed heads you can click through, mixed by W_O, then real GloVe vectors.

The preset and the cut-off are here (changing them reruns the page); the token and the heads, and the GloVe part,
are fragments in ui/self_attention_sections.py (a token click or a new seed reruns only its section).
"""

import streamlit as st

from ui.common import page_header, translator, url_selectbox
from ui.self_attention_sections import S, glove_section, hand_section, sa_data

LATEX = (r"A = \mathrm{softmax}\!\left(\frac{(X W_Q)(X W_K)^\top}{\sqrt{d_k}}\right) \in \mathbb{R}^{n \times n},"
         r"\qquad \mathrm{out}_i = \sum_{j=1}^{n} A_{ij}\,(X W_V)_j")

t = translator()


def _reset_token():  # a new preset starts on its pronoun
    st.session_state.sa_token = data.by_id(st.session_state.sa_preset).pronoun


page_header(t, S, LATEX)
data = sa_data()  # after the title: a broken preset file shows its message under the lesson's title
c_preset, c_cut = st.columns(2)
with c_preset:
    preset = data.by_id(url_selectbox(t(f"{S}.preset"), [p.id for p in data.presets], "sa_preset",
                                      format_func=lambda i: data.by_id(i).label, on_change=_reset_token))
cutoff = c_cut.slider(t(f"{S}.cutoff"), 0.05, 1.0, 0.9, 0.05, format="%.2f", key="sa_cutoff", bind="query-params",
                      help=t(f"{S}.cutoff_help"))
st.caption(preset.gloss[t.lang])
st.info(t("common.hand_designed"), icon=":material/edit_note:")
hand_section(preset.id, cutoff)
glove_section(preset.id, cutoff)
