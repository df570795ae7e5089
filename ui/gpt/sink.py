"""Lesson 9's attention sink on either GPT: the share of every head's weight on the first token, against the
untrained copy and an even spread, and the control that puts a random token first (for Gemma: in the start token's
place)."""

from __future__ import annotations

import streamlit as st

from attention_core import smollm2
from attention_core.gpt_studies import heads
from charts.gpt import layer_profile
from ui.shared.common import explanation, guarded_fragment, md_escape, predict_then_reveal
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.gpt.page import GEMMA, S, Prompt, answer_for, model, prompt_pass, shown_tokens
from ui.gpt.serving import presets_on_disk


def _explain(t, key: str, **values) -> None:
    explanation(t(f"{S}.{key}", **values))


@guarded_fragment
def sink_section(t, prompt: Prompt) -> None:
    st.subheader(t(f"{S}.sink_title"))
    n = len(prompt.ids)
    if n < 3:
        st.warning(t(f"{S}.sink_short"))
        return
    trained = heads.sink_share(prompt_pass(prompt.ids, model_key=prompt.model).attention)  # (L, H)
    even = heads.uniform_sink_share(n)
    share = float(trained.mean())
    answer = 3 if share > 0.5 else (1 if share < 2 * even else 2)
    answer_for("gpt_sink_predict", (prompt.model, prompt.ids))  # a new prompt (or model) asks again
    if not predict_then_reveal(t, f"{S}.sink", 3, answer, key="gpt_sink_predict", even=f"{even:.0%}",
                               heads=trained.size):
        return
    control = heads.sink_share(prompt_pass(prompt.ids, False, prompt.model).attention)  # the untrained copy
    show_plotly(figure_spec(layer_profile, trained.mean(axis=1), control.mean(axis=1),
                            title=t(f"{S}.sink_chart", token=prompt.tokens[0]), trained_label=t(f"{S}.trained"),
                            untrained_label=t(f"{S}.untrained"), value_label=t(f"{S}.share"),
                            layer_label=t(f"{S}.layer"), reference=even, reference_label=t(f"{S}.even")),
                key="gpt_sink_chart")
    st.markdown(t(f"{S}.sink_numbers", share=f"{share:.0%}", over=heads.heads_over(trained), heads=trained.size,
                  untrained=f"{float(control.mean()):.0%}", untrained_over=heads.heads_over(control), even=f"{even:.0%}",
                  token=md_escape(prompt.tokens[0])))
    if prompt.model == GEMMA:  # its first token is the start token: the control takes that away
        swapped, swapped_share = gemma_random_first(prompt.ids)
        key = "sink_random_first_gemma_gone" if swapped_share < share / 2 else "sink_random_first_gemma_kept"
    else:
        swapped, swapped_share = random_first(prompt.ids)
        key = "sink_random_first"
    st.markdown(t(f"{S}.{key}", token=md_escape(shown_tokens([swapped], prompt.model)[0]),
                  share=f"{swapped_share:.0%}", original=f"{share:.0%}", even=f"{even:.0%}"))
    _explain(t, "sink_explain")


SINK_CONTROL_SEED = 0  # the random first token of the sink's control


@st.cache_data(show_spinner=False, max_entries=64)
@presets_on_disk("random-first")
def random_first(ids: tuple[int, ...]) -> tuple[int, float]:
    """-> (the random token put first, the trained heads' mean weight on it): the sink with the word changed (a
    preset's read from disk: the same at every start)."""
    swapped = heads.random_first_token(ids, SINK_CONTROL_SEED, model()[0].config.vocab)
    return swapped[0], float(heads.sink_share(smollm2.forward(model()[0], swapped, all_logits=False).attention).mean())


@st.cache_data(show_spinner=False, max_entries=64)
def gemma_random_first(ids: tuple[int, ...]) -> tuple[int, float]:
    """Gemma: -> (the random normal token put where the start token stood, the trained heads' mean weight on it)."""
    from attention_core import gemma
    from attention_core.gemma.tokenizer import NORMAL_IDS

    swapped = heads.random_first_token(ids, SINK_CONTROL_SEED, NORMAL_IDS.stop, low=NORMAL_IDS.start)
    weights = gemma.default_model()[0]
    return swapped[0], float(heads.sink_share(gemma.forward(weights, swapped, all_logits=False).attention).mean())
