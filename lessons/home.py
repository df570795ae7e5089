"""Home: what attention is, the formula, a live toy example, and the map of the lesson."""

import streamlit as st

from ui import home
from ui.shared.common import page_header, translator

FORMULA = r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V"

t = translator()
page_header(t, "home", FORMULA)
left, right = st.columns([3, 2], gap="large")
with left:
    home.section_map(t)
with right:
    home.section_demo(t)
