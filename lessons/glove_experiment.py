"""Lesson 6, the GloVe experiment: does "it" find "animal"? Raw vectors, untrained projections, a 3-D view, training.

Widgets -> attention_core (glove_rows, pca, training, pronouns) -> charts -> text; the sections live in
ui/glove_sections.py. Claim: the famous "it -> animal" pattern is what training produces.
"""

import streamlit as st

from attention_core.glove import embed, split_known
from ui.common import (
    MAX_CHARS, glove_vectors, md_escape, page_header, sentence_tokens, show_unknown, translator, what_to_try,
)
from ui.glove_sections import S, section_cloud, section_random, section_raw, section_train, word_choice

DEFAULT_SENTENCE = "The animal didn't cross the street because it was too tired"  # as on the other pages
DEFAULT_QUERY, DEFAULT_TARGET = "it", "animal"

t = translator()
page_header(t, S, r"w_{\mathrm{it}} = \mathrm{softmax}\!\left(\frac{q_{\mathrm{it}}\, K^\top}{\sqrt{d_k}}\right),"
            r"\qquad \operatorname{rank}(\text{animal}) = 1 + \#\{\, j : w_{\mathrm{it}, j} > w_{\mathrm{it},\,\text{animal}} \}")

text = st.text_input(t("glove.sentence_label"), value=DEFAULT_SENTENCE, max_chars=MAX_CHARS,
                     key="glove_sentence", bind="query-params", help=t("glove.sentence_help"))
tokens = sentence_tokens(t, text)
if tokens is None:
    st.stop()
kv = glove_vectors(t)
if kv is None:
    st.stop()
X, unknown = embed(tokens, kv)
words = split_known(tokens, kv)[0]
show_unknown(t, unknown)
if len(words) < 2:
    st.warning(t("glove.too_few", n=len(words)))
    st.stop()

# --- the query word and the target word ----------------------------------------------------------------------
unique = list(dict.fromkeys(words))
if len(unique) < 2:
    st.warning(t("glove.one_word", word=md_escape(unique[0])))
    st.stop()
c1, c2 = st.columns(2, gap="medium")
query = word_choice(c1, t("glove.query_label"), unique, "glove_query", DEFAULT_QUERY if DEFAULT_QUERY in unique else unique[0])
targets = [w for w in unique if w != query]
target = word_choice(c2, t("glove.target_label"), targets, "glove_target",
                     DEFAULT_TARGET if DEFAULT_TARGET in targets else targets[0])
if DEFAULT_QUERY not in unique:
    c1.info(t("glove.no_default_query", word=DEFAULT_QUERY, query=md_escape(query)))
if DEFAULT_TARGET not in targets:
    c2.info(t("glove.no_default_target", word=DEFAULT_TARGET, target=md_escape(target)))
qi, ti = words.index(query), words.index(target)
for word in (query, target):
    if words.count(word) > 1:
        st.caption(t("glove.repeated", word=md_escape(word), count=words.count(word)))
st.caption(t("glove.vectors_note", n=len(words), words=" · ".join(md_escape(w) for w in words)))

# --- (a) raw, (b) untrained projections, (c) the 3-D view, (d) training -------------------------------------
section_raw(t, words, X, qi, ti)
st.divider()
section_random(t, words, X, qi, ti)
st.divider()
cloud_box = st.container()  # (c) is drawn after (d), so a training run in (d) shows up in (c) at once
st.divider()
section_train(t, kv, words, X, qi, ti)
with cloud_box:
    section_cloud(t, words, X, qi)

what_to_try(t, S)
