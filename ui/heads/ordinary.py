"""What heads do, on ordinary text: lesson 9's induction head (picked on repeated random tokens, never on these texts)
on a paragraph with a made-up name written more than once. Arrows from each later token of the name to what followed
the same token before; the head's weight there against an even spread and the untrained copy; the name's probability
the first time and again. The paragraphs are in data/heads_ordinary.toml, the words in locales/*/heads_ordinary.toml."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attention_core.gpt_studies import causal_study as cs
from attention_core.gpt_studies import ordinary_text as ot
from attention_core.measure import head_stats
from charts.heads import repeat_arrows
from ui.shared.common import (BOX_CHARS, OWN_TEXT, explanation, md_escape, predict_then_reveal,
                              preset_or_own_text)
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.shared.held_out_text import held_out_score
from ui.heads.sections import f2  # the lesson's number style
from ui.heads.results import Base, from_start_up, head_label, model, readable_ids, shown, shown_token, untrained

S = "heads_ordinary"
MAX_PARAGRAPH_TOKENS = 160  # the arrows stay readable and one pass stays well under a second
HOLDS = 0.5  # "the head holds": more than half its weight on the target, on average
MIN_ARROW = 0.02  # lighter arrows are left out: a repeated byte piece has dozens of earlier occurrences


@st.cache_data(show_spinner=False)
def paragraphs() -> tuple[ot.Paragraph, ...]:
    return ot.paragraphs()


@st.cache_data(show_spinner=False, max_entries=64)
def name_read(ids: tuple[int, ...], text: str, name: str, head: tuple[int, int]):
    """-> (the head's map (n, n), its NameReading, the untrained copy's same head read the same way): one pass of
    the model, one of the untrained copy up to the head's layer."""
    found = from_start_up(("text", ids, text, name, head))
    if found is not None:
        return found
    attention, logits = ot.head_reading(model()[0], ids, head)
    lengths = [len(model()[1].token_bytes(i)) for i in ids]
    raw, _ = ot.head_reading(untrained(), ids, head, logits=False)
    return (attention, ot.name_reading(ids, lengths, text, name, attention, logits),
            ot.name_reading(ids, lengths, text, name, raw, None))


def picked_head(base: Base) -> tuple[tuple[int, int], float]:
    """-> the best induction head on the picking set (random tokens), and its mean score there."""
    scores = base.picking.induction.mean(axis=0)
    head = cs.top_heads(scores, 1)[0]
    return head, float(scores[head])


def paragraph_picker(t) -> tuple[str, str, tuple[int, ...]] | None:
    """The paragraph (a built-in one or the learner's own) and its name -> (text, name, ids), or None after saying
    why it cannot be read."""
    built_in = paragraphs()
    text = preset_or_own_text(t, S, "heads_text", [p.label[t.lang] for p in built_in], [p.text for p in built_in])
    known = {p.text: p.name for p in built_in}
    own = st.session_state.get("heads_text_preset") == OWN_TEXT  # (the picker's choice: its name box shows at once)
    if text in known and not own:
        name = known[text]
        st.caption(t(f"{S}.name_given", name=md_escape(name)))
    else:
        name = st.text_input(t(f"{S}.name_box"), value=built_in[0].name, max_chars=BOX_CHARS, key="heads_text_name",
                             bind="query-params").strip()
    ids = readable_ids(t, text, MAX_PARAGRAPH_TOKENS, f"{S}.empty", f"{S}.too_long")
    if ids is None:
        return None
    if not name:
        st.warning(t(f"{S}.name_empty"))
        return None
    count = len(ot.occurrences(text, name))
    if count < 2:
        st.warning(t(f"{S}.name_not_twice", name=md_escape(name), count=count))
        return None
    st.caption(t(f"{S}.tokens", n=len(ids), text=shown(ids)))
    return text, name, ids


def predicted(inside: ot.Repeats) -> int:
    """1: mostly on position 0; 2: on the target; 3: neither (spread)."""
    if float(inside.weight.mean()) > HOLDS:
        return 2
    return 1 if float(inside.on_first.mean()) > HOLDS else 3


def ordinary_text_section(t, base: Base) -> None:
    st.subheader(t(f"{S}.title"))
    head, score = picked_head(base)
    label = head_label(head)
    explanation(t(f"{S}.explain", head=label, score=f2(score), sequences=base.picking.trace.ids.shape[0]))
    picked = paragraph_picker(t)
    if picked is None:
        return
    text, name, ids = picked
    attention, reading, raw = name_read(ids, text, name, head)
    inside = reading.inside
    if inside.positions.size == 0:
        st.warning(t(f"{S}.name_one_token", name=md_escape(name)))
        return
    if not predict_then_reveal(t, S, 3, predicted(inside), key="heads_text_predict", head=label,
                               name=md_escape(name)):
        return
    later = np.concatenate([inside.positions, reading.last.positions])
    queries, targets, weights = ot.arrows(ids, attention, np.sort(later))
    tokens = [shown_token(i) for i in ids]
    on_target = dict(zip(reading.repeats.positions.tolist(), reading.repeats.weight.tolist()))
    hover = [t(f"{S}.hover_repeat", position=i, token=tok, weight=f2(on_target[i])) if i in on_target
             else t(f"{S}.hover_token", position=i, token=tok) for i, tok in enumerate(tokens)]
    show_plotly(figure_spec(repeat_arrows, tokens, queries, targets, weights, marked=later.tolist(), hover=hover,
                            title=t(f"{S}.chart", head=label, min=MIN_ARROW), min_weight=MIN_ARROW),
                key="heads_text_arrows")
    mean, low, high = head_stats.mean_interval(inside.weight)
    k, n = int(inside.top.sum()), int(inside.top.size)
    k_low, k_high = head_stats.wilson_interval(k, n)
    st.markdown(t(f"{S}.numbers", head=label, n=n, occurrences=reading.occurrences, weight=f2(mean), low=f2(low),
                  high=f2(high), k=k, k_low=f"{100 * k_low:.0f}", k_high=f"{100 * k_high:.0f}",
                  uniform=f"{float(inside.uniform.mean()):.3f}", untrained=f"{float(raw.inside.weight.mean()):.3f}",
                  sink=f2(float(inside.on_first.mean()))))
    held_out_sentence(t, head, label)
    copied = reading.continued
    if copied.positions.size:
        st.markdown(t(f"{S}.probability", n=copied.positions.size, first=f"{float(np.nanmean(copied.p_first)):.3f}",
                      again=f"{float(copied.p_again.mean()):.3f}"))
    others = reading.others
    st.markdown(t(f"{S}.elsewhere", last=reading.last.positions.size,
                  last_weight=f2(float(reading.last.weight.mean())) if reading.last.positions.size else "—",
                  others=others.positions.size,
                  others_weight=f2(float(others.weight.mean())) if others.positions.size else "—"))
    st.caption(t(f"{S}.limits", head=label))


def held_out_sentence(t, head: tuple[int, int], label: str) -> None:
    """The same head on the held-out paragraphs (never offered here, never used to pick it): one paragraph is one draw."""
    score = held_out_score(head)
    weight, low, high = score.mean
    top = score.top_count
    st.markdown(t(f"{S}.held_out", head=label, paragraphs=score.paragraphs, weight=f2(weight), low=f2(low),
                  high=f2(high), k=top.k, tokens=top.n, uniform=f"{float(score.uniform.mean()):.3f}",
                  untrained=f"{float(score.untrained.mean()):.3f}"))
