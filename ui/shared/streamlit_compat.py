"""Every use of Streamlit's and Plotly's internals, in one place: what pins streamlit==1.67.0.

Each function below leans on something that is not public API (a private module, an attribute of an internal
object, a behaviour of 1.67's browser side) and says which. tests/test_streamlit_compat.py holds a tripwire for each:
it fails, naming the internal, when an upgrade changes its shape. CONTRIBUTING.md ("Upgrading Streamlit") lists these
and the other places that depend on 1.67 (bench/'s protocol client, the browser tests' message reader).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc

import streamlit as st
from plotly.basedatatypes import BaseFigure
from streamlit.errors import FragmentHandledException  # noqa: F401 - the frame re-raises it (see below)

STREAMLIT_VERSION = "1.67.0"  # the version every function here was read against (requirements.txt pins it)

# FragmentHandledException: st.fragment raises it after showing a fragment's error itself; the frame's error boundary
# (streamlit_app.py) lets it pass so the error is not shown twice. Imported from here so the frame names no internal.


# ---------------------------------------------------------------- the server's runtime

def skip_file_watchers_on_resume() -> None:
    """Make ``AppSession.register_file_watchers`` a no-op while server.fileWatcherType is "none" (idempotent).

    A resumed session (a browser whose websocket dropped and came back: a classroom's Wi-Fi, a laptop waking up) gets
    file watchers again even with ``server.fileWatcherType = none``, where new sessions get none
    (streamlit/runtime/websocket_session_manager.py calls ``AppSession.register_file_watchers`` unconditionally on
    resume; app_session.py checks the option only in ``__init__``). Its next run then walks every module in
    sys.modules for paths to watch (``LocalSourcesWatcher.update_watched_modules``, per reconnect; docs/performance.md
    has the numbers), so a class reconnecting at once waits on one another. With the option at ``none``
    (production, bench/, the Dockerfile) a resumed session now skips the watchers as a new one does; with any other
    value (development) nothing changes. Internal: the method ``AppSession.register_file_watchers(self)``.
    """
    from streamlit import config
    from streamlit.runtime.app_session import AppSession

    original = AppSession.register_file_watchers
    if getattr(original, "skips_when_watching_is_off", False):
        return

    def register_file_watchers(self) -> None:
        if config.get_option("server.fileWatcherType") == "none":
            return
        original(self)

    register_file_watchers.skips_when_watching_is_off = True
    register_file_watchers.__doc__ = original.__doc__
    AppSession.register_file_watchers = register_file_watchers


def compile_emoji_pattern() -> None:
    """Compile Streamlit's emoji pattern now (start-up), not on the first alert whose text is not ASCII (a student's
    run). Internal: the private module ``streamlit.emojis`` compiles it on import; gone in a later version, no harm."""
    with contextlib.suppress(ImportError):
        import streamlit.emojis  # noqa: F401


def freeze_process_objects() -> None:
    """Collect once, then move everything alive out of the cyclic GC for good (``gc.freeze``).

    .streamlit/config.toml sets ``runner.postScriptGC = false`` (Streamlit's full ``gc.collect()`` after every run);
    Python's own collections then skip these permanent objects (imports, vectors, start-up results). Relies on the
    config option ``runner.postScriptGC`` keeping its name and meaning.
    """
    gc.collect()
    gc.freeze()


def return_freed_memory() -> None:
    """Hand the heap's freed pages back to the system (glibc's ``malloc_trim``; elsewhere nothing): glibc keeps them,
    and half of a large array freed (lesson 8's untrained copy) would stay in the process's memory for good."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


# ---------------------------------------------------------------- widget state and the URL

def history_navigation() -> bool:
    """True in the run the browser's Back/Forward started (the URL then decides every linked choice).

    Internal: ``get_script_run_ctx()`` (streamlit.runtime.scriptrunner) and its ``is_history_navigation``, set from
    the ClientState the 1.67 frontend sends on ``popstate``. Streamlit uses it itself to re-seed bound widgets from
    the URL; ui.shared.links.url_selectbox does the same for the choices it binds.
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.is_history_navigation)


def sent_query_params() -> dict[str, str]:
    """The query parameters the browser sent for this run (last value per name), before Streamlit dropped any.

    Internal: ``ScriptRunContext.query_string``, set from the run's ClientState by ``ctx.reset`` after
    ``QueryParams.populate_from_query_string`` has filtered ``st.query_params`` on a page change (another page's bound
    parameters removed); any write to st.query_params replaces it, so read it before the run writes the URL.
    """
    from urllib.parse import parse_qsl

    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return dict(parse_qsl(ctx.query_string, keep_blank_values=True)) if ctx is not None else {}


def resend_widget_value(key: str) -> None:
    """Make this run send widget ``key``'s stored value to the browser with the widget (a no-op for the server).

    Behaviour relied on: in 1.67 assigning ``st.session_state[key]`` (even its own value) marks the widget's value as
    set by code, and the next drawing of the widget carries it to the browser (``set_value``); the browser otherwise
    keeps the option's *label* it last showed (ui.shared.links.show_stored_choice says when that goes wrong).
    """
    state = st.session_state
    state[key] = state[key]


# ---------------------------------------------------------------- figures

class SentAsIs(BaseFigure):
    """A figure dict st.plotly_chart sends as it is. Given a dict, st.plotly_chart (through
    plotly.tools.return_figure_from_figure_or_data) validates it as a go.Figure on every rerun; given a BaseFigure it
    sends ``to_dict()``, which on a go.Figure deep-copies the whole figure on every rerun. Both are public paths and
    both cost many times the JSON encoding itself. This BaseFigure's to_dict() is the dict; the figure API is not set
    up (BaseFigure.__init__ would build an empty figure) and nothing else is read from it. Internal: st.plotly_chart
    accepts a BaseFigure and reads only ``to_dict()`` from it. Every builder's dict is validated by Plotly in
    tests/test_all_charts.py.
    """

    def __init__(self, spec: dict):  # noqa: D107 - no super().__init__() on purpose, see the class docstring
        self._spec = spec

    def to_dict(self) -> dict:
        return self._spec
