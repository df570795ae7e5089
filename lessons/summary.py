"""Lesson 10, the summary: each claim of the course in one line, the one live figure that backs it, its lesson's link."""

import streamlit as st

from ui import summary
from ui.shared.common import glove_vectors, page_header, translator

FORMULA = r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V"

t = summary.ClaimsSaid(translator().lang)  # keeps the claims it writes, for the CSV at the end
page_header(t, "summary", FORMULA)
kv = glove_vectors(t)  # two claims use the GloVe vectors; without them the page says so once and shows the rest
summary.section_rnn(t, kv)
summary.section_qkv(t)
summary.section_self_attention(t)
summary.section_scaling(t)
summary.section_causal(t)
summary.section_learned(t, kv)
summary.section_induction(t)
summary.section_heads(t)
summary.section_tiny_gpt(t)
st.divider()
summary.section_further(t)
summary.section_download(t)
