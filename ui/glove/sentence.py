"""Lesson 6's sentence: the learner's words (a preset or typed), their GloVe vectors, the query and target words
chosen by a stated rule, and how the page writes a word or a number of it inside a sentence."""

from __future__ import annotations

from typing import NamedTuple

import streamlit as st

from attention_core import glove as glove_core  # looked up at call time: tests replace glove_core.embed
from attention_core.glove.pronouns import DefaultWords, capitalised_words, default_target, default_words
from attention_core.sentences import load_sentences
from attention_core.text import tokenize
from ui.shared.common import BOX_CHARS, glove_vectors, md_escape, sentence_tokens, show_unknown, text_limits
from ui.shared.i18n import sci
from ui.shared.links import url_selectbox

S = "glove"
DOCUMENT_A = "animal_tired"  # data/sentences.toml's first preset: Document A's sentence, the default of every page
STREET_WIDE = "street_wide"  # the same sentence ending in "wide"


@st.cache_data(show_spinner=False)
def preset_tokens() -> dict:
    """-> {preset id: its tokens} of data/sentences.toml, in file order (the first is the page's default)."""
    return {s.id: tuple(tokenize(s.text)) for s in load_sentences()}


@st.cache_data(show_spinner=False)
def default_text() -> str:
    return load_sentences()[0].text


class Sentence(NamedTuple):
    words: list  # the known words, in order
    X: object  # (n, 50) their GloVe vectors
    qi: int  # the query word's position
    ti: int  # the target word's position
    kv: object  # the GloVe vectors
    preset: str | None  # the id of the preset sentence these words are (DOCUMENT_A, STREET_WIDE, ...), or None


def quoted(t, word: str) -> str:
    """A word of the sentence inside a sentence of this language: “word” or 「word」 (escaped for Markdown)."""
    return t("glove.quoted", word=md_escape(word))


def number(x: float) -> str:
    """A weight or a loss in a sentence: 4 decimals, or 1.7 × 10⁻⁷ when that would print 0.0000."""
    return f"{x:.4f}" if abs(x) >= 1e-3 or x == 0 else sci(x)


def try_values(t, s: Sentence | None) -> dict:
    """The "What to try" box's first line: swap the adjective, only for the two preset sentences it is about."""
    preset = s.preset if s is not None else None
    return {"swap": t("glove.try_swap") if preset == DOCUMENT_A else t("glove.try_swap_back") if preset == STREET_WIDE else ""}


def rule_caption(t, words, choice: DefaultWords, qi: int, ti: int) -> str:
    """How the page chose the query and target it starts from (said only for the boxes still at that choice)."""
    parts = []
    if qi == choice.query:
        parts.append(t(f"glove.rule_query_{choice.query_rule}", query=md_escape(words[qi])))
    target, rule = default_target(words, qi, choice.names)
    if ti == target:
        parts.append(t(f"glove.rule_target_{rule}", query=md_escape(words[qi]), target=md_escape(words[ti])))
    if parts:
        parts.append(t("glove.rule_note"))
    return " ".join(parts) if t.lang == "en" else "".join(parts)


def controls(t) -> Sentence | None:
    """The sentence, then the query and target words (offered from its words, each in the link; they start at the
    sentence's first pronoun and a noun before it); None (with a message shown) when the sentence has fewer than
    two different known words."""
    text = st.text_input(t("glove.sentence_label"), value=default_text(), max_chars=BOX_CHARS,
                         key="glove_sentence", bind="query-params", help=t("glove.sentence_help"))
    st.caption(text_limits(t))
    tokens = sentence_tokens(t, text)
    if tokens is None:
        return None
    kv = glove_vectors(t)
    if kv is None:
        return None
    X, unknown = glove_core.embed(tokens, kv)
    words = glove_core.split_known(tokens, kv)[0]
    show_unknown(t, unknown)
    if len(words) < 2:
        st.warning(t("glove.too_few", n=len(words)))
        return None
    unique = list(dict.fromkeys(words))
    if len(unique) < 2:
        st.warning(t("glove.one_word", word=md_escape(unique[0])))
        return None
    choice = default_words(words, capitalised_words(text))
    c1, c2 = st.columns(2, gap="medium")
    query = url_selectbox(t("glove.query_label"), unique, "glove_query", widget=c1.selectbox,
                          default=words[choice.query])
    targets = [w for w in unique if w != query]
    target = url_selectbox(t("glove.target_label"), targets, "glove_target", widget=c2.selectbox,
                           default=words[default_target(words, words.index(query), choice.names)[0]])
    qi, ti = words.index(query), words.index(target)
    caption = rule_caption(t, words, choice, qi, ti)
    if choice.query_rule == "last_word" and qi == choice.query:
        st.info(caption, icon=":material/info:")  # no pronoun: say so where it is read first
    elif caption:
        st.caption(caption)
    for word in (query, target):
        if words.count(word) > 1:
            st.caption(t("glove.repeated", word=md_escape(word), count=words.count(word)))
    st.caption(t("glove.vectors_note", n=len(words), words=" · ".join(md_escape(w) for w in words)))
    preset = next((key for key, tokens in preset_tokens().items() if tuple(words) == tokens), None)
    return Sentence(words, X, qi, ti, kv, preset)
