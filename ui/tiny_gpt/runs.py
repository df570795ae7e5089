"""Watch a head form: the runs, shared by every session. The settings the page offers (every choice of its
controls, layers 1-2 x heads 1-2 x the five learning rates, at seeds 0-2, and, without snapshots, the seeds of the
seed section) are trained once per machine and kept on disk (attention_core.tiny_gpt.store); any other setting is the
learner's own run, trained when they press the button and kept in memory. Either way one run per setting at a time
(single flight): a second session asking for a run in progress follows its progress bar. A run trains in a child
process (worker.py: at a lower CPU priority, a few at a time per server process, the others queued with their place
shown, never refused), watched from the script thread of the session that started it, so a learner who leaves
(another page, a closed tab, a changed control) stops it at its next progress update: the child is killed at once, no
process is left running and nothing half-done is kept.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

import numpy as np
import streamlit as st
from threadpoolctl import threadpool_limits

from attention_core.tiny_gpt import Config, Run, cached_run, eval_set, formation_step, measure, plateau_loss, run_path
from ui.tiny_gpt.worker import Queued, TrainingFailed, trainer

S = "tiny_gpt"
DEFAULT = Config()  # the page's default run: 2 layers x 2 heads
EVERY = 25  # steps between two measurements (and two snapshots of the weights)
DEFAULT_SEEDS = (0, 1, 2)  # offered by default: trained once per machine, kept on disk
SEEDS = 10  # the seed section's runs of the default configuration
LEARNING_RATES = (0.003, 0.005, 0.01, 0.02, 0.03)
TOKEN_NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ#$%&@*"  # the 32 tokens, written as letters so the copy shows
SHOWN_PERIOD = 8  # the sequence of the maps: 8 random tokens, a segment of 8, the segment again
OWN_RUNS = 16  # learners' own runs kept in memory (the oldest dropped first)


def formula() -> str:
    """The circuit in three short lines (one line was cut at a phone's right edge)."""
    return (r"\begin{gathered}\text{head}_{2}(i) \approx \text{the token after } j, \\"
            r"\text{where } x_{j} = x_{i} \\"
            r"\Leftarrow\; \text{head}_{1}: \; j \to j - 1\end{gathered}")


def head_label(layer: int, head: int) -> str:
    return f"L{layer + 1}·H{head + 1}"


def token_names(tokens) -> list[str]:
    return [TOKEN_NAMES[int(i) % len(TOKEN_NAMES)] for i in tokens]


# ---------------------------------------------------------------- runs shared by every session

class SharedRuns:
    """Finished runs shared by every session, one per (config, seed); one run per key at a time.

    ``run(key, compute, own, follow)``: the first caller of a key computes it; a caller of a key in progress waits for
    it, calling ``follow(step)`` with the leader's progress about twice a second (a Streamlit call there is where a
    waiting session that left stops waiting). If the leader is stopped, the next waiter computes it.
    """

    def __init__(self, max_own: int = OWN_RUNS):
        self._lock = threading.Lock()
        self._key_locks: dict = {}
        self._done: OrderedDict = OrderedDict()
        self._own: list = []
        self.progress: dict = {}
        self._max_own = max_own

    def get(self, key) -> Run | None:
        with self._lock:
            return self._done.get(key)

    def run(self, key, compute, own: bool, follow) -> Run:
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        while not key_lock.acquire(timeout=0.5):
            follow(self.progress.get(key, 0))
        try:
            done = self.get(key)
            if done is not None:
                return done
            result = compute()
            with self._lock:
                self._done[key] = result
                if own:
                    self._own.append(key)
                    while len(self._own) > self._max_own:
                        self._done.pop(self._own.pop(0), None)
            return result
        finally:
            self.progress.pop(key, None)
            key_lock.release()


@st.cache_resource(show_spinner=False)
def shared_runs() -> SharedRuns:
    return SharedRuns()


def is_offered(config: Config, seed: int) -> bool:
    """A setting the page offers by default (kept on disk) rather than a learner's own run."""
    return (replace(DEFAULT, n_layer=config.n_layer, n_head=config.n_head, learning_rate=config.learning_rate) == config
            and config.learning_rate in LEARNING_RATES and seed in DEFAULT_SEEDS)


def offered_runs() -> list[tuple[Config, int, bool]]:
    """-> (config, seed, snapshots) of every run kept on disk: the offered settings (is_offered) with their snapshots,
    and the seed section's other seeds of the default configuration without them (get_run's keys)."""
    with_snapshots = [(replace(DEFAULT, n_layer=layers, n_head=heads, learning_rate=rate), seed, True)
                      for rate in LEARNING_RATES for layers in (2, 1) for heads in (2, 1) for seed in DEFAULT_SEEDS]
    return with_snapshots + [(DEFAULT, seed, False) for seed in range(SEEDS) if seed not in DEFAULT_SEEDS]


def _train_offered(config: Config, seed: int, snapshots: bool) -> None:
    with threadpool_limits(limits=1, user_api="blas"):  # its matrices are small: two BLAS threads took 2.7x the CPU
        cached_run(config, seed, EVERY, snapshots)


def store_offered_runs(processes: int | None = None, train_one=_train_offered) -> int:
    """Train the offered runs missing from disk and save them -> how many were trained. Called by the builds (dev.py's,
    the Dockerfile's), so that no test and no first visitor waits for them. One child process a core (each run is
    single-threaded; a run's file is written atomically, so two builds at once only repeat work). train_one: what
    trains and saves one run (a module-level function: a child imports it by name)."""
    missing = [(c, seed, snaps) for c, seed, snaps in offered_runs() if not run_path(c, seed, EVERY, snaps).is_file()]
    processes = max(1, min(processes or os.cpu_count() or 1, len(missing)))
    if processes == 1:
        for args in missing:
            train_one(*args)
    else:
        with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn")) as pool:
            for done in [pool.submit(train_one, *args) for args in missing]:
                done.result()  # (a failed run raises here, as it would in one process)
    return len(missing)


def is_ready(config: Config, seed: int) -> bool:
    """The run of (config, seed) with its snapshots needs no Train button: offered, or trained already."""
    return is_offered(config, seed) or shared_runs().get((config, seed, True)) is not None


def get_run(t, config: Config, seed: int, label: str, snapshots: bool = True) -> Run:
    """The run of (config, seed): from memory, from disk, or trained now under a progress bar. Without snapshots:
    the seed section's runs of the default configuration (on disk too, a few kB each). Whatever is trained is
    trained in a child process (worker.py); if it fails, the page says why in one line and stops there."""
    store = shared_runs()
    snapshots = snapshots or seed in DEFAULT_SEEDS  # (an offered run with snapshots serves the seed section too)
    key = (config, seed, snapshots)
    done = store.get(key)
    if done is not None:
        return done
    bar = st.progress(0.0, text=t(f"{S}.training", what=label, step=0, steps=f"{config.steps:,}"))

    def show(state) -> None:  # a step of the run, or Queued(ahead) while it waits for a free child
        if isinstance(state, Queued):
            bar.progress(0.0, text=t(f"{S}.queued", what=label, ahead=state.ahead))
        else:
            bar.progress(min(state / config.steps, 1.0),
                         text=t(f"{S}.training", what=label, step=f"{state:,}", steps=f"{config.steps:,}"))

    def progress(state) -> None:
        store.progress[key] = state
        show(state)

    def in_child(config, seed, every, progress, keep_snapshots) -> Run:
        return trainer().train(config, seed, every, progress, progress, keep_snapshots)

    on_disk = is_offered(config, seed) or not snapshots
    if on_disk:  # read from its file; a missing file (a fresh machine) is trained in a child like an own run
        compute = lambda: cached_run(config, seed, EVERY, snapshots, progress, fit=in_child)  # noqa: E731
    else:
        compute = lambda: in_child(config, seed, EVERY, progress, True)  # noqa: E731
    st.session_state["tiny_stopped"] = label  # still here on the next run only if this one never finished
    try:
        run = store.run(key, compute, not on_disk, show)
    except TrainingFailed as error:
        del st.session_state["tiny_stopped"]
        bar.empty()
        st.error(t(f"{S}.failed", what=label, reason=str(error)), icon=":material/error:")
        st.stop()
    del st.session_state["tiny_stopped"]
    bar.empty()
    return run


@st.cache_resource(show_spinner=False, max_entries=8)
def evaluation(config: Config):
    """The configuration's evaluation sequences and their plateau (the loss of spreading over the tokens seen)."""
    seqs = eval_set(config)
    return seqs, plateau_loss(seqs)


@st.cache_data(show_spinner=False, max_entries=256)
def knocked_out(config: Config, seed: int, off: tuple, _run: Run):
    m = measure(_run.params, evaluation(config)[0], np.array(off, dtype=bool).reshape(config.n_layer, config.n_head))
    return m.loss_repeated, m.loss_unrepeated, m.induction, m.previous_token


def shown_sequence(config: Config) -> int:
    """The evaluation sequence the maps show: the first with a segment of SHOWN_PERIOD tokens (else the first)."""
    periods = list(evaluation(config)[0].period)
    return periods.index(SHOWN_PERIOD) if SHOWN_PERIOD in periods else 0


def formed_at(run: Run) -> int | None:
    return formation_step(run.steps, run.induction, run.loss_repeated, evaluation(run.config)[1])

