"""Process start-up: everything the server does once per process, in one place, started by the frame.

``start()`` runs at the top of streamlit_app.py on every script run and does its work on the first one only:
- the runtime fix for resumed sessions (ui/shared/streamlit_compat.py says what it fixes);
- one BLAS thread for the whole process: the lessons' products are small and many students share 2 cores;
- in one background thread, while the first visitors read: the work lessons register with
  ``register_startup(name, fn)`` (each lesson's ui module, imported by that thread in ``STARTUP_MODULES`` order:
  lesson 8's results on its built-in sentences, lesson 4's seed-independent table, then lesson 9's shared results
  and default prompt), run in registration
  order, then everything alive moved out of the cyclic GC (``gc.freeze``, as below); Streamlit's emoji pattern is
  compiled first. ``register_startup`` returns the work's ``Background``: a page that asks for its value before it
  is ready waits for the same computation (started then if need be).
``glove()`` is the one process-lifetime resource loaded on first use (a process that serves only pages without
word vectors never pays for it); once loaded, everything alive is moved out of the cyclic GC for good
(``gc.freeze``): .streamlit/config.toml turns off Streamlit's full collection after every run, and Python's own
collections then skip these permanent objects.
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from typing import Any, Callable

import streamlit as st

from attention_core.glove import load_glove
from ui.shared.streamlit_compat import compile_emoji_pattern, freeze_process_objects, skip_file_watchers_on_resume

STARTUP_MODULES = ("ui.pretrained.page", "ui.scaling", "ui.gpt.circuits", "ui.gpt.rounding", "ui.heads.study",
                   "ui.heads.referent")  # the ui modules that register start-up work, in this order


class Background:
    """One value computed at most once per process, in a daemon thread; ``result()`` waits for it.

    ``start()`` and ``result()`` may be called from any thread, any number of times: the first call starts the
    computation, every caller waits for that one. A computation that raised is tried again by the next call
    (e.g. lesson 8's model package installed after a failed start); one that succeeded never runs again.
    """

    def __init__(self, name: str, compute: Callable[[], Any]):
        self.name = name
        self._compute = compute
        self._lock = threading.Lock()
        self._attempt: _Attempt | None = None
        self.runs = 0  # how many times the computation was started (read by the tests)

    def start(self) -> None:
        """Start the computation unless it is running or done (returns at once)."""
        self._current()

    def ready(self) -> bool:
        """True once the value is computed (result() then returns at once)."""
        attempt = self._attempt
        return attempt is not None and attempt.done.is_set() and attempt.error is None

    def wait(self, timeout: float) -> bool:
        """Start the computation if need be, wait at most `timeout` seconds -> whether it has finished (or failed)."""
        return self._current().done.wait(timeout)

    def result(self) -> Any:
        """-> the value, computed in the background (started here if need be); raises what the computation raised."""
        attempt = self._current()
        attempt.done.wait()
        if attempt.error is not None:
            raise attempt.error
        return attempt.value

    def _current(self) -> _Attempt:
        with self._lock:
            attempt = self._attempt
            if attempt is None or (attempt.done.is_set() and attempt.error is not None):
                attempt = self._attempt = _Attempt()
                self.runs += 1
                threading.Thread(target=self._run, args=(attempt,), name=self.name, daemon=True).start()
            return attempt

    def _run(self, attempt: _Attempt) -> None:
        try:
            attempt.value = self._compute()
        except Exception as exc:  # noqa: BLE001 - handed to every caller of result(), whose page shows a message
            attempt.error = exc
        finally:
            attempt.done.set()


class _Attempt:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: Exception | None = None




_lock = threading.Lock()
_started = False
_registered: dict[str, Background] = {}


def register_startup(name: str, compute: Callable[[], Any]) -> Background:
    """Register work for the start-up thread (run in registration order) -> its Background (``.result()`` waits for
    it). Registering a name again returns the first registration's Background (a module imported twice)."""
    with _lock:
        if name not in _registered:
            _registered[name] = Background(name, compute)
        return _registered[name]


def registered() -> list[Background]:
    """-> the registered work, in registration order."""
    with _lock:
        return list(_registered.values())


def start() -> None:
    """Start the process (idempotent: later calls return at once)."""
    global _started
    with _lock:
        if _started:
            return
        _started = True
    skip_file_watchers_on_resume()
    _limit_blas_threads()
    threading.Thread(target=_precompute, name="precompute", daemon=True).start()


def _precompute() -> None:
    """One after the other, so they never take both cores from the first visitors; each is shared with any page
    that asks for it first (Background.result)."""
    compile_emoji_pattern()  # here, not on a student's first non-ASCII alert (a lesson's answer)
    for module in STARTUP_MODULES:  # importing a lesson's ui module registers its work
        with contextlib.suppress(Exception):  # noqa: BLE001 - that page shows its own message when it runs
            importlib.import_module(module)
    for background in registered():
        try:
            background.result()
        except Exception:  # noqa: BLE001 - the page that needs it shows the message (lesson 8 without its package)
            pass
    freeze_process_objects()  # the imports and these results live as long as the process: a run never sweeps them


def _limit_blas_threads() -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")  # process-wide, kept for the process's life


@st.cache_resource(show_spinner=False)
def glove():
    """The GloVe KeyedVectors, loaded once per process (raises GloveUnavailable; pages use ui.shared.common.glove_vectors)."""
    kv = load_glove()
    freeze_process_objects()  # the vectors and every import live as long as the process: later collections skip them
    return kv
