"""Lesson 3, self-attention: hand-designed heads you can click through, then the same matrix from real GloVe vectors."""

import pandas as pd
import streamlit as st

from attention_core.glove import embed, split_known
from attention_core.self_attention import (
    HEADS, glove_self_attention, lines_to_keep, load_self_attention, matrix_csv, pair_weight_and_rank,
    position_labels, preset_for_sentence, preset_heads, top_targets,
)
from charts.matrix import attention_heatmap
from charts.tokens import token_lines
from ui.common import (
    MAX_CHARS, glove_vectors, heatmap_axes, md_escape, page_header, predict_then_reveal, sentence_tokens, show_plotly, show_unknown,
    translator, url_selectbox, what_to_try,
)
from ui.figures import figure_spec

S = "self_attention"
LATEX = (r"A = \mathrm{softmax}\!\left(\frac{(X W_Q)(X W_K)^\top}{\sqrt{d_k}}\right) \in \mathbb{R}^{n \times n},"
         r"\qquad \mathrm{out}_i = \sum_{j=1}^{n} A_{ij}\,(X W_V)_j")


@st.cache_data(show_spinner=False)
def _data():
    return load_self_attention()


@st.cache_data(show_spinner=False)
def _heads(preset_id: str):
    data = _data()
    return preset_heads(data.by_id(preset_id), data.rule_score)


@st.cache_data(show_spinner=False, max_entries=256)
def _glove(tokens: tuple, mode: str, seed: int, _kv):
    known, unknown = split_known(list(tokens), _kv)
    weights = glove_self_attention(embed(known, _kv)[0], mode, seed) if len(known) >= 2 else None
    return known, unknown, weights


def _tops(tokens, row, count=3) -> str:
    return ", ".join(f"{md_escape(tokens[j])} {row[j]:.1%}" for j in top_targets(row, count))


t = translator()
data = _data()
presenter = st.session_state.get("presenter", False)


def _reset_token():  # a new preset starts on its pronoun
    st.session_state.sa_token = data.by_id(st.session_state.sa_preset).pronoun


def _on_token_click():  # click on a token marker -> the selected token (the selectbox follows)
    points = (st.session_state.get("sa_lines") or {}).get("selection", {}).get("points", [])
    ys = [int(round(p["y"])) for p in points if isinstance(p.get("y"), (int, float))]
    if ys and 0 <= ys[0] < len(data.by_id(st.session_state.sa_preset).tokens):
        st.session_state.sa_token = ys[0]


def _use_preset_text():
    st.session_state.sa_text = data.by_id(st.session_state.sa_preset).glove_text


page_header(t, S, LATEX)
ids = [p.id for p in data.presets]
preset = data.by_id(url_selectbox(t(f"{S}.preset"), ids, "sa_preset", format_func=lambda i: data.by_id(i).label,
                                   on_change=_reset_token))
tokens, n = list(preset.tokens), len(preset.tokens)
st.caption(preset.gloss[t.lang])
st.info(t("common.hand_designed"), icon=":material/edit_note:")
heads = _heads(preset.id)
coref = heads[0]

c_token, c_cut = st.columns(2)
with c_token:  # the token is in the link as its position (?sa_token=5); a bad one falls back to the pronoun
    sel = url_selectbox(t(f"{S}.token"), list(range(n)), "sa_token", format_func=lambda i: f"{tokens[i]} ({i + 1})",
                        default=preset.pronoun)
cutoff = c_cut.slider(t(f"{S}.cutoff"), 0.05, 1.0, 0.9, 0.05, format="%.2f", key="sa_cutoff", bind="query-params",
                      help=t(f"{S}.cutoff_help"))
row = coref[sel]
keep = lines_to_keep(row, cutoff)

left, right = st.columns(2, gap="medium")
with left:
    fig = figure_spec(token_lines, tokens, row, sel, keep=keep, title=t(f"{S}.lines_title", token=tokens[sel]),
                      value_label=t(f"{S}.value_label"), query_label=t(f"{S}.query_label"), key_label=t(f"{S}.key_label"))
    show_plotly(fig, key="sa_lines", on_select=_on_token_click, selection_mode="points")
    st.caption(t(f"{S}.lines_caption", token=md_escape(tokens[sel]), pos=sel + 1, top=_tops(tokens, row),
                 shown=int(keep.sum()), n=n, mass=f"{row[keep].sum():.1%}"))
with right:
    show_plotly(figure_spec(attention_heatmap, coref, tokens, title=t(f"{S}.heat_title"), highlight_row=sel,
                            value_label=t(f"{S}.value_label"), height=fig["layout"]["height"],
                            axis_titles=heatmap_axes(t)), key="sa_heat")
    st.download_button(t(f"{S}.download"), matrix_csv(coref, tokens), file_name=f"self_attention_{preset.id}.csv",
                       mime="text/csv", key="sa_csv", on_click="ignore", icon=":material/download:")
    with st.expander(t(f"{S}.table")):
        labels = position_labels(tokens)
        st.dataframe(pd.DataFrame(coref, index=labels, columns=labels).round(4))

