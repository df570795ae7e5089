"""Lesson "Attention as it is built today": Gemma 3 270M run live in NumPy, on what models built today do differently
from lesson 9's: grouped-query attention, sliding-window layers beside global ones, RoPE with two bases and QK-norm,
and Japanese read as words. Every section is in ui/modern/sections.py and asks its question before it answers it.
The long text's window and the Japanese heads do not read the learner's text: they stay when it is empty."""

from ui.shared.common import page_header, translator, what_to_try
from ui.modern.page import S, model_or_message, text_box
from ui.modern.sections import gqa_section, japanese_section, rope_section, window_section

FORMULA = (r"A^{(\ell, h)}_{ij} = \mathrm{softmax}_j\!\left(\frac{R^{(\ell)}_{i-j}\,\hat q^{(\ell, h)}_i \cdot "
           r"\hat k^{(\ell)}_j}{\sqrt{256}} + M^{(\ell)}_{ij}\right),\quad \hat q = \mathrm{RMSNorm}(q),\quad "
           r"M^{(\ell)}_{ij} = -\infty \text{ if } j > i \text{ or (local } \ell \text{ and } i - j \ge 512)")

t = translator()
page_header(t, S, FORMULA)
if model_or_message(t):
    ids = text_box(t)  # None (with a message shown): the sections that read the text are left out
    what_to_try(t, S)
    if ids is not None:
        gqa_section(t, ids)
    window_section(t)  # a long text of its own
    if ids is not None:
        rope_section(t, ids)
    japanese_section(t)  # a Japanese sentence of its own
