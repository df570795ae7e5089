"""Lesson 9's 4-bit caveat: the float32 copy rounded a second time with the file's own scheme, measured once per
machine by a process of its own at start-up (attention_core.gpt_studies.rounding) and shown at the end of the page (it names
the default prompt's answer and the induction head, so nothing above a question may show it)."""

from __future__ import annotations

import streamlit as st

from attention_core.gpt_studies import rounding
from ui.gpt.page import QUANTISATION, S, percent, texts
from ui.shared.common import md_escape
from ui.shared.startup import register_startup

# ---------------------------------------------------------------- what the 4-bit rounding changes, measured

ROUNDING_TARGET = " Paris"  # the default prompt's answer: how far its probability moves under a second rounding


def rounding_args() -> tuple[str, str, int, int]:
    """-> (prompt, target, sequences, period) of the rounding study: the default prompt, and the repeated random
    sequences of the page's induction study."""
    from ui.gpt.study import PERIOD, SEQUENCES  # noqa: PLC0415 - (imported when the study runs)

    return texts().presets[0][1], ROUNDING_TARGET, SEQUENCES, PERIOD


@st.cache_resource(show_spinner=False)
def _rounding_found() -> dict:
    return {}  # {"value": the study} once read from disk (it never changes while the process runs)


def rounding_result() -> dict | None:
    """-> the rounding study (attention_core.gpt_studies.rounding) read from disk, or None while it is being measured (by a
    process of its own, started at start-up: a visitor never waits for it)."""
    found = _rounding_found()
    if "value" not in found:
        value = rounding.stored_study(*rounding_args())
        if value is None:
            return None
        found["value"] = value
    return found["value"]


def rounding_section(t) -> None:
    """The 4-bit caveat, at the end of the page: it names the default prompt's answer and the induction head, so
    nothing above a question may show it."""
    st.divider()
    st.markdown(rounding_caveat(t, rounding_result()))


def rounding_caveat(t, result: dict | None) -> str:
    """The 4-bit caveat with the study's numbers (a note that it is being measured while result is None). "Kept"
    only when the second rounding picks the same induction head and shares all but at most one of the top heads."""
    if result is None:
        return t(f"{S}.rounding_pending")
    (head, head_b), (score, score_b) = result["heads"], result["scores"]
    kept = head == head_b and result["shared"] >= len(result["top"][0]) - 1
    low, high = result["interval"]
    join = "、" if t.lang == "ja" else " and "
    return t(f"{S}.rounding_kept" if kept else f"{S}.rounding_moved", quant=QUANTISATION, shift=result["offset"],
             first=percent(result["error_first"]), second=percent(result["error_second"]),
             head=f"L{head[0]}H{head[1]}", head_b=f"L{head_b[0]}H{head_b[1]}", score=f"{score:.2f}",
             score_b=f"{score_b:.2f}", shared=result["shared"], top=len(result["top"][0]),
             target=md_escape(ROUNDING_TARGET.strip()), prompt=md_escape(rounding_args()[0]),
             p=percent(result["p"][0]), p_b=percent(result["p"][1]),
             p_other=join.join(percent(p) for p in result["other_p"]),
             shifts=join.join(str(k) for k in result["other_shifts"]), differ=result["differ"],
             positions=result["positions"], texts=result["texts"],
             share=percent(result["differ"] / result["positions"]),
             low=percent(low), high=percent(high))


def _start_rounding_study() -> None:
    """Start-up: once the model is loaded (its float32 copy on disk for the measuring process to map), start the
    rounding study in a process of its own at a lower priority unless it is on disk (returns at once)."""
    from ui.gpt.serving import MODEL  # noqa: PLC0415

    MODEL.result()
    if rounding_result() is None:
        rounding.measure_in_background(*rounding_args())


ROUNDING = register_startup("gpt-rounding", _start_rounding_study)
