"""What "What heads do" shows while its start-up work runs: on a new server the base (the model, the two sets' runs,
the lighter studies) and the random-head band take from a minute to many minutes. The page says what is running and
for how long (the time measured so far; for the band, what is left at the pace its runs have gone), and a small
fragment asks every POLL_SECONDS whether the work is done, then reruns the page once so every section fills itself
in: no reload, and no polling once it is done (a full run with the result does not draw the fragment again)."""

from __future__ import annotations

import time

import streamlit as st

from attention_core.smollm2.weights import GPTUnavailable, gguf_path
from ui.heads import results
from ui.heads.results import BASE_STEPS, S, Band, Base, model
from ui.shared.common import guarded_fragment, md_escape
from ui.shared.gpt_models import INSTALL_COMMAND
from ui.shared.startup import Background

POLL_SECONDS = 2.0  # how often a waiting page asks whether the work is done


def duration(t, seconds: float) -> str:
    """Seconds -> "45 s", "3 min 05 s" (ja: 45 秒, 3 分 05 秒), rounded to the second."""
    minutes, rest = divmod(int(round(seconds)), 60)
    return t(f"{S}.minutes", m=minutes, s=f"{rest:02d}") if minutes else t(f"{S}.seconds", s=rest)


def base_message(t) -> str:
    """-> what the base's start-up work is doing: its step, and how long it has run."""
    progress = results.BASE_PROGRESS
    done, total = progress.read()
    elapsed = progress.elapsed()
    step = progress.stage if progress.stage in BASE_STEPS else BASE_STEPS[0]
    return t(f"{S}.base_running", step=min(done + 1, total or len(BASE_STEPS)), steps=total or len(BASE_STEPS),
             stage=t(f"{S}.base_step_{step}"), elapsed=duration(t, elapsed or 0.0))


def band_message(t) -> str:
    """-> how far the band's runs are: done of total, the time they took, and what is left at that pace."""
    progress = results.PROGRESS
    done, total = progress.read()
    elapsed = progress.elapsed()
    if not done or not total or elapsed is None:
        return t(f"{S}.band_starting", total=total or "…")
    left = elapsed * (total - done) / done
    return t(f"{S}.band_running", done=done, total=total, elapsed=duration(t, elapsed),
             left=duration(t, max(left, 1.0)))


def fill_in_when_done(t, work: Background, message) -> None:
    """The waiting box: `message(t)` now, asked again every POLL_SECONDS in a fragment of its own; once the work is
    done (or has failed and is being tried again) the whole page reruns and draws what it waited for."""
    attempts = work.runs

    @guarded_fragment(run_every=POLL_SECONDS)
    def waiting() -> None:
        if work.ready() or work.runs != attempts:
            st.rerun(scope="app")
        st.info(message(t), icon=":material/hourglass_top:")

    waiting()


def read_soon(work: Background, computing) -> bool:
    """Start the work if need be and wait up to results.BAND_WAIT seconds for it, as long as it may be reading its
    result from disk (after a restart) rather than computing it (`computing()` true: no wait, a learner's rerun is
    not held up) -> whether it is done."""
    deadline = time.monotonic() + results.BAND_WAIT
    while not work.wait(0.05):
        if computing() or time.monotonic() > deadline:
            return False
    return True


def base_or_message(t) -> Base | None:
    """-> the base results; None after a message: how to install the model, or what the start-up work is doing
    (the page fills itself in when it is done)."""
    try:
        gguf_path()  # the package, found without waiting for the model (a new server builds its float32 copy)
        if results.BASE.ready():
            model()  # (a package gone after the start-up work finished is found here)
            return results.BASE.result()
        if read_soon(results.BASE, lambda: results.BASE_PROGRESS.stage in BASE_STEPS[2:]):
            return results.BASE.result()
    except GPTUnavailable as exc:
        st.error(t(f"{S}.missing", command=INSTALL_COMMAND, detail=md_escape(str(exc))), icon=":material/download:")
        return None
    fill_in_when_done(t, results.BASE, base_message)
    return None


def band_or_progress(t) -> Band | None:
    """-> the band when it is ready (or read from disk within results.BAND_WAIT); otherwise None after saying how far
    its runs are (the page fills itself in when it is done)."""
    if read_soon(results.BAND, lambda: results.PROGRESS.elapsed() is not None):
        return results.BAND.result()
    fill_in_when_done(t, results.BAND, band_message)
    return None
