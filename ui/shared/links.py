"""Shareable links, the app's URL state: the one URL-bound choice widget (``url_selectbox``), the shown choice kept in
step with the stored one (``show_stored_choice``), and which query parameters of a link were not usable (pure).

Streamlit's own internals used here (Back/Forward, re-sending a value) come from ui.shared.streamlit_compat.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

import streamlit as st

from ui.shared.streamlit_compat import history_navigation, resend_widget_value, sent_query_params

FRAME_PARAMS = {"lang", "presenter", "class", "seat", "teacher"}  # handled by the frame itself (class: ui/shared/classroom.py)


def _as_url_text(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def ignored_link_params(before: Mapping[str, str], after: Mapping[str, str], state: Mapping[str, object],
                        held: Collection[str] = ()) -> list[tuple[str, str]]:
    """(param, value) pairs a link carried that the page dropped as invalid.

    Only a value the page read from the URL in this run can be a bad link: ``held`` names the parameters whose
    widget already had a value when the run began (set by a person, or by the app: a preset that resets its
    token), so a drop of theirs is a return to a default, never a link. Streamlit also removes a bound parameter
    when its value equals the widget's default; that is not worth a notice either, so a dropped parameter whose
    value the widget now holds is not reported.
    """
    ignored = []
    for name, value in before.items():
        if name in FRAME_PARAMS or name in after or name in held:
            continue
        if name in state and _as_url_text(state[name]).lower() == str(value).lower():
            continue
        ignored.append((name, str(value)))
    return ignored


def unusable_link_params(params: Mapping[str, str], max_chars: int) -> list[str]:
    """Names of the page's link parameters no widget can take: longer than ``max_chars``, or an infinite number.

    The frame drops them before the page runs: Streamlit 1.67 raises OverflowError when it reads an infinite
    value into an integer number_input, and no widget of the app holds more than ``max_chars`` characters
    (a bound text_input does not apply its max_chars to the value it reads from the URL).
    """
    unusable = []
    for name, value in params.items():
        if name in FRAME_PARAMS:
            continue  # the frame reads these itself and falls back on anything it does not know
        text = str(value)
        try:
            infinite = math.isinf(float(text))
        except (ValueError, OverflowError):
            infinite = False
        if len(text) > max_chars or len(name) > max_chars or infinite:
            unusable.append(name)
    return unusable


# ---------------------------------------------------------------- the URL state of a page's choices

FULL_RUN = "_full_run"  # counted by the frame (streamlit_app.py): one per full script run; fragment reruns do not count
_SHOWN = "_choice_shown"  # widget key -> (language, full run) of its last drawing


def show_stored_choice(key: str) -> None:
    """Call right before drawing a radio/selectbox ``key``: the browser then shows the choice the page computes with.

    Streamlit 1.67 keeps such a widget's value in the browser as the option's *label*. After a language switch that
    label is no longer among the (translated) options, so the browser shows no selection while the server keeps the
    option; and a widget that comes back after a run that did not draw it (a page that stopped early: empty sentence)
    mounts at its default (``index=None``: nothing) while the server keeps the old answer. In both cases the stored
    value is assigned again, which makes Streamlit send it with the widget, labelled in the current language.
    """
    state = st.session_state
    now = (state.get("lang"), state.get(FULL_RUN, 0))  # (the frame's language box: the labels' language)
    shown = state.setdefault(_SHOWN, {})
    last = shown.get(key)
    if key in state and last is not None and (last[0] != now[0] or last[1] < now[1] - 1):
        resend_widget_value(key)
    shown[key] = now


URL_NONE = "none"  # how url_selectbox writes "nothing chosen" (allow_none=True) in a link


def url_selectbox(label: str, options, key: str, format_func=str, default=None, *, widget=None,
                  allow_none: bool = False, **kwargs):
    """A selectbox (or ``widget=st.radio``, ``st.segmented_control``, a column's ``.selectbox``) whose choice lives
    in the link as ``?<key>=<option id>``: the one way the app binds a choice among options to the URL.

    Streamlit's ``bind="query-params"`` stores the formatted, translated label; this stores ``str(option)``, a
    stable id, so a link opens the same choice in either language. On the first run of ``key`` (not yet in
    session state) the link decides: an invalid value falls back to ``default`` and is dropped from the URL, and
    the frame then shows ``common.bad_link_param``. A stored value that is no longer an option (the options
    changed: the words of a new sentence) also falls back to ``default``. After the widget is drawn, its id is
    written to the URL, or removed at the default. Like a bound widget, the choice outlives a visit to another page
    (``persist_state="session"``).
    Callbacks may still set ``st.session_state[key]`` before this call as usual. On Back/Forward the URL decides
    again (as Streamlit does for bound widgets), and ``show_stored_choice`` keeps the shown choice in step.
    """
    options = list(options)
    default = options[0] if default is None else default
    ids = {str(option): option for option in options}
    allowed = lambda v: v in options or (allow_none and v is None)  # noqa: E731
    from_history = history_navigation()
    if key not in st.session_state or from_history:
        raw = st.query_params.get(key)
        if raw is not None and (raw in ids or (allow_none and raw == URL_NONE)):
            st.session_state[key] = ids.get(raw)
        else:  # (Back to an entry without the parameter: that view had the default)
            st.session_state[key] = default
            if raw is not None:
                st.query_params.pop(key, None)
    elif not allowed(st.session_state[key]):
        st.session_state[key] = default
    show_stored_choice(key)
    kwargs.setdefault("persist_state", "session")  # back on the page later, the choice is still there (as bound ones)
    value = (widget or st.selectbox)(label, options, key=key, format_func=format_func, **kwargs)
    wanted = None if value == default else (URL_NONE if value is None else str(value))
    if wanted is None:
        st.query_params.pop(key, None)
    elif st.query_params.get(key) != wanted:
        st.query_params[key] = wanted
    choices = st.session_state.setdefault(_CHOICES, {}).setdefault(st.session_state.get(_PAGE), {})
    if wanted is None:  # (the page's link as the choices wrote it, for follow_history)
        choices.pop(key, None)
    else:
        choices[key] = wanted
    return value


_PAGE = "_url_page"  # url_path of the page the last full run drew
_CHOICES = "_url_choices"  # url_path -> {key: id}: the url_selectbox choices in that page's link
_LEFT = "_url_left"  # url_path -> (query of the history entry Streamlit added on leaving it, the page's link then)


def follow_history(page_path: str) -> None:
    """The frame calls this once per full run, before the page runs (it may ``st.rerun()``).

    Following a sidebar link, Streamlit 1.67's browser carries the bound parameters to the next page; the server
    drops those bound on the page left and says so *before* the next page's URL is pushed, so the browser pushes one
    more history entry: the page left, without its parameters. Back from the next page lands there and the page
    opens at its defaults. So when a link leaves a page and Streamlit dropped parameters, the page's link is kept (the
    bound values the browser sent, and its url_selectbox choices); a Back/Forward onto that very entry writes the link
    back (in such a run the browser replaces the entry's URL, it adds none) and runs again, so every widget reads it.
    """
    state = st.session_state
    last, state[_PAGE] = state.get(_PAGE), page_path
    if last is None or last == page_path:
        return
    now = st.query_params.to_dict()
    left = state.setdefault(_LEFT, {})
    if not history_navigation():
        sent = sent_query_params()
        if sent != now:  # parameters of the page left were dropped: the browser added an entry without them
            left[last] = (now, {**sent, **state.get(_CHOICES, {}).get(last, {})})
        else:
            left.pop(last, None)
        return
    entry = left.pop(page_path, None)
    if entry is not None and entry[0] == now and entry[1] != now:
        st.query_params.from_dict(entry[1])
        st.rerun()
