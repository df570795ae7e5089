"""Lesson 5, the causal mask: scores above the diagonal become -inf, the weights turn lower-triangular."""

import streamlit as st

from ui import causal
from ui.shared.common import page_header, translator, what_to_try

FORMULA = (r"M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}"
           r"\qquad \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V")

t = translator()
page_header(t, "causal", FORMULA)
controls = causal.controls(t)
what_to_try(t, "causal")
sentence = causal.section_vectors(t, controls)
if sentence is None:
    st.stop()
causal.section_scores(t, sentence)
causal.section_matrices(t, sentence)
causal.section_generation(t, sentence)
causal.section_leak(t, sentence)
