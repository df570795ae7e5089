"""Lesson 6, the GloVe experiment: does "it" find "animal"? Raw vectors, untrained projections, a 3-D view, training.

Claim: the famous "it -> animal" pattern is what training produces.
"""

import streamlit as st

from ui.glove import page as glove
from ui.glove import sentence as glove_sentence
from ui.shared.common import guarded_fragment, page_header, translator, what_to_try

FORMULA = (r"w = \mathrm{softmax}\!\left(\frac{q_{\mathrm{query}}\, K^\top}{\sqrt{d_k}}\right),"
           r"\qquad \operatorname{rank}(\text{target}) = 1 + \#\{\, j : w_j > w_{\text{target}} \}")


@guarded_fragment
def experiments(sentence) -> None:
    """(b), (c) and (d): a widget in any of them reruns these three only, and (c) draws what (b) and (d) returned."""
    projection = glove.section_random(t, sentence)
    st.divider()
    cloud = st.container()  # (c) sits above (d) but is drawn after it, so a training run shows up in (c) at once
    st.divider()
    trained = glove.section_train(t, sentence)
    with cloud:
        glove.section_cloud(t, sentence, projection, trained)


t = translator()
page_header(t, "glove", FORMULA)
sentence = glove_sentence.controls(t)
what_to_try(t, "glove", **glove_sentence.try_values(t, sentence))
if sentence is None:
    st.stop()
glove.section_raw(t, sentence)
st.divider()
experiments(sentence)
