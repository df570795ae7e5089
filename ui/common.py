"""Shared Streamlit pieces: the current language, page furniture, figures, and the cached GloVe vectors.

Pages call these so that every lesson looks and behaves the same; no lesson math lives here.
"""

from __future__ import annotations

import logging
import re

import streamlit as st
from threadpoolctl import threadpool_limits

from attention_core.glove import GloveUnavailable, load_glove
from attention_core.text import tokenize
from ui.i18n import DEFAULT_LANGUAGE, LANGUAGES, Translator

log = logging.getLogger("attention_app")

# One BLAS thread per computation: the server runs many small products for many students at once on
# 2 cores, where BLAS's own threads only oversubscribe (a training run took 6-8 s with 2 threads, 0.1 s with 1).
threadpool_limits(limits=1, user_api="blas")

MAX_CHARS = 500  # enforced by Streamlit on the server too (text_input max_chars)
MAX_TOKENS = 40

PLOTLY_CONFIG = {
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


def current_lang() -> str:
    """The language chosen in the sidebar (bound to ?lang=), 'en' or 'ja'."""
    lang = st.session_state.get("lang", DEFAULT_LANGUAGE)
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


def translator() -> Translator:
    """t("section.key", **values) in the current language."""
    return Translator(current_lang())


@st.cache_resource(show_spinner=False)
def _glove():
    return load_glove()


def glove_vectors(t: Translator):
    """The shared GloVe KeyedVectors, loaded once per process; None (with a message shown) if unavailable."""
    try:
        with st.spinner(t("common.loading_vectors")):
            return _glove()
    except GloveUnavailable as exc:
        st.error(t("common.glove_missing", detail=str(exc)))
        return None


def page_header(t: Translator, section: str, formula: str) -> None:
    """Title, the section's formula in LaTeX, and its short explanation (hidden in presenter mode)."""
    st.title(t(f"{section}.title"))
    st.latex(formula)
    if not st.session_state.get("presenter", False):
        st.markdown(t(f"{section}.explain"))


def what_to_try(t: Translator, section: str) -> None:
    st.info(t(f"{section}.try"), icon=":material/lightbulb:")


def predict_then_reveal(t: Translator, section: str, n_options: int, answer: int, key: str) -> bool:
    """Ask locales' ``<section>.predict_q`` with options ``predict_1..n``; True once the learner has answered.

    The page shows the figure that settles the question only after this returns True.
    """
    options = list(range(1, n_options + 1))
    with st.container(border=True):
        choice = st.radio(
            t(f"{section}.predict_q"),
            options,
            index=None,
            format_func=lambda i: t(f"{section}.predict_{i}"),
            key=key,
        )
        if choice is None:
            st.caption(t("common.predict_hint"))
            return False
        if choice == answer:
            st.success(t("common.predict_right") + " " + t(f"{section}.predict_why"))
        else:
            st.warning(t("common.predict_wrong") + " " + t(f"{section}.predict_why"))
        return True


def sentence_tokens(t: Translator, text: str, max_tokens: int = MAX_TOKENS) -> list[str] | None:
    """Tokenise user text; None (with a clear message shown) when it is empty or too long."""
    tokens = tokenize(text)
    if not tokens:
        st.warning(t("common.empty_sentence"))
        return None
    if len(tokens) > max_tokens:
        st.warning(t("common.too_many_tokens", n=len(tokens), limit=max_tokens))
        return None
    return tokens


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|$<>~:^&])")


def md_escape(text: str) -> str:
    """User text -> Markdown that shows it literally (no links, LaTeX, HTML, emphasis or :shortcodes:)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def heatmap_axes(t: Translator) -> tuple[str, str]:
    """(x title, y title) of an attention heat map in the current language."""
    return t("common.axis_key"), t("common.axis_query")


def show_unknown(t: Translator, unknown: list[str]) -> None:
    """A visible note listing the words GloVe does not know (they are left out)."""
    if unknown:
        st.caption(t("common.unknown_words", words=", ".join(md_escape(w) for w in unknown)))


PRESENTER_FONT_SIZE = 20


def presenter_style() -> str:
    """CSS for presenter mode: bigger text and controls for a projector (theme colours untouched)."""
    return """<style>
    .stApp { font-size: 1.3rem; }
    .stApp [data-testid="stMarkdownContainer"] p, .stApp [data-testid="stMarkdownContainer"] li { font-size: 1.3rem; }
    .stApp h1 { font-size: 3.6rem; }
    .stApp h2, .stApp h3 { font-size: 2rem; }
    .stApp .katex { font-size: 1.6em; }
    .stApp [data-testid="stWidgetLabel"] p { font-size: 1.2rem; }
    </style>"""


def show_plotly(fig, key: str, **kwargs):
    """st.plotly_chart with the app's export config (PNG/SVG); bigger fonts in presenter mode; kwargs pass through."""
    if st.session_state.get("presenter", False):
        fig.update_layout(font=dict(size=PRESENTER_FONT_SIZE))
        if fig.layout.height:
            fig.update_layout(height=int(fig.layout.height * 1.2))
    image_format = st.session_state.get("export_format", "png")
    config = {**PLOTLY_CONFIG, "toImageButtonOptions": {"format": image_format, "filename": key, "scale": 2}}
    return st.plotly_chart(fig, key=key, config=config, **kwargs)


def render_error_boundary(exc: BaseException, t: Translator) -> None:
    """A friendly message instead of a traceback; the details go to the server log."""
    log.exception("page failed: %s", exc)
    st.error(t("common.page_error", kind=type(exc).__name__), icon=":material/error:")
