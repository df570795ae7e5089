"""Attention, live: the entry point. The frame (process start-up, page config, sidebar, navigation) and the error
boundary."""

from contextlib import suppress
from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitAPIException

from ui.shared.common import (BOX_CHARS, LONG_TEXT_BOXES, MAX_CHARS, current_lang, cut_on_next_run, keep_what_is_read,
                              md_escape, render_error_boundary, translator)
from ui.shared.display import page_style, presenter_style, touch_probe
from ui.shared.links import FULL_RUN, follow_history, ignored_link_params, unusable_link_params
from ui.shared.i18n import DEFAULT_LANGUAGE, LANGUAGES
from ui.shared.streamlit_compat import FragmentHandledException
from ui.shared import startup

startup.start()  # once per process (later runs: no-op)

# A local image, served by this server: a ":material/...:" page icon makes the browser fetch it from a font CDN,
# the one request that left the machine (an offline classroom has no such CDN).
PAGE_ICON = Path(__file__).resolve().parent / "assets" / "page_icon.png"
st.set_page_config(page_title="Attention, live", page_icon=PAGE_ICON, layout="wide")
st.session_state[FULL_RUN] = st.session_state.get(FULL_RUN, 0) + 1  # full runs, for ui.shared.links.show_stored_choice

# The language lives in the URL as ?lang=en|ja (the code, not the label), held by a hidden text box bound to the URL.
# Streamlit's browser side carries bound parameters over a page change, so a page change needs no URL write of ours
# (each write after the page's own is one more browser-history entry). The visible picker below sets it.
if "lang" not in st.session_state and st.query_params.get("lang", DEFAULT_LANGUAGE) not in LANGUAGES:
    st.query_params.pop("lang", None)  # the session's first run, with a language the app does not have:
    st.session_state.lang_notice = True  # start again without it (the box would read it from the link)
    st.rerun()


def _pick_language() -> None:
    st.session_state.lang = st.session_state.language


with st.sidebar:
    # A 1 x 1 px scrolling container: the box never shows, not even in the first frames, before the browser has
    # loaded st.html's code and applied the style that takes the container out of the layout.
    with st.container(key="lang_param", height=1, width=1, border=False):
        st.text_input("lang", value=DEFAULT_LANGUAGE, max_chars=8, key="lang", bind="query-params",
                      label_visibility="collapsed")
        # A class (ui/shared/classroom.py) lives in the link the same way: its code, the seat, the teacher's key
        if "_class_started" in st.session_state:  # (a teacher just started one: set before its box is drawn)
            st.session_state["class"], st.session_state.teacher = st.session_state.pop("_class_started")
        if st.session_state.get("class") or st.query_params.get("class"):
            from ui.shared.classroom import ensure_seat
            ensure_seat()
        st.text_input("class", value="", max_chars=64, key="class", bind="query-params", label_visibility="collapsed")
        st.text_input("seat", value="", max_chars=64, key="seat", bind="query-params", label_visibility="collapsed")
        st.text_input("teacher", value="", max_chars=64, key="teacher", bind="query-params",
                      label_visibility="collapsed")
        touch_probe()  # (the browser says whether its pointer is a finger: an iPad calls itself a Mac)
    st.html("<style>.st-key-lang_param { display: none; }</style>")
    if st.session_state.get("language") != current_lang():  # a link, Back/Forward: the picker follows the URL
        st.session_state.language = current_lang()
    st.selectbox("Language / 言語", list(LANGUAGES), format_func=LANGUAGES.get, key="language",
                 on_change=_pick_language)

t = translator()
with st.sidebar:
    st.toggle(t("common.presenter"), key="presenter", help=t("common.presenter_help"), bind="query-params")
    st.radio(t("common.export_format"), ["png", "svg"], format_func=str.upper, key="export_format",
             horizontal=True, help=t("common.export_help"))
    if st.button(t("classroom.start"), help=t("classroom.start_help"), key="class_start") or st.session_state.teacher:
        from ui.shared.classroom import class_sidebar
        class_sidebar(t, start=not st.session_state.teacher)
if st.session_state.presenter:  # fixed markup only (tests/test_bad_input.py checks st.html's arguments)
    st.html(presenter_style())
