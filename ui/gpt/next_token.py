"""Lesson 9's first sections: the real next-token distribution of the prompt, the sampling knobs on it (lesson 4's
temperature, now on a real model), and generation token by token, streamed, seeded, with a Stop.

Generation is made by the process's shared generation server (ui/gpt/serving.py) and read here token by token, each
written as it comes; its tokens are kept in the session as they are made, so Stop (or Generate again, any widget of
this section or the prompt's, or leaving the page) ends the run where it is and the next run shows what was made. These
two sections are not fragments on purpose: a fragment's rerun never interrupts a running script in Streamlit 1.67
(ScriptRequests: a fragment rerun does not preempt), so a Stop inside a fragment would wait for the last token; a
click in one of the later sections (fragments) is answered once the generation ends. The reader cancels itself when
the run ends, however it ends, and the server drops a generation nobody reads: nothing is left running.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from attention_core.gpt_studies import heads as gpt_heads
from attention_core.gpt import sampling as gpt_sampling
from attention_core.gpt.batching import GenerationError
from attention_core.gpt.sampling import entropy_nats, sampling_probs
from charts.gpt import next_token_bars
from ui.shared.common import csv_download, data_table, explanation, md_escape, predict_then_reveal
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.gpt.page import (GEMMA, SMOLLM2, S, Prompt, answer_for, config_of, decode, encode, percent, prompt_pass,
                         shown_tokens, token_list)
from ui.gpt.serving import presets_on_disk, queue_message, stream_generation

TOP = 10
MAX_NEW_TOKENS = 40
# The default seed: at the default prompt its first draw is the model's most likely token (" Paris"), as it is for
# most seeds; the page says how many of SEEDS draw it (seed 0 drew a 0.7 % token: a correct draw, a poor first demo).
DEFAULT_SEED = 1
SEEDS = 100  # seeds 0..99: how often each first token is drawn
GENERATION = "gpt_generation"  # session state: the last generation (its request, its tokens, whether it finished)


def _explain(t, key: str, **values) -> None:
    explanation(t(f"{S}.{key}", **values))


@dataclass(frozen=True)
class Knobs:
    temperature: float
    top_k: int  # 0: off
    top_p: float  # 1.0: off

    def sampling(self) -> dict:
        """-> the keyword arguments of attention_core.gpt.sampling (None: that knob off)."""
        return {"temperature": self.temperature, "top_k": self.top_k or None,
                "top_p": self.top_p if self.top_p < 1.0 else None}


@st.cache_data(show_spinner=False, max_entries=256)
def distribution(ids: tuple[int, ...], knobs: Knobs, model_key: str = SMOLLM2) -> dict:
    """The prompt's next-token distribution at temperature 1 and after the knobs: the top tokens, entropies, counts."""
    logits = prompt_pass(ids, model_key=model_key).last_logits
    plain = sampling_probs(logits)
    knobbed = sampling_probs(logits, **knobs.sampling())
    top = [int(i) for i in np.argsort(-plain, kind="stable")[:TOP]]
    return {"top": top, "plain": plain[top].astype(float), "knobbed": knobbed[top].astype(float),
            "h_plain": entropy_nats(plain), "h_knobbed": entropy_nats(knobbed),
            "kept": int(np.count_nonzero(knobbed)), "vocab": int(plain.size),
            "top_share": float(plain[top[0]])}


def knobs(t) -> Knobs:
    c_t, c_k, c_p = st.columns(3)
    temperature = c_t.slider(t(f"{S}.temperature"), 0.05, 3.0, 1.0, 0.05, key="gpt_temperature", bind="query-params",
                             help=t(f"{S}.temperature_help"))
    top_k = c_k.slider(t(f"{S}.top_k"), 0, 200, 0, 1, key="gpt_top_k", bind="query-params", help=t(f"{S}.top_k_help"))
    top_p = c_p.slider(t(f"{S}.top_p"), 0.05, 1.0, 1.0, 0.05, key="gpt_top_p", bind="query-params",
                       help=t(f"{S}.top_p_help"))
    return Knobs(float(temperature), int(top_k), float(top_p))


