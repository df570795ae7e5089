"""The scaling lesson's table over every d: seed-independent, so computed once per process, off the script thread.

``start_table()`` is called by the app's frame on its first run (streamlit_app.py), so the ~2 s of NumPy run in a
background thread while the first visitors read; a learner who reveals the table later finds it done. ``table()``
waits for it (and starts it if nobody has). No Streamlit here: a plain thread and a module-level result.
"""

from __future__ import annotations

import threading

from attention_core.scaling import sweep_table

TABLE_SEED = 0  # the table is the statistical answer, not one seed's draw: one fixed seed, shared by everyone

_lock = threading.Lock()
_done = threading.Event()
_thread: threading.Thread | None = None
_result: dict = {}


def _compute() -> None:
    try:
        _result["table"] = sweep_table(TABLE_SEED)
    except Exception as exc:  # noqa: BLE001 - handed to the caller of table(), who shows the page's error message
        _result["error"] = exc
    finally:
        _done.set()


def start_table() -> None:
    """Start computing the table in a daemon thread, once per process (later calls do nothing)."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_compute, name="scaling-table", daemon=True)
            _thread.start()


def table_ready() -> bool:
    return _done.is_set()


def table() -> dict:
    """The sweep_table columns at TABLE_SEED (read-only: shared by every session); waits until they are computed."""
    start_table()
    _done.wait()
    if "error" in _result:
        raise RuntimeError("the scaling table could not be computed") from _result["error"]
    return _result["table"]
