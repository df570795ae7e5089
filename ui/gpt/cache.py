"""Lesson 9: the KV cache in numbers. Its size for the prompt and at the model's full context next to the weights
(from the model's shapes), then, on a click, the CPU time per new token measured live on this server at two lengths
(the prompt, and the prompt filled to 200 tokens): the whole text run again for every token, against one cached step.

The measurement (about 4.5 s of CPU) runs in a child process at the lowest priority (ui/shared/child.py), so it uses
only the CPU the class's servers leave idle; it is timed in CPU seconds (attention_core/gpt_studies/kv_timing.py), which a
wait for a free core does not change."""

from __future__ import annotations

import threading
import time

import streamlit as st

from attention_core import smollm2
from attention_core.gpt_studies import heads as gpt_heads
from attention_core.gpt_studies import kv_timing
from attention_core.smollm2.weights import parameter_count
from charts.gpt import grouped_bars
from ui.shared import child
from ui.shared.common import explanation, guarded_fragment, md_escape, predict_then_reveal
from ui.gpt.page import answer_for
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.gpt.page import GEMMA, SMOLLM2, S, Prompt, config_of, weights_and_tokenizer

TIMED_TOKENS = 8  # new tokens timed each way
LONG = 200  # the second length timed: the prompt filled to this many tokens
LONG_TIMED_TOKENS = 3  # new tokens timed each way at that length (a full pass over 200 tokens is the slow part)
CLASS = 40  # a class, each with a text at the full context
FLOAT_BYTES = 4  # the cache holds float32 keys and values


def _explain(t, key: str, **values) -> None:
    explanation(t(f"{S}.{key}", **values))


def cache_bytes(tokens: int, model_key: str = SMOLLM2) -> int:
    """Keys and values of every layer and key/value head for ``tokens`` positions, in bytes."""
    c = config_of(model_key)
    return 2 * c.n_layer * c.n_kv_head * c.head_dim * tokens * FLOAT_BYTES


def weight_bytes(model_key: str = SMOLLM2) -> int:
    """The float32 weights that every decode step reads (the tied embedding counted once)."""
    if model_key == GEMMA:
        from attention_core.gemma.weights import parameter_count as gemma_parameter_count

        return FLOAT_BYTES * gemma_parameter_count(weights_and_tokenizer(GEMMA)[0])
    return FLOAT_BYTES * parameter_count(weights_and_tokenizer(SMOLLM2)[0])


def context_of(model_key: str = SMOLLM2) -> int:
    return config_of(GEMMA).context if model_key == GEMMA else smollm2.CONTEXT_LENGTH


def _size(nbytes: float) -> str:
    if nbytes >= 1e10:
        return f"{nbytes / 1e9:,.1f} GB"
    if nbytes >= 1e8:
        return f"{nbytes / 1e6:,.0f} MB"
    return f"{nbytes / 1e6:.2f} MB" if nbytes >= 1e6 else f"{nbytes / 1e3:.1f} kB"


@st.cache_resource(show_spinner=False)
def measuring() -> threading.Lock:
    """One measurement at a time in the process: two at once on the same cores would time each other."""
    return threading.Lock()


@st.cache_resource(show_spinner=False)
def measurements() -> dict:
    """The process's latest measurement per prompt: {ids: timing}, shared by every session (read under the lock)."""
    return {}


def measure(ids: tuple[int, ...], wait=None, model_key: str = SMOLLM2) -> dict:
    """Time the prompt as it is and filled to LONG tokens, each way, in a child process. Every press gets a
    measurement that finished after it was pressed: a class pressing at once on the teacher's prompt waits for one
    measurement (the lock) and shares it, instead of 40 measuring each other; a later press measures again. The result
    says when it was made. wait() is called in this thread about four times a second while it waits (for the lock or
    the child): a Streamlit call there lets a learner who leaves stop waiting (and kills the child, if theirs).
    child.ChildFailed (one line) when the child fails."""
    pressed = time.time()
    lock = measuring()
    while not lock.acquire(timeout=child.TICK):
        if wait is not None:
            wait()
    try:
        stored = measurements().get((model_key, ids))
        if stored is not None and stored["finished"] >= pressed:
            return stored
        long_ids = tuple(gpt_heads.filled_to(list(ids), LONG))
        short, long = _in_child(((ids, TIMED_TOKENS), (long_ids, LONG_TIMED_TOKENS)), wait, model_key)
        timing = {"ids": ids, "model": model_key, "short": short, "long": long, "finished": time.time()}
        measurements()[(model_key, ids)] = timing
        return timing
    finally:
        lock.release()