def next_token_section(t, prompt: Prompt) -> Knobs:
    """A prediction, then the top next tokens with their probabilities, the knobs acting on them and the entropy."""
    st.subheader(t(f"{S}.next_title"))
    _explain(t, "next_explain", vocab=f"{config_of(prompt.model).vocab:,}")
    share = distribution(prompt.ids, Knobs(1.0, 0, 1.0), prompt.model)["top_share"]
    answer = 1 if share > 0.5 else (2 if share > 0.1 else 3)
    answer_for("gpt_next_predict", (prompt.model, prompt.ids))  # a new prompt (or model) asks again
    if not predict_then_reveal(t, S, 3, answer, key="gpt_next_predict"):
        return Knobs(1.0, 0, 1.0)
    setting = knobs(t)
    d = distribution(prompt.ids, setting, prompt.model)
    labels = shown_tokens(d["top"], prompt.model)
    show_plotly(figure_spec(next_token_bars, labels, d["plain"], d["knobbed"], title=t(f"{S}.next_chart", k=TOP),
                            model_label=t(f"{S}.model_probs"), sampled_label=t(f"{S}.knob_probs"),
                            value_label=t(f"{S}.probability")), key="gpt_next_bars")
    st.markdown(t(f"{S}.next_numbers", token=md_escape(labels[0]), p=f"{d['plain'][0]:.1%}",
                  p_knobbed=f"{d['knobbed'][0]:.1%}", h_plain=f"{d['h_plain']:.2f}", h_knobbed=f"{d['h_knobbed']:.2f}",
                  kept=f"{d['kept']:,}", vocab=f"{d['vocab']:,}",
                  choices=f"{gpt_heads.equally_likely(d['h_plain']):,.1f}",
                  choices_knobbed=f"{gpt_heads.equally_likely(d['h_knobbed']):,.1f}"))
    _explain(t, "knobs_explain")
    table = {t(f"{S}.col_rank"): list(range(1, len(labels) + 1)), t(f"{S}.col_token"): labels,
             t(f"{S}.col_id"): d["top"], t(f"{S}.model_probs"): d["plain"], t(f"{S}.knob_probs"): d["knobbed"]}
    if prompt.model == GEMMA:  # a base model: it continues text, it was never tuned to answer in a chat format
        st.caption(t(f"{S}.base_model_gemma"))
        csv_download(t(f"{S}.csv_next"), pd.DataFrame(table), "gpt_next_token.csv", key="gpt_next_csv")
        return setting
    chat = chat_top(prompt.ids)
    st.markdown(t(f"{S}.chat_numbers", n=CHAT_TOP, raw=token_list(labels[:CHAT_TOP]),
                  chat=token_list(shown_tokens(chat["top"])), p_chat=percent(chat["p"]), p_raw=percent(d["plain"][0]),
                  template=md_escape(CHAT_SHOWN)))
    csv_download(t(f"{S}.csv_next"), pd.DataFrame(table), "gpt_next_token.csv", key="gpt_next_csv")
    return setting


CHAT_TOP = 5
SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"  # the template's default system line
CHAT_SHOWN = "<|im_start|>system … <|im_end|> <|im_start|>user … <|im_end|> <|im_start|>assistant"
IM_START, IM_END = 1, 2  # the control tokens' ids (typed text never becomes them)


@st.cache_data(show_spinner=False, max_entries=64)
@presets_on_disk("chat-top", sources=(gpt_sampling,))
def chat_top(ids: tuple[int, ...]) -> dict:
    """The prompt inside the chat format the model was tuned on (ChatML, with the default system line): its top
    next tokens and the first one's probability (a preset's read from disk: the same at every start)."""
    nl = list(encode("\n"))
    chat = ([IM_START] + list(encode("system\n" + SYSTEM)) + [IM_END] + nl + [IM_START] + list(encode("user\n"))
            + list(ids) + [IM_END] + nl + [IM_START] + list(encode("assistant\n")))
    probs = sampling_probs(prompt_pass(tuple(chat)).last_logits)
    top = [int(i) for i in np.argsort(-probs, kind="stable")[:CHAT_TOP]]
    return {"top": top, "p": float(probs[top[0]])}


@st.cache_data(show_spinner=False, max_entries=256)
def first_draws(ids: tuple[int, ...], knobs: Knobs, model_key: str = SMOLLM2) -> tuple[int, ...]:
    """-> the first token each seed 0..SEEDS-1 draws for this prompt and these knobs (as the generation server)."""
    probs = sampling_probs(prompt_pass(ids, model_key=model_key).last_logits, **knobs.sampling())
    return tuple(int(i) for i in gpt_heads.first_draws(probs, range(SEEDS)))


# ---------------------------------------------------------------- generation

@dataclass(frozen=True)
class Request:
    ids: tuple[int, ...]
    knobs: Knobs
    seed: int
    new_tokens: int
    model: str = SMOLLM2


def stream(request: Request, on_wait=None):
    """-> yields (token id, the probability it had under the knobs), as the class's shared generation server makes
    them (ui/gpt/serving.py: batched with every other student's, the same request always the same tokens; it stops at
    <|im_end|>). A rerun, Stop or a page change ends this reader, and the server drops a generation nobody reads."""
    cancel = threading.Event()
    try:
        yield from stream_generation(request.ids, **request.knobs.sampling(), seed=request.seed,
                                     max_new_tokens=request.new_tokens, cancel=cancel, on_wait=on_wait,
                                     model_key=request.model)
    finally:
        cancel.set()


def _show(out, prompt: Prompt, made: list[tuple[int, float]]) -> None:
    """What the model read (the prompt's tokens, a long prompt cut where the model stopped reading) and what it wrote
    after it, as plain text (every space and new line as written)."""
    out.code(decode(prompt.ids + tuple(i for i, _ in made), prompt.model), language=None, wrap_lines=True)


