"""Shared Streamlit pieces: the current language, page furniture (header, "What to try", explanations hidden in
presenter mode), CSV downloads and the GloVe vectors (figures: ui/shared/display.py; URL state: ui/shared/links.py; process
start-up: ui/shared/startup.py).

Pages call these so that every lesson looks and behaves the same; no lesson math lives here.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import pickle
import re
from typing import Callable

import streamlit as st

from attention_core.glove import GloveUnavailable
from attention_core.presets import PresetError
from attention_core.text import JapaneseSegmenterUnavailable, has_japanese, tokenize
from ui.shared.i18n import DEFAULT_LANGUAGE, LANGUAGES, Translator
from ui.shared.links import show_stored_choice, url_selectbox
from ui.shared.startup import glove

log = logging.getLogger("attention_app")

MAX_CHARS = 500  # what a page reads of a text (sentence_tokens cuts a longer one, with a notice)
MAX_TOKENS = 40
# What a text box accepts (max_chars, enforced on the server too). Well above MAX_CHARS: a box refuses a longer paste
# whole and silently, so a 10,000-character paste must fit and be cut on the page instead.
BOX_CHARS = 100_000
LONG_TEXT_BOXES = ("rnn_text", "causal_text", "glove_sentence", "transformer_text", "pretrained_text",
                   "gpt_text", "heads_lens_text", "heads_text_text", "heads_name", "heads_text_name", "modern_text",
                   "modern_ja_text", "causal_leak_word", "gpt_name")  # text boxes that take BOX_CHARS


def keep_what_is_read(link_params: dict[str, str]) -> dict[str, int]:
    """Cut each long text box (LONG_TEXT_BOXES) to the MAX_CHARS characters a page reads, in the box and in the link
    -> {box key: its length before}. Called by the frame before the page runs.

    A box accepts a paste of BOX_CHARS (it refuses a longer one whole and silently), but its link must stay short:
    the server refuses a request whose line and headers pass 16 KiB (uvicorn's h11 limit, docs/limits.md), and the
    URL of a 100,000-character paste made the page's reload answer "Invalid HTTP request received.". A typed value is
    cut through session state (Streamlit then writes the cut value into the link); a link's own value, before its
    box is drawn, in st.query_params (the caller reruns: widgets read the link as it was when the run began).
    """
    cut = {}
    for key in LONG_TEXT_BOXES:
        typed = st.session_state.get(key)
        if isinstance(typed, str) and len(typed) > MAX_CHARS:
            st.session_state[key] = typed[:MAX_CHARS]
            cut[key] = len(typed)
            continue
        linked = link_params.get(key)
        if linked is not None and MAX_CHARS < len(linked) <= BOX_CHARS and key not in st.session_state:
            st.query_params[key] = linked[:MAX_CHARS]
            cut[key] = len(linked)
    return cut


def cut_on_next_run() -> bool:
    """True when a long text box holds more than MAX_CHARS after the page ran: Back/Forward to the browser-history
    entry of a paste (Streamlit's browser side writes the paste into the URL before the server cuts it) seeds the box
    from that URL, which wins over session state in that run; the frame then reruns once and keep_what_is_read cuts
    it, in the box and in that entry's URL."""
    return any(len(value) > MAX_CHARS for key in LONG_TEXT_BOXES
               if isinstance(value := st.session_state.get(key), str))


def current_lang() -> str:
    """The language chosen in the sidebar (bound to ?lang=), 'en' or 'ja'."""
    lang = st.session_state.get("lang", DEFAULT_LANGUAGE)
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


def translator() -> Translator:
    """t("section.key", **values) in the current language."""
    return Translator(current_lang())


def glove_vectors(t: Translator):
    """The shared GloVe KeyedVectors, loaded once per process; None (with a message shown) if unavailable."""
    try:
        with st.spinner(t("common.loading_vectors")):
            return glove()
    except GloveUnavailable as exc:
        st.error(t("common.glove_missing", detail=md_escape(str(exc))))
        return None


def presenting() -> bool:
    """True in presenter mode (the sidebar switch, bound to ?presenter=)."""
    return bool(st.session_state.get("presenter", False))


def explanation(text: str, *, caption: bool = False) -> None:
    """Explanatory text for a reader, hidden in presenter mode (the teacher says it): st.markdown, or st.caption."""
    if not presenting():
        (st.caption if caption else st.markdown)(text)


def page_header(t: Translator, section: str, formula: str) -> None:
    """Title, the section's formula in LaTeX, and its short explanation (hidden in presenter mode)."""
    st.title(t(f"{section}.title"))
    st.latex(formula)
    explanation(t(f"{section}.explain"))


TRY_ICON = ":material/lightbulb:"


def what_to_try(t: Translator, section: str, **values) -> None:
    """The lesson's "What to try" box (locales ``<section>.try``), drawn right under the page's controls.

    In presenter mode a class reads a short hint, not a paragraph: ``<section>.try_short`` when the lesson has one.
    """
    key = f"{section}.try_short" if presenting() and t.has(f"{section}.try_short") else f"{section}.try"
    st.info(t(key, **values), icon=TRY_ICON)


def predict_then_reveal(t: Translator, section: str, n_options: int, answer: int | Callable[[], int], key: str,
                        **values) -> bool:
    """Ask locales' ``<section>.predict_q`` with options ``predict_1..n``; True once the learner has answered.

    ``answer`` may be a function: it is called only once the learner has answered, so an experiment that settles the
    question (a model pass) runs only for a learner who asked for it.

    ``values`` fill the question's texts (a page whose question names the learner's own words). The page shows the
    figure that settles the question only after this returns True. The answer lasts for the session
    (``persist_state="session"``): a run that does not draw the question (a sentence the page cannot read) or a visit
    to another page does not erase it.
    """
    def say(k: str) -> str:
        return t(k, **values)

    options = list(range(1, n_options + 1))
    show_stored_choice(key)

    def question_box() -> bool:
        with st.container(border=True):
            choice = st.radio(say(f"{section}.predict_q"), options, index=None,
                              format_func=lambda i: say(f"{section}.predict_{i}"), key=key, persist_state="session")
            held = revealed_in_class = False
            if st.session_state.get("class"):  # in a class (?class=): only then is the class's code imported
                from ui.shared.classroom import pooled_question
                held, revealed_in_class = pooled_question(t, say, section, n_options, key, values, choice)
            if choice is None and not revealed_in_class:
                st.caption(t("common.predict_hint"))
                return False
            if held:  # answered, but the teacher has not revealed it yet
                return False
            _verdict(t, say, section, choice, answer() if callable(answer) else answer)
            return True

    if not st.session_state.get("class"):
        return question_box()  # (alone, an answer shows the figure below it: the whole page reruns)
    # In a class an answer before the reveal changes only the box: it reruns alone (a fraction of the page's run,
    # which a room of students answering at once would each pay); once the box would show the figure, the page reruns.
    shown = {}  # what the page's own run drew below the box (a fragment's rerun compares against it)

    @guarded_fragment  # (its own error boundary: an answer's rerun runs outside the page's)
    def class_box() -> None:
        shows = question_box()
        if "full_run" in shown and shows != shown["full_run"]:
            st.rerun()
        shown.setdefault("full_run", shows)

    class_box()
    return shown.get("full_run", False)  # (nothing if the box failed: its message is shown instead)


def _verdict(t: Translator, say, section: str, choice: int | None, answer: int) -> None:
    """Right, wrong (with the right option), or the answer alone (a teacher who revealed without answering)."""
    gap = "" if t.lang == "ja" else " "  # (Japanese puts no space after 。)
    if choice is None:
        st.info(t("classroom.answer_is", answer=quoted_option(t, say(f"{section}.predict_{answer}")))
                + gap + say(f"{section}.predict_why"))
    elif choice == answer:
        st.success(t("common.predict_right") + gap + say(f"{section}.predict_why"))
    else:
        right = quoted_option(t, say(f"{section}.predict_{answer}"))
        st.warning(t("common.predict_wrong", answer=right) + gap + say(f"{section}.predict_why"))


def quoted_option(t: Translator, label: str) -> str:
    """An option's label as a quotation inside a sentence: its own closing stop dropped, its inner quotes turned
    into the inner pair (“ ” -> ‘ ’ in English, 「」 -> 『』 in Japanese)."""
    label = label.strip().rstrip("。.")
    if t.lang == "ja":
        return "「" + label.replace("「", "『").replace("」", "』") + "」"
    return "“" + label.replace("“", "‘").replace("”", "’") + "”"


def text_limits(t: Translator) -> str:
    """The limits, said where the text is typed (a caption under the box: a phone shows no tooltip)."""
    return t("common.text_limits", chars=MAX_CHARS, tokens=MAX_TOKENS)


def sentence_tokens(t: Translator, text: str, max_tokens: int = MAX_TOKENS) -> list[str] | None:
    """Tokenise user text; None (with a clear message shown) when it is empty. A text over MAX_CHARS, or a sentence
    over ``max_tokens``, is cut to its beginning, with a notice."""
    if len(text) > MAX_CHARS:
        st.info(t("common.text_cut", n=f"{len(text):,}", limit=MAX_CHARS), icon=":material/content_cut:")
        text = text[:MAX_CHARS]
    try:
        tokens = tokenize(text)
    except JapaneseSegmenterUnavailable as exc:
        st.error(t("common.japanese_unavailable", detail=md_escape(str(exc))))
        return None
    if not tokens:
        st.warning(t("common.empty_sentence"))
        return None
    if len(tokens) > max_tokens:
        st.info(t("common.too_many_tokens", n=len(tokens), limit=max_tokens), icon=":material/content_cut:")
        tokens = tokens[:max_tokens]
    if has_japanese(text):  # the learner sees where MeCab put the word boundaries
        st.caption(t("common.japanese_words", n=len(tokens), words=" · ".join(md_escape(w) for w in tokens)))
    return tokens


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|$<>~:^&])")