def _in_child(jobs, wait=None, model_key: str = SMOLLM2) -> list[dict]:
    """jobs: ((ids, new tokens), ...) -> their kv_timing.time_per_token dicts, computed in one child process (it
    loads the model itself, memory-mapped)."""
    return child.run(kv_timing.time_lengths, (jobs, model_key), name="gpt kv timing", wait=wait)["timings"]


@guarded_fragment
def cache_section(t, prompt: Prompt) -> None:
    st.subheader(t(f"{S}.cache_title"))
    _explain(t, "cache_explain")
    which = prompt.model
    c = config_of(which)
    context = context_of(which)
    per_token = cache_bytes(1, which)
    weights = weight_bytes(which)
    full = cache_bytes(context, which)
    share = full / weights
    answer = 1 if share < 0.01 else (2 if share < 0.5 else 3)
    answer_for("gpt_cache_predict", which)  # the other model's cache asks again
    if not predict_then_reveal(t, f"{S}.cache", 3, answer, key="gpt_cache_predict", context=f"{context:,}",
                               weights=_size(weights), per_token=_size(per_token), layers=c.n_layer, kv=c.n_kv_head,
                               d=c.head_dim):
        return
    st.markdown(t(f"{S}.cache_size", n=len(prompt.ids), size=_size(cache_bytes(len(prompt.ids), which)),
                  per_token=_size(per_token), layers=c.n_layer, kv=c.n_kv_head, d=c.head_dim,
                  full=_size(per_token * c.n_head // c.n_kv_head)))
    st.markdown(t(f"{S}.cache_context", context=f"{context:,}", size=_size(full), weights=_size(weights),
                  share=f"{share:.0%}", equal=f"{weights / per_token:,.0f}", students=CLASS,
                  class_size=_size(CLASS * full)))
    if which == GEMMA:  # its local layers need only the last `window` tokens' keys and values
        from attention_core.gpt_studies.modern import window_cache_bytes

        windowed = window_cache_bytes(context, c.n_layer, c.global_layers, c.window, c.n_kv_head, c.head_dim)
        st.markdown(t(f"{S}.cache_window_gemma", local=c.n_layer - len(c.global_layers), layers=c.n_layer,
                      window=c.window, context=f"{context:,}", size=_size(windowed), full=_size(full),
                      share=f"{windowed / full:.0%}"))
    if st.button(t(f"{S}.cache_measure", long=LONG), key="gpt_cache_measure", icon=":material/timer:"):
        checkpoint = st.empty()  # emptied while the child runs: where Streamlit stops a learner who left
        with st.spinner(t(f"{S}.cache_running", long=LONG)):
            try:
                st.session_state.gpt_cache_timing = measure(prompt.ids, wait=checkpoint.empty, model_key=which)
            except child.ChildFailed as error:
                st.error(t(f"{S}.cache_failed", reason=md_escape(str(error))))
    timing = st.session_state.get("gpt_cache_timing")
    if timing is None or timing["ids"] != prompt.ids or timing.get("model", SMOLLM2) != which:
        return
    short, long = timing["short"], timing["long"]
    when = time.strftime("%H:%M:%S", time.gmtime(timing["finished"]))
    labels = [t(f"{S}.cache_length", n=short["n"]), t(f"{S}.cache_length", n=long["n"])]
    show_plotly(figure_spec(grouped_bars, labels,
                            {t(f"{S}.without_cache"): [short["without"] * 1e3, long["without"] * 1e3],
                             t(f"{S}.with_cache"): [short["with"] * 1e3, long["with"] * 1e3]},
                            title=t(f"{S}.cache_chart", when=when), value_label=t(f"{S}.ms_per_token"),
                            fmt=".0f"), key="gpt_cache_bars")
    ratio = lambda m: f"{m['without'] / max(m['with'], 1e-9):.1f}"  # noqa: E731
    st.markdown(t(f"{S}.cache_numbers", when=when, n=short["n"], long=long["n"], k=short["k"], k_long=long["k"],
                  without=f"{short['without'] * 1e3:.0f}", with_=f"{short['with'] * 1e3:.0f}", ratio=ratio(short),
                  long_without=f"{long['without'] * 1e3:.0f}", long_with=f"{long['with'] * 1e3:.0f}",
                  long_ratio=ratio(long), size=_size(cache_bytes(long["length"], which)), length=long["length"]))
    st.caption(t(f"{S}.cache_same" if short["same"] and long["same"] else f"{S}.cache_differs"))
    st.caption(t(f"{S}.cache_cpu"))
