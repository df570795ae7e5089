"""Lesson 1, the RNN bottleneck: an RNN carries the sentence in one fixed-size state; attention looks every word up."""

import streamlit as st

from ui import rnn
from ui.shared.common import guarded_fragment, page_header, translator, what_to_try

FORMULA = (
    r"h_t = \tanh\left(W_x x_t + W_h h_{t-1} + b\right), \qquad "
    r"\frac{\partial h_T}{\partial x_t} = \Bigl(\prod_{k=T}^{t+1} \mathrm{diag}\bigl(1 - h_k^2\bigr) W_h\Bigr)"
    r"\, \mathrm{diag}\bigl(1 - h_t^2\bigr) W_x"
)


@guarded_fragment
def lesson() -> None:
    """Every control and both experiments: a control change reruns only this, not the app's frame."""
    controls = rnn.controls(t)
    what_to_try(t, "rnn")
    sentence = rnn.section_steps(t, controls)
    rnn.section_influence(t, controls, sentence)
    rnn.section_probe(t, controls)


t = translator()
page_header(t, "rnn", FORMULA)
st.info(t("rnn.framing"), icon=":material/menu_book:")
lesson()