def md_escape(text: str) -> str:
    """User text -> Markdown that shows it literally (no links, LaTeX, HTML, emphasis or :shortcodes:)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def heatmap_axes(t: Translator) -> tuple[str, str]:
    """(x title, y title) of an attention heat map in the current language."""
    return t("common.axis_key"), t("common.axis_query")


def show_unknown(t: Translator, unknown: list[str]) -> None:
    """A visible note listing the words GloVe does not know (they are left out); tokens that are not English
    (Japanese, "。") get a plain note that the vectors are English-only."""
    from attention_core.glove import non_english

    foreign = set(non_english(unknown))
    english = [w for w in unknown if w not in foreign]
    if english:
        st.caption(t("common.unknown_words", words=t.join(quoted_token(t, w) for w in english)))
    if foreign:
        st.info(t("glove.english_only", words=t.join(quoted_token(t, w) for w in unknown if w in foreign)),
                icon=":material/translate:")


def quoted_token(t: Translator, token: str) -> str:
    """A token in a list, quoted so a token that is itself punctuation reads as one: 「、」 among 「生徒」、「に」."""
    return ("「{}」" if t.lang == "ja" else "“{}”").format(md_escape(token))


def guarded_fragment(func=None, **fragment_kwargs):
    """``@st.fragment`` whose errors show the app's friendly message, not a traceback.

    A widget change inside a fragment reruns only the fragment function, outside the frame's ``page.run()`` and so
    outside its error boundary; this puts the same boundary inside. Use as ``@guarded_fragment`` or
    ``@guarded_fragment(run_every=...)``. st.stop()/st.rerun() still work (they are not ``Exception``s).
    """
    if func is None:
        return lambda f: guarded_fragment(f, **fragment_kwargs)

    @functools.wraps(func)
    def body(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the boundary: log it, show a message, keep the page
            render_error_boundary(exc, translator())
            return None

    return st.fragment(body, **fragment_kwargs)


def bounded_slider(label: str, min_value, max_value, value, *, key: str, container=None, **kwargs):
    """st.slider (on ``container``, default st) whose stored value follows a range that changed.

    A slider whose range depends on the sentence (tokens generated, leak position) keeps its old value in session
    state; a shorter sentence would make Streamlit raise StreamlitValueAboveMaxError. The value is clamped into
    the new range before the widget is drawn, and ``value`` (the default) too.
    """
    current = st.session_state.get(key)
    if isinstance(current, (int, float)) and not isinstance(current, bool) and not min_value <= current <= max_value:
        st.session_state[key] = type(current)(min(max(current, min_value), max_value))
    value = min(max(value, min_value), max_value)
    return (container or st).slider(label, min_value, max_value, value, key=key, **kwargs)


def data_table(data, *, matrix: bool = False, wrap: bool = False, **kwargs):
    """A lesson's table: st.dataframe (sortable, scrollable), or in presenter mode st.table, whose HTML takes the
    projector's larger font and wraps to the column (a zoomed canvas grid would scroll its right-hand columns out of
    sight). The presenter table drops the grid's options (column_config, key). A ``matrix`` (a column per token or
    per feature) stays a grid: numbers cannot wrap, so it scrolls sideways inside its frame. A table of phrases
    (``wrap``: many columns of words, as lesson 8's catalogue) is st.table in every mode, so it wraps to the column."""
    if (presenting() or wrap) and not matrix:
        return st.table(data, hide_index=kwargs.get("hide_index"))
    return st.dataframe(data, **kwargs)


def csv_bytes(table) -> bytes:
    """A CSV (a pandas DataFrame, or CSV text) -> UTF-8 bytes with a byte-order mark.

    The BOM is what makes Excel (Japanese Windows included) read the Japanese tokens and headers as UTF-8. A page
    offers its CSV on every rerun, so a DataFrame's CSV is made once per distinct table (keyed by a hash of its
    pickle, which is cheaper than to_csv).
    """
    if isinstance(table, str):
        return table.encode("utf-8-sig")
    key = hashlib.blake2b(pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL), digest_size=20).hexdigest()
    return _table_csv_bytes(key, table)


