"""Process start-up: everything the server does once per process, in one place, started by the frame.

``start()`` runs at the top of streamlit_app.py on every script run and does its work on the first one only:
- the runtime fix for resumed sessions (ui/runtime_fixes.py says what it fixes);
- one BLAS thread for the whole process: the lessons' products are small and many students share 2 cores;
- lesson 4's seed-independent table, computed in a background thread while the first visitors read.
``glove()`` is the one process-lifetime resource loaded on first use (a process that serves only pages without
word vectors never pays for it); once loaded, everything alive is moved out of the cyclic GC for good
(``gc.freeze``): .streamlit/config.toml turns off Streamlit's full collection after every run, and Python's own
collections then skip these permanent objects.
"""

from __future__ import annotations

import gc
import threading

import streamlit as st

from attention_core.glove import load_glove
from attention_core.scaling import sweep_table
from ui.runtime_fixes import skip_file_watchers_on_resume

SCALING_TABLE_SEED = 0  # the table is the statistical answer, not one seed's draw: one fixed seed, shared by everyone

_lock = threading.Lock()
_started = False
_table_done = threading.Event()
_table: dict = {}


def start() -> None:
    """Start the process (idempotent: later calls return at once)."""
    global _started
    with _lock:
        if _started:
            return
        _started = True
    skip_file_watchers_on_resume()
    _limit_blas_threads()
    threading.Thread(target=_compute_scaling_table, name="scaling-table", daemon=True).start()


def _limit_blas_threads() -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")  # process-wide, kept for the process's life


def _compute_scaling_table() -> None:
    try:
        _table["table"] = sweep_table(SCALING_TABLE_SEED)
    except Exception as exc:  # noqa: BLE001 - handed to the caller of scaling_table(), whose page shows a message
        _table["error"] = exc
    finally:
        _table_done.set()


def scaling_table() -> dict:
    """The sweep_table columns at SCALING_TABLE_SEED (read-only: shared by every session); waits until computed."""
    start()
    _table_done.wait()
    if "error" in _table:
        raise RuntimeError("the scaling table could not be computed") from _table["error"]
    return _table["table"]


@st.cache_resource(show_spinner=False)
def glove():
    """The GloVe KeyedVectors, loaded once per process (raises GloveUnavailable; pages use ui.common.glove_vectors)."""
    kv = load_glove()
    gc.collect()
    gc.freeze()  # the vectors and every import live as long as the process: later collections skip them
    return kv
