"""Lesson 6, the GloVe experiment: one function per section (the sentence and its words: ui/glove/sentence.py)
((a) raw GloVe, (b) untrained projections, (c) 3-D PCA, (d) training) and their cached calls. The page
(lessons/glove.py) only puts them in order and hands each section what the others returned: (b) returns its
projection setting and (d) the trained head, and (c) draws the row the learner picks from these.

Each section wires widgets -> attention_core -> charts -> text; the math lives in attention_core.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.attention import MAX_SEED, ranks_in_rows
from attention_core.glove.pronouns import load_pronoun_dataset, pronoun_batch
from attention_core.glove.rows import direction_ranks, projected_row, rank_band, rank_counts, rank_summary, raw_row
from attention_core.glove.training import TrainSetting, accuracy, head_rows, sentence_row
from attention_core.pca import pca_3d
from attention_core.self_attention import top_targets
from charts.bars import weight_bars
from charts.glove import attention_cloud_3d, loss_curve, rank_histogram
from ui.shared.common import (
    csv_download, data_table, explanation, guarded_fragment, md_escape, predict_then_reveal, presenting,
)
from ui.shared.display import on_touch_device, show_plotly
from ui.shared.figures import figure_spec
from ui.glove.sentence import DOCUMENT_A, Sentence, number, quoted
from ui.glove.training import run_training, section_side_by_side
from ui.shared.links import url_selectbox

S = "glove"
N_DRAWS = 2000  # random directions in the rank histogram: shares to about +-1 percentage point
HIST_SEED = 0  # the histogram's one generator
DK_OPTIONS = [16, 50, 64]
TRAIN_DK = [2, 4, 8, 16, 50, 64]
TRAIN_LR = [0.003, 0.01, 0.03, 0.1, 0.3]
TRAIN_WD = [0.0, 0.0001, 0.001, 0.01]
DEFAULT = TrainSetting()
TRAINED = "glove_trained"  # st.session_state key of this user's trained head (read and written by (d) only)


@st.cache_data(max_entries=256, show_spinner=False)
def raw_weights(X, qi: int):
    return raw_row(X, qi)


@st.cache_data(max_entries=256, show_spinner=False)
def projected_weights(X, qi: int, d_k: int, seed: int):
    return projected_row(X, qi, d_k, seed)


@st.cache_data(max_entries=64, show_spinner=False)
def draw_rank_counts(X, ti: int, n_draws: int = N_DRAWS):
    """The histogram: the same for every query word and d_k (attention_core.glove.rows.direction_ranks says why)."""
    return rank_counts(direction_ranks(X, ti, n_draws, HIST_SEED), X.shape[0])


@st.cache_data(max_entries=128, show_spinner=False)
def cloud_coords(X):
    return pca_3d(X)


# The training set is the same for everyone and never changes: one shared read-only copy (st.cache_resource), not a
# pickled copy per rerun of the training section (st.cache_data).
@st.cache_resource(show_spinner=False)
def pronoun_data(_kv):
    dataset = load_pronoun_dataset()
    batches = pronoun_batch(dataset.train, _kv), pronoun_batch(dataset.held_out, _kv)
    for batch in batches:
        for value in vars(batch).values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
    return dataset, *batches


@st.cache_data(max_entries=64, show_spinner=False)
def evaluation(W_q, W_k, W_q0, W_k0, context: bool, _batch, split: str):
    after = head_rows(W_q, W_k, _batch, context)
    before = head_rows(W_q0, W_k0, _batch, context)
    return after, before


def row_table(t, words, weights, target_index: int) -> dict:
    """The row as a table sorted by weight (rank, word, position, weight); the target is marked."""
    order = top_targets(weights)
    ranks = ranks_in_rows(weights, order)
    return {
        t("glove.col_rank"): [int(r) for r in ranks],
        t("glove.col_word"): [words[i] + (" ◀" if i == target_index else "") for i in order],
        t("glove.col_position"): [int(i) + 1 for i in order],
        t("glove.col_weight"): [float(weights[i]) for i in order],
    }


def show_table(t, table: dict, key: str, file_name: str) -> None:
    weight_col = t("glove.col_weight")
    data_table(table, hide_index=True, key=f"{key}_table",
               column_config={weight_col: st.column_config.NumberColumn(format="%.4f")})
    csv_download(t("glove.download"), pd.DataFrame(table), file_name, f"{key}_download")


@guarded_fragment
def section_raw(t, s: Sentence) -> None:
    """(a) Q = K = the raw 50-d vectors, behind a prediction (a fragment: answering reruns only this)."""
    words, X, qi, ti = s.words, s.X, s.qi, s.ti
    st.subheader(t("glove.a_header"))
    st.latex(r"w = \mathrm{softmax}\!\left(\frac{x_{\mathrm{query}}\, X^\top}{\sqrt{50}}\right)")
    explanation(t("glove.a_explain"))
    row = raw_weights(X, qi)
    rank, n = int(ranks_in_rows(row, ti)), len(words)
    order = top_targets(row)
    top = t.join(quoted(t, words[i]) + (t("glove.itself") if i == qi else "") for i in order[:4])
    if predict_then_reveal(t, S, 4, rank_band(rank, n), key="glove_predict",
                           query=md_escape(words[qi]), target=md_escape(words[ti]), rank=rank, n=n, top=top):
        st.markdown(t("glove.a_rank", target=md_escape(words[ti]), query=md_escape(words[qi]),
                      rank=rank, n=n, weight=number(row[ti]),
                      top=md_escape(words[order[0]]), top_weight=number(row[order[0]])))
        if s.preset == DOCUMENT_A and (words[qi], words[ti]) == ("it", "animal"):  # Document A's row and rank
            teachers_note(t, words, row, rank)
        show_plotly(figure_spec(weight_bars, words, row, title=t("glove.bars_raw", query=words[qi]),
                                highlight=ti, value_label=t("glove.weight")), key="glove_raw_bars")
        show_table(t, row_table(t, words, row, ti), "glove_raw", "glove_raw_row.csv")


def ordinal(t, rank: int) -> str:
    """10 -> "10th" in English, "10" in Japanese (its sentence says 位)."""
    if t.lang != "en":
        return str(rank)
    suffix = "th" if 10 <= rank % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(rank % 10, "th")
    return f"{rank}{suffix}"


def teachers_note(t, words, row, rank: int) -> None:
    """For a teacher holding Document A: its row is this row; its prose and its table disagree on the rank."""
    weight = {word: float(row[words.index(word)]) for word in ("it", "not", "because", "animal")}
    with st.expander(t("glove.teachers_title"), icon=":material/school:"):
        st.markdown(t("glove.teachers_note", it=f"{weight['it']:.4f}", it6=f"{weight['it']:.6f}",
                      **{k: f"{v:.4f}" for k, v in weight.items() if k != "it"},
                      rank=rank, rank_th=ordinal(t, rank), n=len(words)))


def reroll() -> None:
    """The re-roll button: the next seed (wrapping to 0 after the largest)."""
    st.session_state["glove_seed"] = (int(st.session_state.get("glove_seed", 0)) + 1) % (MAX_SEED + 1)


class Projection(NamedTuple):
    d_k: int
    seed: int


def section_random(t, s: Sentence) -> Projection:
    """(b) Q = X W_Q, K = X W_K with fresh Glorot matrices. -> the d_k and seed it shows (for (c))."""
    words, X, qi, ti = s.words, s.X, s.qi, s.ti
    st.subheader(t("glove.b_header"))
    st.latex(r"Q = X W_Q,\; K = X W_K,\quad (W_Q)_{ij}, (W_K)_{ij} \sim \mathcal{N}\!\left(0, \tfrac{2}{50 + d_k}\right),"
             r"\quad w = \mathrm{softmax}\!\left(\frac{q_{\mathrm{query}} K^\top}{\sqrt{d_k}}\right)")
    explanation(t("glove.b_explain"))
    c1, c2, c3 = st.columns([1, 1, 1], gap="medium", vertical_alignment="bottom")
    d_k = c1.selectbox(t("glove.dk_label"), DK_OPTIONS, key="glove_dk", bind="query-params")
    seed = int(c2.number_input(t("common.seed"), min_value=0, max_value=MAX_SEED, value=0, step=1,
                               key="glove_seed", bind="query-params"))
    c3.button(t("glove.reroll"), on_click=reroll, key="glove_reroll", icon=":material/casino:")
    row = projected_weights(X, qi, d_k, seed)
    rank = int(ranks_in_rows(row, ti))
    st.markdown(t("glove.b_rank", seed=seed, d_k=d_k, target=md_escape(words[ti]), rank=rank, n=len(words)))
    show_plotly(figure_spec(weight_bars, words, row,
                            title=t("glove.bars_projected", query=words[qi], seed=seed, d_k=d_k),
                            highlight=ti, value_label=t("glove.weight")), key="glove_projected_bars")
    counts = draw_rank_counts(X, ti)
    summary = rank_summary(counts)
    show_plotly(figure_spec(rank_histogram, counts, highlight_rank=rank,
                            title=t("glove.hist_title", target=words[ti], seeds=f"{N_DRAWS:,}"),
                            rank_label=t("glove.rank_axis"), share_label=t("glove.share_axis"),
                            observed_label=t("glove.observed"), uniform_label=t("glove.uniform")),
                key="glove_rank_hist")
    st.caption(t("glove.hist_caption", draws=f"{N_DRAWS:,}", rank=rank, target=md_escape(words[ti]),
                 mean=f"{summary['mean_rank']:.2f}", uniform_mean=f"{summary['uniform_mean_rank']:.1f}",
                 top=f"{100 * summary['top_share']:.1f}", bottom=f"{100 * summary['bottom_share']:.1f}",
                 uniform=f"{100 * summary['uniform_share']:.1f}", halves=halves(t, summary)))
    explanation(t("glove.b_symmetry"))
    if u_shaped(summary):
        explanation(t("glove.b_ends", target=md_escape(words[ti]), top=f"{100 * summary['top_share']:.1f}",
                      bottom=f"{100 * summary['bottom_share']:.1f}", uniform=f"{100 * summary['uniform_share']:.1f}"))
    explanation(t("glove.hist_why", draws=f"{N_DRAWS:,}", hist_seed=HIST_SEED, d=X.shape[1],
                  numbers=f"{2 * X.shape[1] * d_k:,}", target=md_escape(words[ti])), caption=True)
    ranks = list(range(1, len(words) + 1))
    csv_download(t("glove.download_hist"), pd.DataFrame({
        t("glove.col_rank"): ranks, t("glove.col_count"): [int(c) for c in counts],
        t("glove.col_share"): [float(c) / N_DRAWS for c in counts],
        t("glove.col_uniform"): [1.0 / len(words)] * len(words),
    }), "glove_rank_distribution.csv", "glove_hist_download")
    return Projection(d_k, seed)


def halves(t, summary: dict) -> str:
    """"top half (ranks 1-6) 43.0 %, bottom half (ranks 7-12) 42.6 %", with the middle rank of an odd n between."""
    n, half = summary["n"], summary["n"] // 2
    values = dict(top_last=half, bottom_first=n - half + 1, n=n, top=f"{100 * summary['top_half_share']:.1f}",
                  bottom=f"{100 * summary['bottom_half_share']:.1f}")
    if not summary["middle_rank"]:
        return t("glove.halves_even", **values)
    return t("glove.halves_odd", middle=summary["middle_rank"], middle_share=f"{100 * summary['middle_share']:.1f}",
             **values)


def u_shaped(summary: dict) -> bool:
    """Both ends of the histogram hold more than twice the uniform share (what b_ends says)."""
    return min(summary["top_share"], summary["bottom_share"]) > 2 * summary["uniform_share"]


def section_cloud(t, s: Sentence, projection: Projection, trained: dict | None) -> None:
    """(c) 3-D PCA of the word vectors; the query's weights as size, colour and line width, for the row the learner
    picks: raw (a), the projection (b) shows, or the head (d) trained (once there is one)."""
    words, X, qi = s.words, s.X, s.qi
    st.subheader(t("glove.c_header"))
    explanation(t("glove.c_explain_touch" if on_touch_device() else "glove.c_explain"))  # no "hover"
    rows = {"raw": raw_weights(X, qi), "projected": projected_weights(X, qi, *projection)}
    if trained is not None:
        rows["trained"] = sentence_row(trained["W_q"], trained["W_k"], X, qi, trained["setting"]["context"])
    mode = url_selectbox(t("glove.cloud_mode"), list(rows), "glove_cloud", widget=st.radio, horizontal=True,
                         format_func=lambda m: t(f"glove.mode_{m}"))
    weights = rows[mode]
    coords, explained = cloud_coords(X)
    show_plotly(figure_spec(attention_cloud_3d, coords, words, weights, qi,
                            title=t("glove.cloud_title", query=words[qi], mode=t(f"glove.mode_{mode}")),
                            weight_label=t("glove.weight"), query_label=t("glove.query_marker")),
                key="glove_cloud_fig")
    order = [i for i in top_targets(weights) if i != qi][:3]
    st.caption(t("glove.cloud_caption", n=len(words), var=f"{100 * explained.sum():.1f}",
                 top=t.join(f"{md_escape(words[i])} {number(weights[i])}" for i in order)))


def train_controls(t) -> TrainSetting:
    c = st.columns(6, gap="small", vertical_alignment="bottom")
    d_k = c[0].selectbox(t("glove.train_dk"), TRAIN_DK, index=TRAIN_DK.index(DEFAULT.d_k), key="glove_train_dk")
    lr = c[1].selectbox(t("glove.train_lr"), TRAIN_LR, index=TRAIN_LR.index(DEFAULT.learning_rate), key="glove_train_lr")
    steps = c[2].slider(t("glove.train_steps"), 20, 800, DEFAULT.steps, step=10, key="glove_train_steps")
    wd = c[3].selectbox(t("glove.train_wd"), TRAIN_WD, index=TRAIN_WD.index(DEFAULT.weight_decay), key="glove_train_wd",
                        help=t("glove.train_wd_help"))
    seed = c[4].number_input(t("glove.train_seed"), 0, MAX_SEED, DEFAULT.seed, step=1, key="glove_train_seed")
    context = c[5].toggle(t("glove.train_context"), DEFAULT.context, help=t("glove.train_context_help"),
                          key="glove_train_context")
    return TrainSetting(int(d_k), float(lr), int(steps), float(wd), int(seed), bool(context))


def section_train(t, s: Sentence) -> dict | None:
    """(d) Learn W_Q and W_K on pronoun sentences; report loss, held-out accuracy and the user's row.
    -> this learner's trained head (kept for the session), or None before the first training run."""
    words, X, qi, ti = s.words, s.X, s.qi, s.ti
    st.subheader(t("glove.d_header"))
    st.latex(r"h_i = x_i + \operatorname{mean}_{j > i}\, x_j,\qquad s_j = \frac{(h_{\mathrm{it}} W_Q)\cdot(h_j W_K)}"
             r"{\sqrt{d_k}},\qquad a = \mathrm{softmax}(s)")
    st.latex(r"L = -\frac{1}{m}\sum_{\text{sentences}} \log a_{c} + \frac{\lambda}{2}\left(\lVert W_Q\rVert^2 +"
             r" \lVert W_K\rVert^2\right),\quad \frac{\partial L}{\partial s} = \frac{a - e_c}{m}")
    st.latex(r"\frac{\partial L}{\partial W_Q} = \sum h_{\mathrm{it}}^\top \frac{(a - e_c)^\top K}{m\sqrt{d_k}} + \lambda W_Q,"
             r"\qquad \frac{\partial L}{\partial W_K} = \sum H^\top \frac{(a - e_c)\, q}{m\sqrt{d_k}} + \lambda W_K")
    dataset, train_batch, held_batch = pronoun_data(s.kv)
    explanation(t("glove.d_symbols"))
    explanation(t("glove.d_explain"))
    explanation(t("glove.d_why_context"))
    explanation(t("glove.d_encoder"))
    st.caption(t("glove.dataset_info", train=len(dataset.train), pairs=len(dataset.train) // 2,
                 held=len(dataset.held_out), example=md_escape(dataset.train[0].text),
                 answer=md_escape(dataset.train[0].answer)))
    setting = train_controls(t)
    if st.button(t("glove.train_button"), type="primary", key="glove_train", icon=":material/model_training:"):
        st.session_state[TRAINED] = run_training(t, train_batch, setting)
    state = st.session_state.get(TRAINED)
    if state is None:
        st.info(t("glove.not_trained"))
        return None
    used = TrainSetting(**state["setting"])
    st.success(t("glove.setting_used", d_k=used.d_k, lr=used.learning_rate, steps=used.steps, wd=used.weight_decay,
                 seed=used.seed, context=t("glove.context_on" if used.context else "glove.context_off"),
                 seconds=f"{state['seconds']:.2f}"))
    if used != setting:
        st.caption(t("glove.setting_changed"))
    losses = state["losses"]
    show_plotly(figure_spec(loss_curve, losses, title=t("glove.loss_title"), step_label=t("glove.step_axis"),
                            loss_label=t("glove.loss_axis")), key="glove_loss_fig")
    st.caption(t("glove.loss_caption", first=number(losses[0]), last=number(losses[-1]), steps=used.steps))
    args = (state["W_q"], state["W_k"], state["W_q_init"], state["W_k_init"], used.context)
    held_after, held_before = evaluation(*args, held_batch, "held_out")
    train_after, _ = evaluation(*args, train_batch, "train")
    m1, m2, m3 = st.columns(3)
    acc_after, acc_before = accuracy(held_after, held_batch.answer), accuracy(held_before, held_batch.answer)
    m1.metric(t("glove.acc_held"), f"{100 * acc_after:.1f} %", f"{100 * (acc_after - acc_before):+.1f}")
    m2.metric(t("glove.acc_before"), f"{100 * acc_before:.1f} %")
    m3.metric(t("glove.acc_train"), f"{100 * accuracy(train_after, train_batch.answer):.1f} %")
    lengths = held_batch.mask.sum(axis=1)
    st.caption(t("glove.acc_caption", right=int(round(acc_after * held_batch.size)), n=held_batch.size,
                 before=int(round(acc_before * held_batch.size)),
                 words=f"{lengths.min()}" if lengths.min() == lengths.max() else f"{lengths.min()}–{lengths.max()}",
                 chance=f"{100 * float(np.mean(1 / lengths)):.1f}"))
    ranks_after, ranks_before = ranks_in_rows(held_after, held_batch.answer), ranks_in_rows(held_before, held_batch.answer)
    table = {
        t("glove.col_sentence"): [s.text for s in dataset.held_out],
        t("glove.col_answer"): [s.answer for s in dataset.held_out],
        t("glove.col_top"): [s.tokens[top_targets(r, 1)[0]] for s, r in zip(dataset.held_out, held_after)],
        t("glove.col_rank_before"): [int(r) for r in ranks_before],
        t("glove.col_rank_after"): [int(r) for r in ranks_after],
        t("glove.col_weight"): [float(r[s.answer_index]) for s, r in zip(dataset.held_out, held_after)],
    }
    with st.expander(t("glove.held_table_title", n=len(dataset.held_out)), expanded=not presenting()):
        show_table(t, table, "glove_held", "glove_held_out.csv")
    section_side_by_side(t, state, held_before, held_after)
    your_sentence(t, state, dataset, words, X, qi, ti)
    return state


