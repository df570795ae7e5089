"""Lesson 7, from attention to a Transformer block: attention alone is order-blind, positional encoding fixes that,
and a position-wise feed-forward layer with residual connections and layer norm completes the block.

Widgets -> attention_core.transformer -> charts.transformer / charts.matrix -> text. All weights are seeded and
untrained (said on the page).
"""

import pandas as pd
import streamlit as st

from attention_core.transformer import STEPS, row_stats, sinusoidal_encoding
from charts.transformer import change_bars, feature_heatmap
from ui.common import (
    MAX_CHARS, bounded_slider, csv_download, glove_vectors, guarded_fragment, md_escape, page_header,
    predict_then_reveal, sentence_tokens, show_unknown, translator, url_selectbox, what_to_try,
)
from ui.display import show_plotly
from ui.figures import figure_spec
from ui.transformer_results import block, locality, shuffled
from ui.word_vectors import word_vectors

S = "transformer"
DEFAULT_TEXT = "the cat sat on the warm mat"
t = translator()
presenter = st.session_state.get("presenter", False)
page_header(t, S, r"\mathrm{PE}_{(p,\,2i)} = \sin\frac{p}{10000^{2i/d}},\ \ \mathrm{PE}_{(p,\,2i+1)} = \cos\frac{p}{10000^{2i/d}}"
            r"\qquad H = \mathrm{LN}\big(Z + \mathrm{Attn}(Z)\big),\ \ Y = \mathrm{LN}\big(H + \mathrm{FFN}(H)\big)")


# --- the sentence and its vectors -------------------------------------------------------------------------
c1, c2, c3 = st.columns([3, 2, 1], gap="medium")
text = c1.text_input(t("transformer.text_label"), value=DEFAULT_TEXT, max_chars=MAX_CHARS, key="transformer_text",
                     bind="query-params")
use_glove = c2.toggle(t("transformer.use_glove"), value=True, help=t("transformer.use_glove_help"),
                      key="transformer_glove", bind="query-params")
seed = int(c3.number_input(t("common.seed"), min_value=0, max_value=2**31 - 1, value=0, step=1,
                           help=t("transformer.seed_help"), key="transformer_seed", bind="query-params"))
tokens = sentence_tokens(t, text)
if tokens is None:
    st.stop()
kv = glove_vectors(t) if use_glove else None
if use_glove and kv is None:
    st.stop()
X, words, unknown = word_vectors(tuple(tokens), use_glove, 0 if use_glove else seed, _kv=kv)
show_unknown(t, unknown)
if not words:
    st.warning(t("transformer.no_known"))
    st.stop()
n, d = X.shape
safe = [md_escape(w) for w in words]
labels = [f"{i + 1}: {w}" for i, w in enumerate(words)]
st.caption(t("transformer.vectors_glove" if use_glove else "transformer.vectors_random", n=n, d=d))
st.caption(t("transformer.untrained_note"))


# --- 1 + 2. order-blindness, and positional encoding (a fragment: the shuffle reruns only this part) -----------
@guarded_fragment
def order_section(X, words: list, safe: list, labels: list, seed: int):
    n, d = X.shape
    st.subheader(t("transformer.order_header"))
    if not presenter:
        st.markdown(t("transformer.order_intro"))
    if n == 1:
        st.info(t("transformer.one_token"))
        return
    perm_seed = int(st.columns([1, 3])[0].number_input(
        t("transformer.perm_seed"), min_value=0, max_value=2**31 - 1, value=0, step=1,
        help=t("transformer.perm_seed_help"), key="transformer_perm", bind="query-params"))
    check = shuffled(X, seed, perm_seed)
    st.markdown(t("transformer.shuffled", order=" ".join(safe[i] for i in check.perm)))
    if not predict_then_reveal(t, S, 3, 1, key="transformer_predict"):
        return
    st.markdown(t("transformer.plain_result", max=f"{check.max_difference['plain']:.1e}",
                  changed=check.tokens_changed("plain"), n=n))
    st.subheader(t("transformer.pe_header"))
    if not presenter:
        st.markdown(t("transformer.pe_intro"))
    pe = sinusoidal_encoding(n, d)
    show_plotly(figure_spec(feature_heatmap, pe, labels, title=t("transformer.pe_title"), value_label="PE",
                            axis_titles=(t("transformer.axis_dim"), t("transformer.axis_position"))),
                key="transformer_pe_fig")
    st.caption(t("transformer.pe_caption", values=t("transformer.pe_values", p1=f"{pe[1, 0]:.4f}", p1c=f"{pe[1, 1]:.4f}",
                                                    last=d - 1, plast=f"{pe[n - 1, d - 1]:.4f}", pos=n - 1)))
    names = {"plain": t("transformer.mode_plain"), "positional": t("transformer.mode_positional")}
    moved = [labels[i] for i in check.perm]
    show_plotly(figure_spec(change_bars, moved, check.row_change, names, title=t("transformer.perm_title"),
                            value_label=t("transformer.change_label"), exact_zero=t("transformer.exact_zero")),
                key="transformer_perm_fig")
    st.markdown(t("transformer.pe_result", max=f"{check.max_difference['positional']:.3f}",
                  changed=check.tokens_changed("positional"), n=n))


