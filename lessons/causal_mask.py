"""Lesson 5, the causal mask: scores above the diagonal become -inf, the weights turn lower-triangular.

Widgets -> attention_core.causal -> charts -> text. Q, K, V = token vectors x seeded random projections (said on the page).
"""

import pandas as pd
import streamlit as st

from attention_core.causal import mask_facts, replacement_vector
from attention_core.sentences import load_sentences
from attention_core.text import tokenize
from charts.bars import change_bars
from charts.causal import generation_animation, masked_scores_heatmap, weights_heatmap
from charts.style import ACCENT, SECOND
from ui.common import (
    MAX_CHARS, bounded_slider, csv_download, glove_vectors, guarded_fragment, heatmap_axes, md_escape, page_header,
    predict_then_reveal, sentence_tokens, show_unknown, translator, url_selectbox, what_to_try,
)
from ui.display import show_plotly
from ui.causal_results import csv_text, experiment, frames_of, leak
from ui.figures import figure_spec
from ui.word_vectors import word_vectors

S = "causal"
t = translator()
presenter = st.session_state.get("presenter", False)
page_header(t, S, r"M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}"
            r"\qquad \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V")


# --- the sentence and its vectors -------------------------------------------------------------------------
presets = {s.id: s for s in load_sentences()}
first = next(iter(presets))
c1, c2, c3 = st.columns([3, 2, 1], gap="medium")
choice = url_selectbox(t("common.preset"), [*presets, "custom"], "causal_preset", widget=c1.selectbox,
                       format_func=lambda k: t("common.custom") if k == "custom" else presets[k].label[t.lang])
if choice == "custom":
    text = c1.text_input(t("causal.text_label"), value=presets[first].text, max_chars=MAX_CHARS,
                         key="causal_text", bind="query-params")
else:
    text = presets[choice].text
    c1.caption(md_escape(text))
use_glove = c2.toggle(t("causal.use_glove"), value=True, help=t("causal.use_glove_help"),
                      key="causal_glove", bind="query-params")
seed = int(c3.number_input(t("common.seed"), min_value=0, max_value=2**31 - 1, value=0, step=1,
                           help=t("causal.seed_help"), key="causal_seed", bind="query-params"))

tokens = sentence_tokens(t, text)
if tokens is None:
    st.stop()
kv = glove_vectors(t) if use_glove else None
if use_glove and kv is None:
    st.stop()
X, words, unknown = word_vectors(tuple(tokens), use_glove, 0 if use_glove else seed, _kv=kv)
show_unknown(t, unknown)
if not words:
    st.warning(t("causal.no_known"))
    st.stop()
n = len(words)
safe = [md_escape(w) for w in words]
st.caption(t("causal.vectors_glove" if use_glove else "causal.vectors_random", d=X.shape[1])
           + " " + t("causal.projection_note"))
res = experiment(X, seed)
facts = mask_facts(res)

# --- 1. masked scores ---------------------------------------------------------------------------------------
st.subheader(t("causal.scores_header"))
show_plotly(figure_spec(masked_scores_heatmap, res["causal"].scores, words, title=t("causal.scores_title"),
                        value_label=t("causal.score_label"), masked_note=t("causal.masked_note"),
                        axis_titles=heatmap_axes(t)), key="causal_scores_fig")
st.caption(t("causal.scores_caption", masked=facts["masked"], total=n * n))
csv_download(t("causal.download"), csv_text(tuple(words), X, seed), "causal_mask_matrices.csv", "causal_download")

# --- 2. bidirectional vs causal weights, behind the prediction ------------------------------------------------
st.subheader(t("causal.matrices_header"))
if predict_then_reveal(t, S, 4, 1, key="causal_predict"):
    left, right = st.columns(2, gap="medium")
    with left:
        show_plotly(figure_spec(weights_heatmap, res["bidirectional"].weights, words, title=t("causal.bi_title"),
                                value_label=t("causal.weight_label"), axis_titles=heatmap_axes(t)), key="causal_bi_fig")
    with right:
        show_plotly(figure_spec(
            weights_heatmap, res["causal"].weights, words, title=t("causal.causal_title"), hidden=~res["causal"].mask,
            value_label=t("causal.weight_label"), highlight_row=0, axis_titles=heatmap_axes(t)), key="causal_causal_fig")
    if n > 1:
        st.caption(t("causal.matrices_caption", masked=facts["masked"], causal_max=repr(facts["causal_max_above"]),
                     first=repr(facts["first_self"]), bi_min=facts["bidirectional_min_above"],
                     err=facts["row_sum_error"]))
    else:
        st.caption(t("causal.matrices_caption_one"))

