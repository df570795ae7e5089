"""Attention, live: the entry point. The frame (page config, sidebar, navigation) and the error boundary."""

from contextlib import suppress

import streamlit as st
from streamlit.errors import FragmentHandledException, StreamlitAPIException

from ui.common import MAX_CHARS, md_escape, presenter_style, render_error_boundary, translator
from ui.links import ignored_link_params, unusable_link_params
from ui.i18n import DEFAULT_LANGUAGE, LANGUAGES

st.set_page_config(page_title="Attention, live", page_icon=":material/hub:", layout="wide")

# The language lives in the URL as ?lang=en|ja (the code, not the label), so a copied link keeps it.
if "lang" not in st.session_state:
    requested = st.query_params.get("lang", DEFAULT_LANGUAGE)
    st.session_state.lang = requested if requested in LANGUAGES else DEFAULT_LANGUAGE
    st.session_state.lang_notice = requested not in LANGUAGES
with st.sidebar:
    st.selectbox("Language / 言語", list(LANGUAGES), format_func=LANGUAGES.get, key="lang")
if st.session_state.lang == DEFAULT_LANGUAGE:
    st.query_params.pop("lang", None)
else:
    st.query_params["lang"] = st.session_state.lang

t = translator()
with st.sidebar:
    st.toggle(t("common.presenter"), key="presenter", help=t("common.presenter_help"), bind="query-params")
    st.radio(t("common.export_format"), ["png", "svg"], format_func=str.upper, key="export_format",
             horizontal=True, help=t("common.export_help"))
if st.session_state.presenter:
    st.html(presenter_style())
if st.session_state.pop("lang_notice", False):
    st.toast(t("common.bad_lang_param"))

PAGES = [
    st.Page("lessons/home.py", title=t("nav.home"), icon=":material/home:", default=True),
    st.Page("lessons/rnn_bottleneck.py", title=t("nav.rnn"), icon=":material/linear_scale:", url_path="rnn"),
    st.Page("lessons/qkv_library.py", title=t("nav.qkv"), icon=":material/local_library:", url_path="qkv"),
    st.Page("lessons/self_attention.py", title=t("nav.self_attention"), icon=":material/hub:", url_path="self-attention"),
    st.Page("lessons/scaling.py", title=t("nav.scaling"), icon=":material/functions:", url_path="scaling"),
    st.Page("lessons/causal_mask.py", title=t("nav.causal"), icon=":material/change_history:", url_path="causal"),
    st.Page("lessons/glove_experiment.py", title=t("nav.glove"), icon=":material/science:", url_path="glove"),
    st.Page("lessons/transformer_block.py", title=t("nav.transformer"), icon=":material/stacks:", url_path="transformer"),
]

page = st.navigation(PAGES)
link_params = st.query_params.to_dict()
dropped_now = {}
for name in unusable_link_params(link_params, MAX_CHARS):  # widgets read the link as it was when the run began,
    with suppress(StreamlitAPIException):  # so drop these values and start again without them (reported below)
        st.query_params.pop(name, None)
        dropped_now[name] = link_params[name]
if dropped_now:
    st.session_state.dropped_link_params = dropped_now
    st.rerun()
try:
    page.run()
except FragmentHandledException:
    raise
except Exception as exc:  # the error boundary: one broken page never shows a traceback
    render_error_boundary(exc, t)
finally:  # also after st.stop(), so a page that stops early still says which link values it ignored
    dropped = list(st.session_state.pop("dropped_link_params", {}).items())
    for name, value in dropped + ignored_link_params(link_params, st.query_params.to_dict(), st.session_state):
        st.toast(t("common.bad_link_param", name=md_escape(name[:40]), value=md_escape(value[:40])))