# --- 3. the block (a fragment too) ----------------------------------------------------------------------------
@guarded_fragment
def block_section(X, words: list, safe: list, labels: list, seed: int):
    n, d = X.shape
    st.subheader(t("transformer.block_header"))
    if not presenter:
        st.markdown(t("transformer.block_intro"))
    activation = url_selectbox(t("transformer.activation"), ["relu", "gelu"], "transformer_act", widget=st.radio,
                               horizontal=True, format_func=lambda k: t(f"transformer.act_{k}"))
    steps = block(X, seed, activation)
    table = pd.DataFrame({
        t("transformer.col_step"): [t(f"transformer.step_{s}") for s in STEPS],
        t("transformer.col_shape"): [f"{steps[s].shape[0]} × {steps[s].shape[1]}" for s in STEPS],
        t("transformer.col_first", token=words[0]): [", ".join(f"{v:+.3f}" for v in steps[s][0, :3]) for s in STEPS],
        t("transformer.col_mean"): [float(steps[s][0].mean()) for s in STEPS],
        t("transformer.col_var"): [float(steps[s][0].var()) for s in STEPS],
    })
    st.dataframe(table, hide_index=True, column_config={
        t("transformer.col_mean"): st.column_config.NumberColumn(format="%.2e"),
        t("transformer.col_var"): st.column_config.NumberColumn(format="%.5f")})
    st.markdown(t("transformer.shapes", n=n, d=d, h=steps["ffn_hidden"].shape[1]))
    norm1, norm2 = row_stats(steps["add_norm_1"]), row_stats(steps["add_norm_2"])
    gap = max(1 - min(norm1["var_min"], norm2["var_min"]), max(norm1["var_max"], norm2["var_max"]) - 1)
    st.markdown(t("transformer.norm_result", mean=f"{max(norm1['max_abs_mean'], norm2['max_abs_mean']):.1e}",
                  gap=f"{gap:.1e}"))
    out = steps["add_norm_2"]
    show_plotly(figure_spec(feature_heatmap, out, labels, title=t("transformer.out_title"), value_label="Y",
                            axis_titles=(t("transformer.axis_dim"), t("transformer.axis_token"))),
                key="transformer_out_fig")
    frame = pd.DataFrame(out, columns=[str(i) for i in range(d)])
    frame.insert(0, t("transformer.col_token"), words)
    frame.insert(0, t("transformer.col_position"), list(range(1, n + 1)))
    csv_download(t("transformer.download"), frame, "transformer_block_output.csv", key="transformer_csv")

    st.subheader(t("transformer.local_header"))
    if not presenter:
        st.markdown(t("transformer.local_intro"))
    j = 0 if n == 1 else bounded_slider(t("transformer.local_pos"), 1, n, (n + 1) // 2, key="transformer_pos",
                                        bind="query-params") - 1
    check = locality(X, seed, activation, j)
    names = {"ffn": t("transformer.mode_ffn"), "attention": t("transformer.mode_attention")}
    show_plotly(figure_spec(change_bars, labels, check.row_change, names, highlight=j, title=t("transformer.local_title",
                            token=labels[j]), value_label=t("transformer.change_label"),
                            exact_zero=t("transformer.exact_zero")), key="transformer_local_fig")
    st.markdown(t("transformer.local_result", j=j + 1, token=safe[j], ffn=check.rows_changed("ffn"), n=n,
                  others=repr(check.others_max("ffn")), attn=check.rows_changed("attention")))


order_section(X, words, safe, labels, seed)
block_section(X, words, safe, labels, seed)
what_to_try(t, S)