what_to_try(t, S)

st.subheader(t(f"{S}.heads_title"))
if not presenter:
    st.markdown(t(f"{S}.heads_explain", score=f"{data.rule_score:g}"))
for col, name, weights in zip(st.columns(len(HEADS)), HEADS, heads):
    with col:
        show_plotly(figure_spec(attention_heatmap, weights, tokens, title=t(f"{S}.head_{name}"), highlight_row=sel,
                                height=460, show_values=False, value_label=t(f"{S}.value_label"),
                                axis_titles=heatmap_axes(t)), key=f"sa_head_{name}")
        target = top_targets(weights[sel], 1)[0]
        st.caption(t(f"{S}.head_caption", source=md_escape(tokens[sel]), target=md_escape(tokens[target]),
                     weight=f"{weights[sel, target]:.1%}"))
        st.download_button(t(f"{S}.download_head"), matrix_csv(weights, tokens), mime="text/csv", on_click="ignore",
                           file_name=f"self_attention_{preset.id}_{name}.csv", key=f"sa_head_csv_{name}")

st.subheader(t(f"{S}.glove_title"))
if not presenter:
    st.markdown(t(f"{S}.glove_explain"))
revealed = predict_then_reveal(t, S, 4, 3, key="sa_predict")
text = st.text_input(t(f"{S}.text"), value=data.by_id("animal").glove_text, max_chars=MAX_CHARS, key="sa_text",
                     bind="query-params")
c_text, c_mode, c_seed = st.columns([2, 2, 1], vertical_alignment="bottom")
c_text.button(t(f"{S}.use_preset"), on_click=_use_preset_text, key="sa_use_preset")
random_qk = c_mode.toggle(t(f"{S}.random"), value=False, key="sa_random", bind="query-params")
seed = c_seed.number_input(t("common.seed"), min_value=0, max_value=2**31 - 1, value=0, step=1, key="sa_seed",
                           bind="query-params", disabled=not random_qk)

glove_tokens = sentence_tokens(t, text) if revealed else None
kv = glove_vectors(t) if glove_tokens else None
if kv is not None:
    mode = "random" if random_qk else "raw"
    known, unknown, G = _glove(tuple(glove_tokens), mode, int(seed) if random_qk else 0, kv)
    show_unknown(t, unknown)
    if G is None:
        st.warning(t(f"{S}.few_known"))
    else:
        match = preset_for_sentence(data, known, preset.id)
        q = match[1][0] if match else 0
        title = t(f"{S}.glove_random", seed=int(seed)) if random_qk else t(f"{S}.glove_raw")
        g_left, g_right = st.columns(2, gap="medium")
        g_keep = lines_to_keep(G[q], cutoff)
        g_fig = figure_spec(token_lines, known, G[q], q, keep=g_keep, title=t(f"{S}.glove_lines_title", token=known[q]),
                            value_label=t(f"{S}.value_label"), query_label=t(f"{S}.query_label"),
                            key_label=t(f"{S}.key_label"))
        with g_left:
            show_plotly(g_fig, key="sa_glove_lines")
            st.caption(t(f"{S}.glove_caption", token=md_escape(known[q]), pos=q + 1, top=_tops(known, G[q])))
        with g_right:
            show_plotly(figure_spec(attention_heatmap, G, known, title=title, highlight_row=q,
                                    value_label=t(f"{S}.value_label"), height=g_fig["layout"]["height"],
                                    axis_titles=heatmap_axes(t)), key="sa_glove_heat")
            st.download_button(t(f"{S}.download_glove"), matrix_csv(G, known), file_name=f"self_attention_glove_{mode}.csv",
                               mime="text/csv", key="sa_glove_csv", on_click="ignore", icon=":material/download:")
        if match is None:
            st.info(t(f"{S}.no_pair", source=preset.glove_pair[0], target=preset.glove_pair[1]))
        else:
            ref, (gi, gj) = match
            ref_heads = _heads(ref.id)
            hand_w, hand_r = pair_weight_and_rank(ref_heads[0], ref.pronoun, ref.antecedent)
            glove_w, glove_r = pair_weight_and_rank(G, gi, gj)
            m_hand, m_glove = st.columns(2)
            m_hand.metric(t(f"{S}.contrast_hand", source=ref.tokens[ref.pronoun], target=ref.tokens[ref.antecedent]),
                          f"{hand_w:.1%}", t(f"{S}.contrast_rank", rank=hand_r, n=len(ref.tokens)), delta_color="off", delta_arrow="off", border=True)
            m_glove.metric(t(f"{S}.contrast_glove", source=md_escape(known[gi]), target=md_escape(known[gj])),
                           f"{glove_w:.1%}", t(f"{S}.contrast_rank", rank=glove_r, n=len(known)), delta_color="off", delta_arrow="off", border=True)
            st.caption(t(f"{S}.contrast_caption", source_hand=ref.tokens[ref.pronoun], target_hand=ref.tokens[ref.antecedent],
                         rank_hand=hand_r, n_hand=len(ref.tokens), target=md_escape(known[gj]), rank=glove_r, n=len(known)))