def _seed_caption(t, request: Request, made: list[tuple[int, float]]) -> None:
    """How often each seed's first draw is the commonest first token: the seed's draw next to what is typical."""
    if not made:
        return
    draws = first_draws(request.ids, request.knobs, request.model)
    common = max(set(draws), key=lambda i: (draws.count(i), -i))
    probs = sampling_probs(prompt_pass(request.ids, model_key=request.model).last_logits, **request.knobs.sampling())
    token, drawn = shown_tokens([common, made[0][0]], request.model)
    st.caption(t(f"{S}.gen_seeds", seeds=SEEDS, last=SEEDS - 1, token=md_escape(token), count=draws.count(common),
                 p=percent(float(probs[common])), seed=request.seed, drawn=md_escape(drawn), p_drawn=percent(made[0][1])))


def generation_section(t, prompt: Prompt, setting: Knobs) -> None:
    """Generate (seeded, streamed token by token) and Stop; the tokens made, each with the probability it had."""
    st.subheader(t(f"{S}.gen_title"))
    _explain(t, "gen_explain")
    c_n, c_seed, c_go, c_stop = st.columns([2, 1, 1, 1], vertical_alignment="bottom")
    # kept over a visit to another page, so the generation the learner left is the one shown on return
    new_tokens = c_n.slider(t(f"{S}.new_tokens"), 1, MAX_NEW_TOKENS, 20, key="gpt_new_tokens", bind="query-params",
                            persist_state="session")
    seed = c_seed.number_input(t("common.seed"), 0, 9999, DEFAULT_SEED, key="gpt_seed", bind="query-params",
                               persist_state="session")
    go = c_go.button(t(f"{S}.generate"), key="gpt_generate", type="primary", icon=":material/play_arrow:")
    c_stop.button(t(f"{S}.stop"), key="gpt_stop", icon=":material/stop:")  # its click's rerun ends the stream
    request = Request(prompt.ids, setting, int(seed), int(new_tokens), prompt.model)
    out = st.container(key="gpt_gen_out").empty()  # (the key names it for the browser tests)
    if go:
        run = {"request": request, "tokens": [], "finished": False, "error": None}
        st.session_state[GENERATION] = run
        try:
            for token, prob in stream(request, on_wait=lambda state: out.caption(queue_message(t, state))):
                run["tokens"].append((token, prob))
                _show(out, prompt, run["tokens"])
        except GenerationError as exc:  # said below, on this run and every rerun that shows this generation
            run["error"] = str(exc)
        run["finished"] = True
    run = st.session_state.get(GENERATION)
    if run is None:
        st.caption(t(f"{S}.gen_none"))
        return
    if run["request"] != request:
        st.caption(t(f"{S}.gen_changed"))
        return
    # one snapshot for every line below: the run Stop interrupted can still append a token while this run draws
    # (seen in the browser test: a table's columns of different lengths, "All arrays must be of the same length")
    made = list(run["tokens"])
    _show(out, prompt, made)
    st.caption(t(f"{S}.gen_text"))
    if run["error"] is not None:  # a failed step: not the model ending its answer
        st.warning(t(f"{S}.gen_error", detail=md_escape(run["error"])))
    elif run["finished"]:
        st.caption(t(f"{S}.gen_done", n=len(made), seed=request.seed))
        _seed_caption(t, request, made)
        if len(made) < request.new_tokens:  # the server stops at the end of an answer
            st.caption(t(f"{S}.gen_eos_gemma" if request.model == GEMMA else f"{S}.gen_eos", n=len(made)))
    else:  # Stop, another click or a page change ended the run before its last token
        st.warning(t(f"{S}.gen_stopped", n=len(made), total=request.new_tokens), icon=":material/stop_circle:")
    if made:
        steps, tokens = list(range(1, len(made) + 1)), shown_tokens([i for i, _ in made], request.model)
        # shown as text: a drawn token never reads "0" (4e-05 is 0.004 %); the CSV keeps the exact numbers
        table = pa.table({t(f"{S}.col_step"): steps, t(f"{S}.col_token"): tokens,
                          t(f"{S}.probability"): [percent(p) for _, p in made]})
        data_table(table, hide_index=True, key="gpt_gen_table")
        probs = np.array([p for _, p in made])
        st.caption(t(f"{S}.gen_probs", low=percent(float(probs.min())), high=percent(float(probs.max())),
                     below=int((probs < 0.5).sum()), n=len(made)))
        csv = pd.DataFrame({t(f"{S}.col_step"): steps, t(f"{S}.col_token"): tokens,
                            t(f"{S}.col_id"): [i for i, _ in made], t(f"{S}.probability"): probs})
        csv_download(t(f"{S}.csv_generated"), csv, "gpt_generated.csv", key="gpt_gen_csv")
