"""Process start-up: everything the server does once per process, in one place, started by the frame.

``start()`` runs at the top of streamlit_app.py on every script run and does its work on the first one only:
- the runtime fix for resumed sessions (ui/streamlit_compat.py says what it fixes);
- one BLAS thread for the whole process: the lessons' products are small and many students share 2 cores;
- in one background thread, while the first visitors read: lesson 8's results on its built-in sentences for the
  trained model (its page needs them on opening), then for the untrained twin (whose weights live only while they
  are computed, early, before a class's pages fill the memory), lesson 4's seed-independent table, then everything
  alive moved out of the cyclic GC (``gc.freeze``, as below); Streamlit's emoji pattern is compiled first. A page
  that asks for one of them before it is ready waits for the same computation (started then if need be).
``glove()`` is the one process-lifetime resource loaded on first use (a process that serves only pages without
word vectors never pays for it); once loaded, everything alive is moved out of the cyclic GC for good
(``gc.freeze``): .streamlit/config.toml turns off Streamlit's full collection after every run, and Python's own
collections then skip these permanent objects.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

import streamlit as st

from attention_core.glove import load_glove
from attention_core.scaling import sweep_table
from ui.streamlit_compat import (
    compile_emoji_pattern, freeze_process_objects, return_freed_memory, skip_file_watchers_on_resume,
)

if TYPE_CHECKING:
    from attention_core.pretrained_sets import SetResults

SCALING_TABLE_SEED = 0  # the table is the statistical answer, not one seed's draw: one fixed seed, shared by everyone
PRETRAINED_TWIN_SEED = 0  # lesson 8's control: one seeded twin, the same for every session


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


def _scaling_table() -> dict:
    return sweep_table(SCALING_TABLE_SEED)


def _pretrained_results(twin: bool) -> SetResults:
    # imported here, in the thread: the first page does not wait for these modules
    from attention_core.pretrained import build_twin, load_model
    from attention_core.pretrained_sets import load_pretrained_sets, set_results

    if not twin:
        return set_results(load_model(), load_pretrained_sets())
    model = build_twin(PRETRAINED_TWIN_SEED)
    results = set_results(model, load_pretrained_sets())
    del model  # the twin's weights (~86 MB) live only while its results are made
    return_freed_memory()  # (glibc would keep half of the twin's weights in the process's memory for good)
    return results


_lock = threading.Lock()
_started = False
SCALING_TABLE = Background("scaling-table", _scaling_table)
TRAINED_RESULTS = Background("pretrained-trained", lambda: _pretrained_results(twin=False))
TWIN_RESULTS = Background("pretrained-twin", lambda: _pretrained_results(twin=True))


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
    for background in (TRAINED_RESULTS, TWIN_RESULTS, SCALING_TABLE):  # the twin early, before a class's pages fill
        # the memory; lesson 8 asks for the trained model's on opening
        try:
            background.result()
        except Exception:  # noqa: BLE001 - the page that needs it shows the message (lesson 8 without its package)
            pass
    freeze_process_objects()  # the imports and these results live as long as the process: a run never sweeps them


def _limit_blas_threads() -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")  # process-wide, kept for the process's life


def scaling_table() -> dict:
    """The sweep_table columns at SCALING_TABLE_SEED (read-only: shared by every session); waits until computed."""
    start()
    try:
        return SCALING_TABLE.result()
    except Exception as exc:
        raise RuntimeError("the scaling table could not be computed") from exc


def trained_results() -> SetResults:
    """Lesson 8's trained model on its built-in sets (read-only: shared by every session); waits until computed.
    Raises what computing them raised (ModelUnavailable without the model package, PresetError for a broken file)."""
    start()
    return TRAINED_RESULTS.result()


def twin_results() -> SetResults:
    """The same for the untrained twin (PRETRAINED_TWIN_SEED)."""
    start()
    return TWIN_RESULTS.result()


@st.cache_resource(show_spinner=False)
def glove():
    """The GloVe KeyedVectors, loaded once per process (raises GloveUnavailable; pages use ui.common.glove_vectors)."""
    kv = load_glove()
    freeze_process_objects()  # the vectors and every import live as long as the process: later collections skip them
    return kv