@st.cache_data(show_spinner=False, max_entries=512)
def _table_csv_bytes(key: str, _table) -> bytes:
    return _table.to_csv(index=False).encode("utf-8-sig")


def csv_download(label: str, table, file_name: str, key: str, container=None, **kwargs):
    """A CSV download button (``csv_bytes`` of ``table``); downloading does not rerun the page."""
    kwargs.setdefault("icon", ":material/download:")
    kwargs.setdefault("on_click", "ignore")
    return (container or st).download_button(label, csv_bytes(table), file_name=file_name, mime="text/csv", key=key,
                                             **kwargs)


def render_error_boundary(exc: BaseException, t: Translator) -> None:
    """A friendly message instead of a traceback; the details go to the server log.

    A malformed preset file is the one failure the person running the server can fix, so its message names
    the file and the field (attention_core.presets.PresetError says both).
    """
    if isinstance(exc, PresetError):
        log.error("broken preset file: %s", exc)
        st.error(t("common.bad_preset", detail=md_escape(str(exc))), icon=":material/error:")
        return
    if isinstance(exc, GloveUnavailable):  # damaged vectors found only when a row is used
        log.error("GloVe unavailable: %s", exc)
        st.error(t("common.glove_missing", detail=md_escape(str(exc))), icon=":material/error:")
        return
    log.exception("page failed: %s", exc)
    st.error(t("common.page_error", kind=type(exc).__name__), icon=":material/error:")


