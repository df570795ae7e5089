"""The scaling lesson's cached computations, defined once per process (not re-created by every page run).

The table over every d is seed-independent, so it is computed once per process, off the script thread:
``start_table()`` is called by the app's frame on its first run (streamlit_app.py), so its ~2 s of NumPy run in a
background thread while the first visitors read; a learner who reveals the table later finds it done. ``table()``
waits for it (and starts it if nobody has): a plain thread and a module-level result.
"""

from __future__ import annotations

import threading

import streamlit as st

from attention_core.scaling import (
    DIM_CHOICES, NEXT_WORD_SCORES, SAMPLE_COUNT, TEMPERATURE_CHOICES, density_histogram, logit_variance, normal_curve,
    prefix_weights, random_query_keys, sampling_sweep, score_sample, softmax_inputs, sweep_table,
)

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


@st.cache_data(show_spinner=False, max_entries=64)
def raw_scores(d: int, n_keys: int, seed: int):
    """(draws, n_keys) q . k of the histogram's draws; the toggle and tau only rescale them (softmax_inputs)."""
    return score_sample(d, n_keys, seed, scale=False)


@st.cache_data(show_spinner=False, max_entries=64)
def histogram_data(d: int, n_keys: int, seed: int, scale: bool, tau: float) -> dict:
    z = softmax_inputs(raw_scores(d, n_keys, seed), d, scale, tau)
    edges, density, counts = density_histogram(z)
    curve_x, curve_y = normal_curve(edges[0], edges[-1], logit_variance(d, scale, tau))
    return dict(edges=edges, density=density, counts=counts, curve_x=curve_x, curve_y=curve_y, n=z.size,
                draws=z.shape[0], var=float(z.var()), sd=float(z.std()), lo=float(z.min()), hi=float(z.max()))


@st.cache_data(show_spinner=False, max_entries=64)
def nested_weights(n_keys: int, seed: int, tau: float) -> dict:
    """{False: (9, n_keys) unscaled, True: scaled} weights of one query at every d of DIM_CHOICES."""
    q, K = random_query_keys(n_keys, seed)
    return {scale: prefix_weights(q, K, DIM_CHOICES, scale, tau) for scale in (False, True)}


@st.cache_data(show_spinner=False, max_entries=1)
def sampling() -> dict:
    """The next-word probabilities, entropies and samples at every tau of TEMPERATURE_CHOICES (seed 0)."""
    return sampling_sweep(NEXT_WORD_SCORES, TEMPERATURE_CHOICES, SAMPLE_COUNT, seed=0)
