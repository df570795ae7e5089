"""Lesson 1, the RNN bottleneck: an RNN carries the sentence in one fixed-size state; attention looks every word up."""

import streamlit as st

from ui import rnn_sections as sec
from ui.common import (
    MAX_CHARS,
    glove_vectors,
    guarded_fragment,
    md_escape,
    page_header,
    predict_then_reveal,
    sentence_tokens,
    show_unknown,
    translator,
    url_selectbox,
    what_to_try,
)

SECTION = "rnn"
FORMULA = (
    r"h_t = \tanh\left(W_x x_t + W_h h_{t-1} + b\right), \qquad "
    r"\frac{\partial h_T}{\partial x_t} = \Bigl(\prod_{k=T}^{t+1} \mathrm{diag}\bigl(1 - h_k^2\bigr) W_h\Bigr)"
    r"\, \mathrm{diag}\bigl(1 - h_t^2\bigr) W_x"
)
CUSTOM = "custom"


def sentence_controls(t) -> str:
    sentences = sec.presets()
    ids = [s.id for s in sentences] + [CUSTOM]
    labels = {s.id: s.label[t.lang] for s in sentences} | {CUSTOM: t("common.custom")}
    default = CUSTOM if st.query_params.get("rnn_text") else sec.DEFAULT_PRESET if sec.DEFAULT_PRESET in ids else ids[0]
    choice = url_selectbox(t("common.preset"), ids, "rnn_preset", format_func=labels.get, default=default)
    if choice == CUSTOM:
        return st.text_input(
            t("common.sentence"), value="", max_chars=MAX_CHARS, placeholder=t("rnn.placeholder"),
            key="rnn_text", bind="query-params",
        )
    text = next(s.text for s in sentences if s.id == choice)
    st.caption(md_escape(text))
    return text


def model_controls(t) -> tuple[int, float, int]:
    d = sec.DEFAULTS
    hidden = st.slider(t("rnn.hidden"), 1, 256, d["hidden"], help=t("rnn.hidden_help"), key="rnn_hidden",
                       bind="query-params")
    radius = st.slider(
        t("rnn.radius"), 0.1, 2.0, d["radius"], step=0.05, help=t("rnn.radius_help"), key="rnn_radius",
        bind="query-params",
    )
    seed = st.number_input(
        t("common.seed"), min_value=0, max_value=2**31 - 1, value=d["seed"], step=1, help=t("rnn.seed_help"),
        key="rnn_seed", bind="query-params",
    )
    return int(hidden), round(float(radius), 4), int(seed)


def predict_number(t, kv) -> None:
    """The predicted quantity, computed at the default settings for the default sentence (never typed in the text)."""
    tokens = tuple(sec.tokenize_text(sec.default_text()))
    profile, unknown = sec.profile_for(tokens, sec.DEFAULTS["hidden"], sec.DEFAULTS["radius"], sec.DEFAULTS["seed"], kv)
    if profile is not None:
        st.caption(t("rnn.predict_number", n=len(tokens) - len(unknown), ratio=sec.ratio_text(profile)))


@guarded_fragment
def lesson(t) -> None:
    """Every control and both experiments: a control change reruns only this, not the app's frame."""
    sentence_col, model_col = st.columns([3, 2], gap="large")
    with sentence_col:
        text = sentence_controls(t)
    with model_col:
        hidden, radius, seed = model_controls(t)
    what_to_try(t, SECTION)

    tokens = sentence_tokens(t, text)
    kv = glove_vectors(t) if tokens else None
    profile = None
    if kv is not None:
        profile, unknown = sec.profile_for(tuple(tokens), hidden, radius, seed, kv)
        show_unknown(t, unknown)
        if profile is None:
            st.warning(t("rnn.no_known"))
        else:
            sec.show_steps(t, len(tokens) - len([w for w in tokens if w in unknown]))

    st.subheader(t("rnn.fig1_title"))
    # The question stays on screen whatever the sentence, so an answer is not lost while the learner edits the text.
    if predict_then_reveal(t, SECTION, 4, 4, key="rnn_predict"):
        kv_default = kv if kv is not None else glove_vectors(t)
        if kv_default is not None:
            predict_number(t, kv_default)
        if profile is not None:
            sec.show_influence(t, tokens, hidden, radius, seed, kv)

    sec.show_probe(t, radius, seed)


t = translator()
page_header(t, SECTION, FORMULA)
st.info(t("rnn.framing"), icon=":material/menu_book:")
lesson(t)