OWN_TEXT = "custom"  # the picker's option for the learner's own text (in links: ?<key>_preset=custom)


def preset_or_own_text(t, section: str, key: str, labels, presets, *, own_caption: str | None = None,
                       caption: str | None = None) -> str:
    """A preset (shown by its label) or the learner's own text, cut to MAX_CHARS with a notice -> the text a page reads.

    The widgets are ``<key>_preset`` (in the link) and ``<key>_text`` (bound to the link); their labels are the
    section's ``preset``, ``own`` and ``text`` strings. ``own_caption`` goes under the text box, ``caption`` under both.
    """
    options = [str(i) for i in range(len(presets))] + [OWN_TEXT]
    c_preset, c_text = st.columns(2)
    with c_preset:
        choice = url_selectbox(t(f"{section}.preset"), options, f"{key}_preset",
                               format_func=lambda o: t(f"{section}.own") if o == OWN_TEXT else labels[int(o)])
    if choice == OWN_TEXT:
        text = c_text.text_input(t(f"{section}.text"), value=presets[0], max_chars=BOX_CHARS, key=f"{key}_text",
                                 bind="query-params")
        if own_caption:
            c_text.caption(own_caption)
    else:
        text = presets[int(choice)]
    if caption:
        st.caption(caption)
    if len(text) > MAX_CHARS:  # a long paste is read on its beginning, as on every page
        st.info(t("common.text_cut", n=f"{len(text):,}", limit=MAX_CHARS), icon=":material/content_cut:")
        text = text[:MAX_CHARS]
    return text