def your_sentence(t, state, dataset, words, X, qi: int, ti: int) -> None:
    st.markdown("##### " + t("glove.yours_header"))
    context = state["setting"]["context"]
    before = sentence_row(state["W_q_init"], state["W_k_init"], X, qi, context)
    after = sentence_row(state["W_q"], state["W_k"], X, qi, context)
    left, right = st.columns(2, gap="medium")
    with left:
        show_plotly(figure_spec(weight_bars, words, before, title=t("glove.before_title", query=words[qi]),
                                highlight=ti, value_label=t("glove.weight")), key="glove_before_bars")
    with right:
        show_plotly(figure_spec(weight_bars, words, after, title=t("glove.after_title", query=words[qi]),
                                highlight=ti, value_label=t("glove.weight")), key="glove_after_bars")
    st.markdown(t("glove.your_rank", target=md_escape(words[ti]), query=md_escape(words[qi]), n=len(words),
                  before=int(ranks_in_rows(before, ti)), after=int(ranks_in_rows(after, ti)),
                  weight=number(after[ti])))
    if words[qi] != dataset.pronoun:
        st.caption(t("glove.query_not_pronoun", query=md_escape(words[qi]), pronoun=dataset.pronoun))
    if tuple(words) in {s.tokens for s in dataset.train}:
        st.caption(t("glove.in_training"))
    else:
        unseen = [w for w in dict.fromkeys(words) if w not in dataset.training_words()]
        st.caption(t("glove.not_in_training", words=t.join(md_escape(w) for w in unseen) or "—"))
    show_table(t, row_table(t, words, after, ti), "glove_after", "glove_trained_row.csv")