# --- 3. generation (a fragment: moving its slider redraws only this part) ---------------------------------------
@guarded_fragment
def generation_section(X, words: list, safe: list, seed: int, first_self: float):
    n = len(words)
    st.subheader(t("causal.generation_header"))
    if n > 1:
        generated = bounded_slider(t("causal.generated_label"), 1, n, n, key="causal_generated", bind="query-params")
    else:
        generated = 1
        st.caption(t("causal.one_token"))
    show_plotly(figure_spec(generation_animation, frames_of(X, seed), words, generated,
                            value_label=t("causal.weight_label"), title=t("causal.generation_title", n=n),
                            play_label=t("causal.play"), pause_label=t("causal.pause"),
                            step_label=t("causal.step_label"), axis_titles=heatmap_axes(t)),
                key="causal_generation_fig")
    newest = experiment(X, seed)["causal"].weights[generated - 1, :generated]
    st.caption(t("causal.generation_caption", k=generated, token=safe[generated - 1],
                 weights=", ".join(f"{w} {v:.4f}" for w, v in zip(safe, newest))))
    st.markdown(t("causal.first_row", value=repr(first_self)))
    if not presenter:
        st.caption(t("causal.generation_note"))


# --- 4. leak test (a fragment too) -----------------------------------------------------------------------------
@guarded_fragment
def leak_section(X, words: list, safe: list, seed: int, use_glove: bool, kv):
    n = len(words)
    st.subheader(t("causal.leak_header"))
    if not presenter:
        st.caption(t("causal.leak_intro"))
    l1, l2, l3 = st.columns(3, gap="medium")
    with l1:
        j = 0 if n == 1 else bounded_slider(t("causal.leak_pos"), 1, n, (n + 1) // 2, key="causal_leak_pos",
                                            bind="query-params") - 1
        st.caption(f"{j + 1}: {safe[j]}")
    how = url_selectbox(t("causal.leak_how"), ["word", "random"], "causal_leak_how", widget=l2.radio, horizontal=True,
                        format_func=lambda k: t(f"causal.leak_how_{k}"))
    new_vector, new_name = replacement_vector(X, seed), t("causal.random_vector")
    if how == "word":
        word = l3.text_input(t("causal.leak_word"), value="dog", max_chars=MAX_CHARS, key="causal_leak_word",
                             bind="query-params")
        repl = tokenize(word)[:1]
        W1 = word_vectors(tuple(repl), use_glove, 0 if use_glove else seed, _kv=kv)[0] if repl else None
        if W1 is not None and len(W1):
            new_vector, new_name = W1[0], md_escape(repl[0])
        else:
            l3.caption(t("causal.leak_word_unknown"))
    st.markdown(t("causal.leak_changing", j=j + 1, old=safe[j], new=new_name))
    result = leak(X, j, new_vector, seed)
    modes = {"causal": t("causal.mode_causal"), "bidirectional": t("causal.mode_bidirectional")}
    show_plotly(figure_spec(change_bars, words, result.row_change, modes, highlight=j, title=t("causal.leak_title"),
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
        st.warning(t("causal.leak_not_exact", j=j + 1, max=repr(result.max_change_before("causal"))))
    st.markdown(t("causal.leak_after", j=j + 1, changed=result.rows_changed("causal", j), total=n - j))
    st.markdown(t("causal.leak_bi", changed=result.rows_changed("bidirectional"), n=n, j=j + 1))
    if j > 0:  # the row that must predict token j: it sees the answer without the mask, never with it
        st.markdown(t("causal.leak_cheat", i=j, j=j + 1, bi=f"{result.row_change['bidirectional'][j - 1]:.3g}",
                      causal=repr(float(result.row_change["causal"][j - 1]))))
    table = pd.DataFrame({
        t("causal.col_position"): list(range(1, n + 1)),
        t("causal.col_token"): words,
        t("causal.col_causal"): result.row_change["causal"].tolist(),
        t("causal.col_bidirectional"): result.row_change["bidirectional"].tolist(),
        t("causal.col_exact"): result.rows_unchanged("causal").tolist(),
    })
    st.dataframe(table, hide_index=True)
    csv_download(t("causal.download_leak"), table, "causal_leak_test.csv", "causal_leak_csv")


generation_section(X, words, safe, seed, facts["first_self"])
leak_section(X, words, safe, seed, use_glove, kv)
what_to_try(t, S)
