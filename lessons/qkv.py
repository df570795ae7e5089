"""Lesson 2, the QKV library: attention as a soft, differentiable lookup over four hand-designed books."""

import streamlit as st

from ui import qkv
from ui.shared.common import guarded_fragment, page_header, translator, what_to_try

FORMULA = r"s_i = \frac{q \cdot k_i}{\tau}, \qquad w = \mathrm{softmax}(s), \qquad \text{output} = \sum_i w_i \, v_i"


@guarded_fragment
def lesson() -> None:
    """The controls and every step: a control change reruns only this, not the frame and the header."""
    controls = qkv.controls(t, lib)
    what_to_try(t, "qkv")
    run = qkv.section_query(t, lib, controls)
    revealed = False
    if controls.step == 0:
        qkv.section_setup(t, lib, controls)
    elif controls.step == 1:
        qkv.section_scores(t, lib, controls, run)
    elif controls.step == 2:
        qkv.section_weights(t, lib, run)
    else:
        revealed = qkv.section_blend(t, lib, controls, run)
    qkv.section_table(t, lib, controls, run, revealed)


t = translator()
page_header(t, "qkv", FORMULA)
st.caption(t("common.hand_designed") + " " + t("qkv.hand_designed_note"))
st.caption(t("qkv.scaling_note"))
lib = qkv.library_or_message(t)
if lib is None:
    st.stop()
lesson()
