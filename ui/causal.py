"""Lesson 5, the causal mask: its controls, its sections and their cached calls (one computation per distinct
sentence, seed and position, shared by every session). The page (lessons/causal.py) only puts them in order.

Q, K, V = token vectors x seeded random projections (said on the page).
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd
import streamlit as st

from attention_core.causal import (
    causal_vs_bidirectional, generation_frames, leak_test, mask_facts, matrices_csv, repeated_word, replacement_vector,
)
from attention_core.sentences import load_sentences
from attention_core.text import tokenize
from charts.bars import change_bars
from charts.causal import generation_animation, masked_scores_heatmap, weights_heatmap
from charts.style import ACCENT, SECOND
from ui.shared.common import (
    BOX_CHARS, bounded_slider, csv_download, data_table, explanation, guarded_fragment, heatmap_axes,
    md_escape, predict_then_reveal, text_limits,
)
from ui.shared.display import on_touch_device, show_plotly
from ui.shared.figures import figure_spec
from ui.shared.i18n import sci
from ui.shared.links import url_selectbox
from ui.shared.word_vectors import sentence_vectors, vector_controls, word_vectors

S = "causal"


@st.cache_data(max_entries=128, show_spinner=False)
def experiment(X, seed: int):
    return causal_vs_bidirectional(X, seed)


@st.cache_data(max_entries=128, show_spinner=False)
def csv_text(words: tuple, X, seed: int) -> str:
    return matrices_csv(words, experiment(X, seed))


@st.cache_data(max_entries=128, show_spinner=False)
def frames_of(X, seed: int):
    return generation_frames(experiment(X, seed)["causal"].weights)


@st.cache_data(max_entries=256, show_spinner=False)
def leak(X, position: int, new_vector, seed: int):
    return leak_test(X, position, new_vector, seed)


def number(x: float) -> str:
    """A number quoted in a sentence: 0.0 exactly as 0.0, 0.123 to 3 digits, a tiny one as 1.2 × 10⁻⁷."""
    return repr(x) if x == 0 else (f"{x:.3g}" if abs(x) >= 1e-3 else sci(x, 2))


class Controls(NamedTuple):
    text: str
    use_glove: bool
    seed: int


def controls(t) -> Controls:
    """The sentence (a preset or one's own), GloVe or random vectors, and the seed, in one row."""
    presets = {s.id: s for s in load_sentences()}
    first = next(iter(presets))
    c1, c2, c3 = st.columns([3, 2, 1], gap="medium")
    choice = url_selectbox(t("common.preset"), [*presets, "custom"], "causal_preset", widget=c1.selectbox,
                           format_func=lambda k: t("common.custom") if k == "custom" else presets[k].label[t.lang])
    if choice == "custom":
        text = c1.text_input(t("causal.text_label"), value=presets[first].text, max_chars=BOX_CHARS,
                             key="causal_text", bind="query-params")
        c1.caption(text_limits(t))
    else:
        text = presets[choice].text
        c1.caption(md_escape(text))
    use_glove, seed = vector_controls(t, S, c2, c3)
    return Controls(text, use_glove, seed)


class Sentence(NamedTuple):
    X: object  # (n, d) token vectors
    words: list
    safe: list  # the words as Markdown that shows them literally
    seed: int
    use_glove: bool
    kv: object


def section_vectors(t, c: Controls) -> Sentence | None:
    """The sentence's tokens -> their vectors (GloVe, or seeded random); None (with a message shown) if none."""
    found = sentence_vectors(t, S, c.text, c.use_glove, c.seed)
    if found is None:
        return None
    X, words, kv = found
    st.caption(t("causal.vectors_glove" if kv is not None else "causal.vectors_random", d=X.shape[1])
               + " " + t("causal.projection_note"))
    return Sentence(X, words, [md_escape(w) for w in words], c.seed, kv is not None, kv)


def section_scores(t, s: Sentence) -> None:
    """1. The masked scores: every cell above the diagonal is -inf."""
    res, n = experiment(s.X, s.seed), len(s.words)
    st.subheader(t("causal.scores_header"))
    show_plotly(figure_spec(masked_scores_heatmap, res["causal"].scores, s.words, title=t("causal.scores_title"),
                            value_label=t("causal.score_label"), masked_note=t("causal.masked_note"),
                            axis_titles=heatmap_axes(t)), key="causal_scores_fig")
    caption = "causal.scores_caption_touch" if on_touch_device() else "causal.scores_caption"  # no "hover"
    st.caption(t(caption, masked=mask_facts(res)["masked"], total=n * n))
    csv_download(t("causal.download"), csv_text(tuple(s.words), s.X, s.seed), "causal_mask_matrices.csv",
                 "causal_download")


def section_matrices(t, s: Sentence) -> None:
    """2. Bidirectional vs causal weights, behind the prediction."""
    res, n = experiment(s.X, s.seed), len(s.words)
    facts = mask_facts(res)
    st.subheader(t("causal.matrices_header"))
    if not predict_then_reveal(t, S, 4, 1, key="causal_predict"):
        return
    left, right = st.columns(2, gap="medium")
    with left:
        show_plotly(figure_spec(weights_heatmap, res["bidirectional"].weights, s.words, title=t("causal.bi_title"),
                                value_label=t("causal.weight_label"), axis_titles=heatmap_axes(t)), key="causal_bi_fig")
    with right:
        show_plotly(figure_spec(
            weights_heatmap, res["causal"].weights, s.words, title=t("causal.causal_title"), hidden=~res["causal"].mask,
            value_label=t("causal.weight_label"), highlight_row=0, axis_titles=heatmap_axes(t)), key="causal_causal_fig")
    if n > 1:
        st.caption(t("causal.matrices_caption", masked=facts["masked"], causal_max=number(facts["causal_max_above"]),
                     first=repr(facts["first_self"]), bi_min=number(facts["bidirectional_min_above"]),
                     err=sci(facts["row_sum_error"])))
    else:
        st.caption(t("causal.matrices_caption_one"))
    twice = repeated_word(s.words, res)
    if twice is not None:  # (the "bank" preset is built for this: one vector for both meanings)
        seen = [t("causal.seen_itself") if k == 0 else t("causal.seen_words", n=k + 1)
                for k in (twice["first"], twice["last"])]
        st.caption(t("causal.repeated_caption", word=s.safe[twice["first"]], first=twice["first"] + 1,
                     last=twice["last"] + 1, first_sees=seen[0], last_sees=seen[1],
                     bi=number(twice["bidirectional"]), causal=number(twice["causal"])))


@guarded_fragment
def section_generation(t, s: Sentence) -> None:
    """3. Generation, token by token (a fragment: moving its slider redraws only this part)."""
    n = len(s.words)
    st.subheader(t("causal.generation_header"))
    if n > 1:
        generated = bounded_slider(t("causal.generated_label"), 1, n, n, key="causal_generated", bind="query-params")
    else:
        generated = 1
        st.caption(t("causal.one_token"))
    show_plotly(figure_spec(generation_animation, frames_of(s.X, s.seed), s.words, generated,
                            value_label=t("causal.weight_label"), title=t("causal.generation_title", n=n),
                            play_label=t("causal.play"), pause_label=t("causal.pause"),
                            step_label=t("causal.step_label"), axis_titles=heatmap_axes(t)),
                key="causal_generation_fig")
    res = experiment(s.X, s.seed)
    newest = res["causal"].weights[generated - 1, :generated]
    st.caption(t("causal.generation_caption", k=generated, token=s.safe[generated - 1],
                 weights=t.join(f"{w} {v:.4f}" for w, v in zip(s.safe, newest))))
    st.markdown(t("causal.first_row", value=repr(mask_facts(res)["first_self"])))
    explanation(t("causal.generation_note"), caption=True)


@guarded_fragment
def section_leak(t, s: Sentence) -> None:
    """4. The leak test: change one token, see which rows change (a fragment too)."""
    n, safe = len(s.words), s.safe
    st.subheader(t("causal.leak_header"))
    explanation(t("causal.leak_intro"), caption=True)
    l1, l2, l3 = st.columns(3, gap="medium")
    with l1:
        j = 0 if n == 1 else bounded_slider(t("causal.leak_pos"), 1, n, (n + 1) // 2, key="causal_leak_pos",
                                            bind="query-params") - 1
        st.caption(f"{j + 1}: {safe[j]}")
    how = url_selectbox(t("causal.leak_how"), ["word", "random"], "causal_leak_how", widget=l2.radio, horizontal=True,
                        format_func=lambda k: t(f"causal.leak_how_{k}"))
    new_vector, new_name = replacement_vector(s.X, s.seed), t("causal.random_vector")
    if how == "word":
        word = l3.text_input(t("causal.leak_word"), value="dog", max_chars=BOX_CHARS, key="causal_leak_word",
                             bind="query-params")
        repl = tokenize(word)[:1]
        W1 = word_vectors(tuple(repl), s.use_glove, 0 if s.use_glove else s.seed, _kv=s.kv)[0] if repl else None
        if W1 is not None and len(W1):
            new_vector, new_name = W1[0], md_escape(repl[0])
        else:
            l3.caption(t("causal.leak_word_unknown"))
    st.markdown(t("causal.leak_changing", j=j + 1, old=safe[j], new=new_name))
    result = leak(s.X, j, new_vector, s.seed)
    modes = {"causal": t("causal.mode_causal"), "bidirectional": t("causal.mode_bidirectional")}
    show_plotly(figure_spec(change_bars, s.words, result.row_change, modes, highlight=j, title=t("causal.leak_title"),
                            value_label=t("causal.leak_value"), exact_zero=t("causal.exact_zero"), height=380,
                            colours=(ACCENT, SECOND), digits=6),
                key="causal_leak_fig")
    if result.rows_changed("bidirectional") == 0:
        st.info(t("causal.leak_same"))
    elif j == 0:
        st.markdown(t("causal.leak_first"))
    elif result.unchanged_before("causal"):
        st.success(t("causal.leak_exact", before=j, j=j + 1, max=repr(result.max_change_before("causal"))))
    else:
        st.warning(t("causal.leak_not_exact", j=j + 1, max=number(result.max_change_before("causal"))))
    st.markdown(t("causal.leak_after", j=j + 1, changed=result.rows_changed("causal", j), total=n - j))
    st.markdown(t("causal.leak_bi", changed=result.rows_changed("bidirectional"), n=n, j=j + 1))
    if j > 0:  # the row that must predict token j: it sees the answer without the mask, never with it
        st.markdown(t("causal.leak_cheat", i=j, j=j + 1, bi=number(float(result.row_change["bidirectional"][j - 1])),
                      causal=number(float(result.row_change["causal"][j - 1]))))
    table = pd.DataFrame({
        t("causal.col_position"): list(range(1, n + 1)),
        t("causal.col_token"): s.words,
        t("causal.col_causal"): result.row_change["causal"].tolist(),
        t("causal.col_bidirectional"): result.row_change["bidirectional"].tolist(),
        t("causal.col_exact"): result.rows_unchanged("causal").tolist(),
    })
    data_table(table, hide_index=True)
    csv_download(t("causal.download_leak"), table, "causal_leak_test.csv", "causal_leak_csv")
    st.page_link("lessons/gpt.py", label=t("causal.gpt_link"), icon=":material/arrow_forward:")  # the real model's mask
