"""Lesson 9: the KV cache in numbers. Its size for the prompt (from the model's shapes), then, on a click, the time per
new token measured live on this server: the whole text run again for every token, against one cached step."""

from __future__ import annotations

import threading
import time

import streamlit as st

from attention_core import gpt
from attention_core.gpt.weights import parameter_count
from charts.gpt import grouped_bars
from ui.shared.common import explanation, guarded_fragment, predict_then_reveal
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.gpt.page import S, Prompt, model

TIMED_TOKENS = 8  # new tokens timed each way
FLOAT_BYTES = 4  # the cache holds float32 keys and values


def _explain(t, key: str, **values) -> None:
    explanation(t(f"{S}.{key}", **values))


def cache_bytes(tokens: int) -> int:
    """Keys and values of every layer and key/value head for ``tokens`` positions, in bytes."""
    c = model()[0].config
    return 2 * c.n_layer * c.n_kv_head * c.head_dim * tokens * FLOAT_BYTES


def weight_bytes() -> int:
    """The float32 weights that every decode step reads (the tied embedding counted once)."""
    return FLOAT_BYTES * parameter_count(model()[0])


def _size(nbytes: float) -> str:
    if nbytes >= 1e8:
        return f"{nbytes / 1e6:,.0f} MB"
    return f"{nbytes / 1e6:.2f} MB" if nbytes >= 1e6 else f"{nbytes / 1e3:.1f} kB"


@st.cache_resource(show_spinner=False)
def measuring() -> threading.Lock:
    """One measurement at a time in the process: two at once on the same cores would time each other."""
    return threading.Lock()


@st.cache_data(show_spinner=False, max_entries=32, ttl=600)
def measure(ids: tuple[int, ...]) -> dict:
    """Greedy new tokens, timed: without the cache (a full pass over the text so far per token, no maps kept) and
    with it (one cached step per token). Measured once per prompt every ten minutes: a class pressing the button
    on the teacher's prompt shares one measurement instead of 40 measuring each other."""
    with measuring():
        return _measure(ids)


def _measure(ids: tuple[int, ...]) -> dict:
    weights = model()[0]
    text = list(ids)
    without = []
    for _ in range(TIMED_TOKENS):
        start = time.perf_counter()
        logits = gpt.prefill(weights, text)[0]
        without.append(time.perf_counter() - start)
        text.append(int(logits.argmax()))
    logits, cache = gpt.prefill(weights, list(ids))
    caches, with_cache, made = [cache], [], []
    for _ in range(TIMED_TOKENS):
        token = int(logits.argmax())
        made.append(token)
        start = time.perf_counter()
        logits = gpt.decode_step(weights, caches, [token])[0]
        with_cache.append(time.perf_counter() - start)
    same = made == text[len(ids):]
    return {"without": sum(without) / TIMED_TOKENS, "with": sum(with_cache) / TIMED_TOKENS, "same": same,
            "ids": ids, "length": len(ids) + TIMED_TOKENS}


@guarded_fragment
def cache_section(t, prompt: Prompt) -> None:
    st.subheader(t(f"{S}.cache_title"))
    _explain(t, "cache_explain")
    c = model()[0].config
    per_token = cache_bytes(1)
    nbytes = cache_bytes(len(prompt.ids))
    answer = 1 if nbytes < 1e5 else (2 if nbytes < 1e8 else 3)
    if not predict_then_reveal(t, f"{S}.cache", 3, answer, key="gpt_cache_predict", n=len(prompt.ids),
                               layers=c.n_layer, kv=c.n_kv_head, d=c.head_dim, per_token=_size(per_token),
                               weights=_size(weight_bytes())):
        return
    st.markdown(t(f"{S}.cache_size", n=len(prompt.ids), size=_size(nbytes), per_token=_size(per_token),
                  layers=c.n_layer, kv=c.n_kv_head, d=c.head_dim, full=_size(per_token * c.n_head // c.n_kv_head)))
    if st.button(t(f"{S}.cache_measure", k=TIMED_TOKENS), key="gpt_cache_measure", icon=":material/timer:"):
        with st.spinner(t(f"{S}.cache_running")):
            st.session_state.gpt_cache_timing = measure(prompt.ids)
    timing = st.session_state.get("gpt_cache_timing")
    if timing is None or timing["ids"] != prompt.ids:
        return
    ms = {"without": timing["without"] * 1e3, "with": timing["with"] * 1e3}
    show_plotly(figure_spec(grouped_bars, [t(f"{S}.without_cache"), t(f"{S}.with_cache")],
                            {t(f"{S}.ms_per_token"): [ms["without"], ms["with"]]},
                            title=t(f"{S}.cache_chart", k=TIMED_TOKENS), value_label=t(f"{S}.ms_per_token"), fmt=".0f"),
                key="gpt_cache_bars")
    st.markdown(t(f"{S}.cache_numbers", without=f"{ms['without']:.0f}", with_=f"{ms['with']:.0f}",
                  ratio=f"{ms['without'] / max(ms['with'], 1e-9):.1f}", k=TIMED_TOKENS,
                  size=_size(cache_bytes(timing["length"])), length=timing["length"]))
    st.caption(t(f"{S}.cache_same" if timing["same"] else f"{S}.cache_differs"))
