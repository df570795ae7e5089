"""Lesson 9: induction heads, measured. Previous-token and induction heads on repeated random sequences (the study in
ui/gpt/study.py: heads picked on one set, scored on another, beside the untrained copy), the loss on the first and
second copy, and the learner's own made-up name copied by the model; then the lesson's start-up work (what the
page's first visitors and first answers read, computed before they come). The sink is in ui/gpt/sink.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from attention_core import smollm2
from attention_core.gpt_studies import heads
from attention_core.gpt.sampling import sampling_probs
from attention_core.smollm2.serving import greedy_continuation
from charts.gpt import grouped_bars, induction_map
from ui.shared.common import (BOX_CHARS, csv_download, data_table, explanation, guarded_fragment, md_escape,
                              predict_then_reveal)
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.gpt.page import (GEMMA, SMOLLM2, S, Prompt, answer_for, config_of, encode, japanese_facts, model,
                         preset_prompts, prompt_pass, shown_tokens, texts, token_list)
from ui.gpt.mask import leak_test, minimal_pair_sentences, referent_study
from ui.gpt.next_token import Knobs, chat_top, distribution
from ui.shared.held_out_text import held_out_score
from ui.shared.startup import register_startup
from ui.gpt.serving import MODEL, presets_on_disk
from ui.gpt.sink import random_first
from ui.gpt.study import PERIOD, STRONG, Study, study, study_of

MAX_NAME_TOKENS = 20  # a longer "name" is no name: the page asks for a shorter one


def _explain(t, key: str, **values) -> None:
    explanation(t(f"{S}.{key}", **values))


# ---------------------------------------------------------------- induction heads

ROPE_SHIFT, ROPE_FAR = 7, 1000  # the prompt moved this many positions later
FILLER_TOKENS = 7  # new lines put before the prompt for the whole model's run
FILLER = "\n"


@st.cache_data(show_spinner=False, max_entries=64)
@presets_on_disk("rotary-check")
def rotary_check(ids: tuple[int, ...], head: tuple[int, int]) -> dict:
    """Rotary positions at work on the prompt: layer 0's scores with the prompt moved ROPE_SHIFT and ROPE_FAR
    positions later (largest |difference|), and the previous-token head's score with FILLER_TOKENS new lines before
    the prompt in the whole model (a preset's read from disk: the same at every start)."""
    weights = model()[0]
    diff, largest = heads.rotary_shift_difference(weights, ids, (ROPE_SHIFT, ROPE_FAR))
    shifted = smollm2.forward(weights, list(encode(FILLER) * FILLER_TOKENS) + list(ids), all_logits=False).attention
    before, after = heads.shifted_previous_token(prompt_pass(ids).attention, shifted,
                                                 len(encode(FILLER)) * FILLER_TOKENS)
    return {"diff": diff, "largest": largest, "before": float(before[head]),
            "after": float(after[head])}


def heads_table(t, s: Study, prompt: Prompt | None) -> pd.DataFrame:
    """Every head's scores, one row a head: its induction score on the scoring sequences and, with a prompt, its
    weight on the first token and on the previous token of the prompt (headers in the page's language)."""
    layers, count = s.induction.shape
    table = {t(f"{S}.col_layer"): np.repeat(np.arange(layers), count),
             t(f"{S}.col_head"): np.tile(np.arange(count), layers),
             t(f"{S}.col_induction", sequences=s.sequences): s.induction.reshape(-1)}
    if prompt is not None and len(prompt.ids) >= 2:
        attention = prompt_pass(prompt.ids, model_key=prompt.model).attention
        table[t(f"{S}.col_sink")] = heads.sink_share(attention).reshape(-1)
        table[t(f"{S}.col_previous")] = heads.previous_token_score(attention).reshape(-1)
    return pd.DataFrame(table)


def held_out_sentence_values(head: tuple[int, int]) -> dict:
    """-> the head's score on the held-out paragraphs of ordinary text, formatted for induction_limits."""
    score = held_out_score(head)
    weight, low, high = score.mean
    top = score.top_count
    k_low, k_high = top.interval
    return {"paragraphs": score.paragraphs, "tokens": top.n, "weight": f"{weight:.2f}", "low": f"{low:.2f}",
            "high": f"{high:.2f}", "k": top.k, "k_low": f"{100 * k_low:.0f}", "k_high": f"{100 * k_high:.0f}",
            "uniform": f"{float(score.uniform.mean()):.3f}", "untrained": f"{float(score.untrained.mean()):.3f}"}


@guarded_fragment
def induction_section(t, prompt: Prompt | None = None, model_key: str = SMOLLM2) -> None:
    """The repeated-sequence study of `model_key` (SMOLLM2 or GEMMA; a prompt, when given, is that model's)."""
    st.subheader(t(f"{S}.induction_title"))
    _explain(t, "induction_explain", period=PERIOD)
    with st.spinner(t(f"{S}.study_running")):
        s = study_of(model_key)
    first, second = s.losses
    answer = 3 if second < first / 2 else (2 if second < first * 0.9 else 1)
    st.caption(t(f"{S}.induction_example_gemma" if model_key == GEMMA else f"{S}.induction_example",
                 tokens=token_list(shown_tokens(s.example[:8], model_key))))
    answer_for("gpt_induction_predict", model_key)  # the other model's study asks again
    if not predict_then_reveal(t, f"{S}.induction", 3, answer, key="gpt_induction_predict", period=PERIOD):
        return
    show_plotly(figure_spec(grouped_bars, [t(f"{S}.first_copy"), t(f"{S}.second_copy")],
                            {t(f"{S}.trained"): s.losses, t(f"{S}.untrained"): s.untrained_losses},
                            title=t(f"{S}.loss_chart", sequences=s.sequences), value_label=t(f"{S}.loss_nats")),
                key="gpt_loss_bars")
    st.markdown(t(f"{S}.loss_numbers", first=f"{first:.1f}", second=f"{second:.1f}", sequences=s.sequences,
                  u_first=f"{s.untrained_losses[0]:.1f}", u_second=f"{s.untrained_losses[1]:.1f}"))
    vocab = config_of(model_key).vocab
    uniform = heads.uniform_loss(vocab)
    if first > s.untrained_losses[0] and first > uniform:  # the paradox, said only while it holds
        st.markdown(t(f"{S}.loss_paradox", first=f"{first:.1f}", u_first=f"{s.untrained_losses[0]:.1f}",
                      vocab=f"{vocab:,}", uniform=f"{uniform:.1f}"))
    layers, count = s.induction.shape
    show_plotly(figure_spec(induction_map, s.induction, [f"L{k}" for k in range(layers)],
                            [f"H{k}" for k in range(count)], STRONG,
                            mark_label=t(f"{S}.induction_marks", threshold=STRONG, strong=s.strong),
                            title=t(f"{S}.induction_map", sequences=s.sequences),
                            value_label=t(f"{S}.score"), axis_titles=(t(f"{S}.head"), t(f"{S}.layer")),
                            plot_width=420, height=26 * layers + 160), key="gpt_induction_map")  # a label per layer
    mean, low, high = s.picked_score
    p_mean, p_low, p_high = s.previous_score
    st.markdown(t(f"{S}.induction_numbers", head=f"L{s.picked[0]}H{s.picked[1]}", score=f"{mean:.2f}",
                  low=f"{low:.2f}", high=f"{high:.2f}", sequences=s.sequences, strong=s.strong, threshold=STRONG,
                  heads=s.induction.size, untrained=f"{s.untrained_best:.2f}", uniform=f"{s.uniform:.3f}"))
    st.markdown(t(f"{S}.previous_numbers", head=f"L{s.previous[0]}H{s.previous[1]}", score=f"{p_mean:.2f}",
                  low=f"{p_low:.2f}", high=f"{p_high:.2f}", uniform=f"{s.previous_uniform:.2f}"))
    if prompt is not None and len(prompt.ids) >= 2 and model_key == SMOLLM2:  # (a check of SmolLM2's layer 0)
        rope_check = rotary_check(prompt.ids, s.previous)
        st.markdown(t(f"{S}.rope_numbers", shift=ROPE_SHIFT, far=ROPE_FAR, diff=f"{rope_check['diff']:.1e}",
                      largest=f"{rope_check['largest']:.1f}", k=FILLER_TOKENS, head=f"L{s.previous[0]}H{s.previous[1]}",
                      before=f"{rope_check['before']:.2f}", after=f"{rope_check['after']:.2f}"))
    if model_key == GEMMA:
        st.caption(t(f"{S}.induction_limits_gemma", total=2 * s.sequences))
    else:
        st.caption(t(f"{S}.induction_limits", total=2 * s.sequences, head=f"L{s.picked[0]}H{s.picked[1]}",
                     **held_out_sentence_values(s.picked)))
    st.page_link("lessons/heads.py", label=t("nav.heads"), icon=":material/arrow_forward:")  # where it is shown
    csv_download(t(f"{S}.csv_heads"), heads_table(t, s, prompt), "gpt_heads.csv", key="gpt_heads_csv")
    if model_key == SMOLLM2:  # (the made-up name is copied by SmolLM2)
        copy_section(t)


# ---------------------------------------------------------------- the learner's own name, copied

@st.cache_data(show_spinner=False, max_entries=64)
def copied_name(name: str) -> dict:
    """The template with the name twice: each name token's probability the first and the second time, and what the
    model writes (greedy) after the second time's first token. {"problem": "one_token"} when the name is one token
    (nothing to copy after it), {"problem": "merged", ...} when the text does not hold the name's own tokens twice
    (its edge merges with the characters around it, as "<script>" with the "." after it: ">.")."""
    data = texts()
    ids = encode(data.copy_template.replace("{name}", name))
    piece = encode(" " + name)
    starts = [i for i in range(len(ids) - len(piece) + 1) if ids[i:i + len(piece)] == piece]
    if len(piece) < 2:
        return {"problem": "one_token"}
    if len(starts) < 2:
        return {"problem": "merged", "piece": piece, "ids": ids}
    weights = model()[0]
    hidden = smollm2.forward(weights, list(ids), all_logits=False).hidden
    m = len(piece) - 1  # the name's tokens after its first, each scored where it is next
    first, second = (smollm2.lm_head(hidden[start:start + m], weights.embedding) for start in starts[:2])  # (m, V) each
    rows = [(piece[k], float(sampling_probs(first[k - 1])[piece[k]]), float(sampling_probs(second[k - 1])[piece[k]]))
            for k in range(1, len(piece))]
    written = greedy_continuation(weights, list(ids[:starts[1] + 1]), second, ids[starts[1] + 1:], m)
    return {"rows": rows, "written": written, "expected": piece[1:], "text": data.copy_template.replace("{name}", name)}


def copy_section(t) -> None:
    st.markdown(f"**{t(f'{S}.copy_title')}**")
    name = st.text_input(t(f"{S}.copy_name"), value=texts().copy_name, max_chars=BOX_CHARS, key="gpt_name",
                         bind="query-params")
    if not name.strip():
        st.warning(t(f"{S}.copy_empty"))
        return
    if len(encode(" " + name.strip())) > MAX_NAME_TOKENS:
        st.warning(t(f"{S}.copy_too_long", limit=MAX_NAME_TOKENS))
        return
    result = copied_name(name.strip())
    if result.get("problem") == "one_token":
        st.warning(t(f"{S}.copy_one_token"))
        return
    if result.get("problem") == "merged":
        st.warning(t(f"{S}.copy_merged", name=token_list(shown_tokens(result["piece"])),
                     text=token_list(shown_tokens(result["ids"]))))
        return
    rows = result["rows"]
    table = pa.table({t(f"{S}.col_token"): shown_tokens([r[0] for r in rows]),
                      t(f"{S}.first_time"): [r[1] for r in rows],
                      t(f"{S}.second_time"): [r[2] for r in rows]})
    st.caption(t(f"{S}.copy_text", text=md_escape(result["text"])))
    data_table(table, hide_index=True, key="gpt_copy_table")
    right = sum(a == b for a, b in zip(result["written"], result["expected"]))
    st.markdown(t(f"{S}.copy_numbers", first=f"{np.mean([r[1] for r in rows]):.1%}",
                  second=f"{np.mean([r[2] for r in rows]):.1%}", written=md_escape("".join(shown_tokens(result["written"]))),
                  right=right, total=len(result["expected"])))


# ---------------------------------------------------------------- start-up work

def warm_lesson() -> None:
    """What every visitor of lesson 9 (and the summary's induction claim) reads at the defaults, computed once per
    process by the start-up thread while the first visitors read: the repeated-sequence study, the famous sentence,
    Japanese, and the default prompt's pass, leak test and copied name. Each lands in its own st.cache_* entry, so
    a page that asks first waits for the same computation instead of starting another. What the page's opening
    needs comes first: the model (the page's own loading Background, so it is loaded or built once), the default
    prompt's pass; the study is read from disk (computed, seconds, only by a new server with new weights or code)."""
    MODEL.result()
    data = texts()
    ids = encode(data.presets[0][1])
    prompt_pass(ids)
    minimal_pair_sentences()
    japanese_facts()
    if len(ids) >= 2:
        leak_test(ids)
    study()
    copied_name(data.copy_name)


WARM = register_startup("gpt-lesson", warm_lesson)


def store_results() -> None:
    """Every lesson-9 result that is the same at every start and kept on disk, computed now where it is missing:
    the repeated-sequence study, the famous sentence (its pair, its other last words), Japanese, the picked head on
    the held-out paragraphs of ordinary text, and on every preset prompt what its questions' answers read (the chat
    format's top tokens, the leak test, the rotary check, the sink's random first token). dev.py and the image's
    build call it, so no server start computes them; the start-up thread (warm_answers) then only reads them."""
    s = study()
    minimal_pair_sentences()
    japanese_facts()
    referent_study()
    held_out_score(s.picked)
    for ids in preset_prompts():  # as the page asks for them (the same conditions)
        chat_top(ids)
        if len(ids) >= 2:
            leak_test(ids)
            rotary_check(ids, s.previous)
        if len(ids) >= 3:
            random_first(ids)


def warm_answers() -> None:
    """Start-up, after warm_lesson: what a student's first answer to each question of the page reads, on every
    preset prompt, so no first answer in a class computes a fixed result. The results kept on disk are read (or
    computed and written, store_results); the presets' own passes (270 maps each, the trained model and the
    untrained copy) and their next-token distribution are computed into memory (a preset chosen, the sink's
    answer)."""
    WARM.result()
    store_results()
    for ids in preset_prompts():
        prompt_pass(ids)
        distribution(ids, Knobs(1.0, 0, 1.0))  # the next-token question's answer, as next_token_section asks
        if len(ids) >= 3:
            prompt_pass(ids, trained=False)  # the sink's control


ANSWERS = register_startup("gpt-answers", warm_answers)
