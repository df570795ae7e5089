"""Lesson 8, inside a trained model: all-MiniLM-L6-v2's 72 heads on a sentence, run live in NumPy.

The sentence and the [CLS]/[SEP] switch are here (changing them reruns the page); "find the head" is a section in
ui/pretrained/page.py, the tired/wide minimal pair and the catalogue in ui/pretrained/measures.py, the heads at a glance in
ui/pretrained/view.py. The two predictions come before any figure that would answer them.
"""

import streamlit as st

from ui.shared.common import page_header, translator, what_to_try
from ui.pretrained.page import S, find_section, formula, model_or_message, predictions, sentence_picker, sink_section
from ui.pretrained.measures import catalogue_section, pair_section
from ui.pretrained.view import heads_section

t = translator()
page_header(t, S, formula())
if model_or_message(t):
    reading = sentence_picker(t)  # None (said why) when the sentence cannot be read: the rest of the page stays
    hide = st.toggle(t(f"{S}.hide_special"), value=False, key="pretrained_hide_special", bind="query-params",
                     help=t(f"{S}.hide_special_help"))
    what_to_try(t, S)
    if reading is not None:
        sink_section(t, reading, hide)
    if predictions(t):  # about the famous sentence, not the learner's: asked and answered whatever is typed
        if reading is not None:
            heads_section(t, reading.text, hide)
            find_section(t, reading.text, hide)
        pair_section(t, hide)
        catalogue_section(t)
