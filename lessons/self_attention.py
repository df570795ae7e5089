"""Lesson 3, self-attention: hand-designed heads you can click through, mixed by W_O; real word vectors are lesson 6."""

import streamlit as st

from ui import self_attention
from ui.shared.common import guarded_fragment, page_header, translator, what_to_try
from ui.shared.links import url_selectbox

S = "self_attention"
FORMULA = (r"A = \mathrm{softmax}\!\left(\frac{(X W_Q)(X W_K)^\top}{\sqrt{d_k}}\right) \in \mathbb{R}^{n \times n},"
           r"\qquad \mathrm{out}_i = \sum_{j=1}^{n} A_{ij}\,(X W_V)_j")


def _reset_token():  # a new preset starts on its pronoun
    st.session_state.sa_token = data.by_id(st.session_state.sa_preset).pronoun


@guarded_fragment
def hand_designed(preset_id: str, cutoff: float) -> None:
    """The selected token's lines and matrix, the three heads, the question, then their mixing: a token click or an
    answer reruns only this."""
    selected = self_attention.section_lines(t, preset_id, cutoff)
    self_attention.section_heads(t, preset_id, selected)
    if self_attention.section_question(t, preset_id):
        self_attention.section_mix(t, preset_id, selected)


t = translator()
page_header(t, S, FORMULA)
data = self_attention.sa_data()  # after the title: a broken preset file shows its message under the lesson's title
self_attention.retired_link_note(t)
c_preset, c_cut = st.columns(2)
with c_preset:  # each UI language opens on a sentence in its own language
    preset = data.by_id(url_selectbox(t(f"{S}.preset"), [p.id for p in data.presets], "sa_preset",
                                      format_func=lambda i: data.by_id(i).label, default=data.default_for(t.lang),
                                      on_change=_reset_token))
cutoff = c_cut.slider(t(f"{S}.cutoff"), 0.05, 1.0, self_attention.DEFAULT_CUTOFF, 0.05, format="%.2f",
                      key="sa_cutoff", bind="query-params", help=t(f"{S}.cutoff_help"))
st.caption(preset.gloss[t.lang])
st.info(t("common.hand_designed"), icon=":material/edit_note:")
what_to_try(t, S)
hand_designed(preset.id, cutoff)
self_attention.section_forward(t)