else:
    st.html(page_style())
if st.session_state.pop("lang_notice", False):
    st.toast(t("common.bad_lang_param"))

PAGES = [
    st.Page("lessons/home.py", title=t("nav.home"), icon=":material/home:", default=True),
    st.Page("lessons/rnn.py", title=t("nav.rnn"), icon=":material/linear_scale:", url_path="rnn"),
    st.Page("lessons/qkv.py", title=t("nav.qkv"), icon=":material/local_library:", url_path="qkv"),
    st.Page("lessons/self_attention.py", title=t("nav.self_attention"), icon=":material/hub:", url_path="self-attention"),
    st.Page("lessons/scaling.py", title=t("nav.scaling"), icon=":material/functions:", url_path="scaling"),
    st.Page("lessons/causal.py", title=t("nav.causal"), icon=":material/change_history:", url_path="causal"),
    st.Page("lessons/glove.py", title=t("nav.glove"), icon=":material/science:", url_path="glove"),
    st.Page("lessons/transformer.py", title=t("nav.transformer"), icon=":material/stacks:", url_path="transformer"),
    st.Page("lessons/pretrained.py", title=t("nav.pretrained"), icon=":material/model_training:", url_path="trained-model"),
    st.Page("lessons/gpt.py", title=t("nav.gpt"), icon=":material/auto_awesome:", url_path="gpt"),
    st.Page("lessons/heads.py", title=t("nav.heads"), icon=":material/science:", url_path="heads"),
    st.Page("lessons/modern.py", title=t("nav.modern"), icon=":material/new_releases:", url_path="modern"),
    st.Page("lessons/tiny_gpt.py", title=t("nav.tiny_gpt"), icon=":material/timeline:", url_path="head-forms"),
    st.Page("lessons/summary.py", title=t("nav.summary"), icon=":material/checklist:", url_path="summary"),
]

page = st.navigation(PAGES, expanded=True)  # all 14 lessons in the sidebar: past 12, Streamlit hides some behind "View more"
follow_history(page.url_path)  # Back to a page left by a link restores its link (ui/shared/links.py says why)
link_params = st.query_params.to_dict()
# A widget that already held a value did not take it from the URL in this run, so a value of it that disappears from
# the URL now (a person went back to a default, a new preset reset a token) is no bad link: only report the others.
held = {name for name in link_params if name in st.session_state}
dropped_now = {}
long_texts = {name: value for name, value in link_params.items() if name in LONG_TEXT_BOXES}  # (a long paste)
short = {name: value for name, value in link_params.items() if name not in long_texts}
# Widgets read the link as it was when the run began, so drop these values and start again without them (reported below)
for name in unusable_link_params(short, MAX_CHARS) + unusable_link_params(long_texts, BOX_CHARS):
    with suppress(StreamlitAPIException):
        st.query_params.pop(name, None)
        dropped_now[name] = link_params[name]
cut_texts = keep_what_is_read({k: v for k, v in link_params.items() if k not in dropped_now})  # (a long paste)
if cut_texts:
    st.session_state.text_cut_notice = cut_texts
if dropped_now or set(cut_texts) & set(link_params):
    st.session_state.dropped_link_params = dropped_now
    st.rerun()
for name, n in st.session_state.pop("text_cut_notice", {}).items():
    st.toast(t("common.text_cut_kept", n=f"{n:,}", limit=MAX_CHARS), icon=":material/content_cut:", duration="long")
try:
    page.run()
    if cut_on_next_run():  # Back/Forward to a link that still held a long paste: one more run cuts it there too
        st.rerun()
except FragmentHandledException:
    raise
except Exception as exc:  # the error boundary: one broken page never shows a traceback
    render_error_boundary(exc, t)
finally:  # also after st.stop(), so a page that stops early still says which link values it ignored
    dropped = list(st.session_state.pop("dropped_link_params", {}).items())
    for name, value in dropped + ignored_link_params(link_params, st.query_params.to_dict(), st.session_state,
                                                                    held):
        st.toast(t("common.bad_link_param", name=md_escape(name[:40]), value=md_escape(value[:40])))
