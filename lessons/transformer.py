"""Lesson 7, from attention to a Transformer block: attention alone is order-blind, positional encoding fixes that,
and a position-wise feed-forward layer with residual connections and layer norm completes the block."""

import streamlit as st

from ui import transformer
from ui.shared.common import guarded_fragment, page_header, translator, what_to_try

FORMULA = (r"\mathrm{PE}_{(p,\,2i)} = \sin\frac{p}{10000^{2i/d}},\ \ \mathrm{PE}_{(p,\,2i+1)} = \cos\frac{p}{10000^{2i/d}}"
           r"\qquad H = \mathrm{LN}\big(Z + \mathrm{Attn}(Z)\big),\ \ Y = \mathrm{LN}\big(H + \mathrm{FFN}(H)\big)")


@guarded_fragment
def the_block(sentence) -> None:
    """The block and its locality check: the activation or the changed token reruns only these two."""
    activation = transformer.section_block(t, sentence)
    transformer.section_locality(t, sentence, activation)


t = translator()
page_header(t, "transformer", FORMULA)
controls = transformer.controls(t)
what_to_try(t, "transformer")
sentence = transformer.section_vectors(t, controls)
if sentence is None:
    st.stop()
transformer.section_order(t, sentence)
the_block(sentence)
transformer.section_real_model(t, sentence)
