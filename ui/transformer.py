"""Lesson 7, from attention to a Transformer block: its controls, its sections and their cached calls (the seeded
block's weights and its checks, one computation per distinct input). The page (lessons/transformer.py) only puts
them in order. All weights are seeded and untrained (said on the page).
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd
import streamlit as st


from attention_core.attention import MAX_SEED
from attention_core.causal import replacement_vector
from attention_core.pretrained import INSTALL_COMMAND, ModelUnavailable, load_model, parameter_count
from attention_core.transformer import (
    STEPS, block_weights, locality_check, permutation_check, row_stats, seeded_permutation, sinusoidal_encoding,
    transformer_block,
)
from charts.bars import change_bars
from charts.transformer import feature_heatmap
from ui.shared.common import (
    BOX_CHARS, bounded_slider, csv_download, data_table, explanation, guarded_fragment, md_escape, predict_then_reveal,
    text_limits,
)
from ui.shared.display import on_touch_device, show_plotly
from ui.shared.figures import figure_spec
from ui.shared.i18n import sci
from ui.shared.links import url_selectbox
from ui.shared.word_vectors import sentence_vectors, vector_controls

S = "transformer"
DEFAULT_TEXT = "the cat sat on the warm mat"


@st.cache_data(max_entries=32, show_spinner=False)
def weights_of(d: int, seed: int):
    return block_weights(d, seed)


@st.cache_data(max_entries=128, show_spinner=False)
def shuffled(X, seed: int, perm_seed: int):
    return permutation_check(X, seeded_permutation(len(X), perm_seed), weights_of(X.shape[1], seed).attention)


@st.cache_data(max_entries=128, show_spinner=False)
def block(X, seed: int, activation: str):
    return transformer_block(X, weights_of(X.shape[1], seed), activation)


@st.cache_data(max_entries=256, show_spinner=False)
def locality(X, seed: int, activation: str, position: int):
    H = block(X, seed, activation)["add_norm_1"]
    return locality_check(H, position, replacement_vector(H, seed), weights_of(X.shape[1], seed), activation)


class Controls(NamedTuple):
    text: str
    use_glove: bool
    seed: int


def controls(t) -> Controls:
    """The sentence, GloVe or random vectors, and the seed of the untrained weights, in one row."""
    c1, c2, c3 = st.columns([3, 2, 1], gap="medium")
    text = c1.text_input(t("transformer.text_label"), value=DEFAULT_TEXT, max_chars=BOX_CHARS, key="transformer_text",
                         bind="query-params")
    c1.caption(text_limits(t))
    use_glove, seed = vector_controls(t, S, c2, c3)
    return Controls(text, use_glove, seed)


class Sentence(NamedTuple):
    X: object  # (n, d) token vectors
    words: list
    safe: list  # the words as Markdown that shows them literally
    labels: list  # "p: word", p counted from 0 as in the positional encoding's formula
    seed: int


def section_vectors(t, c: Controls) -> Sentence | None:
    """The sentence's tokens -> X (GloVe, or seeded random); None (with a message shown) if there is none."""
    found = sentence_vectors(t, S, c.text, c.use_glove, c.seed)
    if found is None:
        return None
    X, words, kv = found
    n, d = X.shape
    st.caption(t("transformer.vectors_glove" if kv is not None else "transformer.vectors_random", n=n, d=d))
    st.caption(t("transformer.untrained_note"))
    return Sentence(X, words, [md_escape(w) for w in words], position_labels(words), c.seed)


def position_labels(words) -> list[str]:
    """words -> ["0: the", "1: cat", ...]: every position on this page is p, counted from 0 as in PE's formula."""
    return [f"{p}: {w}" for p, w in enumerate(words)]


@guarded_fragment
def section_order(t, s: Sentence) -> None:
    """1 + 2. Order-blindness, and positional encoding (a fragment: the shuffle reruns only this part)."""
    X, safe, labels, seed = s.X, s.safe, s.labels, s.seed
    n, d = X.shape
    st.subheader(t("transformer.order_header"))
    explanation(t("transformer.order_intro"))
    if n == 1:
        st.info(t("transformer.one_token"))
        return
    perm_seed = int(st.columns([1, 3])[0].number_input(
        t("transformer.perm_seed"), min_value=0, max_value=MAX_SEED, value=0, step=1,
        help=t("transformer.perm_seed_help"), key="transformer_perm", bind="query-params"))
    check = shuffled(X, seed, perm_seed)
    st.markdown(t("transformer.shuffled", order=" ".join(safe[i] for i in check.perm)))
    if not predict_then_reveal(t, S, 3, 1, key="transformer_predict"):
        return
    st.markdown(t("transformer.plain_result", max=sci(check.max_difference["plain"]),
                  changed=check.tokens_changed("plain"), n=n))
    st.subheader(t("transformer.pe_header"))
    explanation(t("transformer.pe_intro"))
    pe = sinusoidal_encoding(n, d)
    show_plotly(figure_spec(feature_heatmap, pe, labels, title=t("transformer.pe_title"), value_label="PE",
                            axis_titles=(t("transformer.axis_dim"), t("transformer.axis_position"))),
                key="transformer_pe_fig")
    caption = "transformer.pe_caption_touch" if on_touch_device() else "transformer.pe_caption"  # no "hover"
    st.caption(t(caption, values=t("transformer.pe_values", p1=f"{pe[1, 0]:.4f}", p1c=f"{pe[1, 1]:.4f}",
                                   last=d - 1, plast=f"{pe[n - 1, d - 1]:.4f}", pos=n - 1)))
    names = {"plain": t("transformer.mode_plain"), "positional": t("transformer.mode_positional")}
    moved = [labels[i] for i in check.perm]
    show_plotly(figure_spec(change_bars, moved, check.row_change, names, title=t("transformer.perm_title"),
                            value_label=t("transformer.change_label"), exact_zero=t("transformer.exact_zero")),
                key="transformer_perm_fig")
    st.markdown(t("transformer.pe_result", max=f"{check.max_difference['positional']:.3f}",
                  changed=check.tokens_changed("positional"), n=n))


def small_number(x: float) -> str:
    """A table's number: +0.123, or 1.2 × 10⁻¹⁷ when it is too small for three decimals (a mean after layer norm)."""
    return f"{x:+.3f}" if abs(x) >= 5e-4 or x == 0 else sci(x, 3)


def section_block(t, s: Sentence) -> str:
    """3. The block, step by step: shapes, the first token's numbers, layer norm's result, the output Y and its CSV.
    -> the feed-forward activation chosen (for the locality check)."""
    X, words, labels, seed = s.X, s.words, s.labels, s.seed
    n, d = X.shape
    st.subheader(t("transformer.block_header"))
    explanation(t("transformer.block_intro"))
    activation = url_selectbox(t("transformer.activation"), ["relu", "gelu"], "transformer_act", widget=st.radio,
                               horizontal=True, format_func=lambda k: t(f"transformer.act_{k}"),
                               help=t("transformer.activation_help"))
    steps = block(X, seed, activation)
    table = pd.DataFrame({
        t("transformer.col_step"): [t(f"transformer.step_{step}") for step in STEPS],
        t("transformer.col_shape"): [f"{steps[step].shape[0]} × {steps[step].shape[1]}" for step in STEPS],
        t("transformer.col_first", token=words[0]): [t.join(f"{v:+.3f}" for v in steps[step][0, :3]) for step in STEPS],
        t("transformer.col_mean"): [small_number(float(steps[step][0].mean())) for step in STEPS],
        t("transformer.col_var"): [f"{float(steps[step][0].var()):.5f}" for step in STEPS],
    })
    data_table(table, hide_index=True)
    st.markdown(t("transformer.shapes", n=n, d=d, h=steps["ffn_hidden"].shape[1]))
    norm1, norm2 = row_stats(steps["add_norm_1"]), row_stats(steps["add_norm_2"])
    gap = max(1 - min(norm1["var_min"], norm2["var_min"]), max(norm1["var_max"], norm2["var_max"]) - 1)
    st.markdown(t("transformer.norm_result", mean=sci(max(norm1["max_abs_mean"], norm2["max_abs_mean"])),
                  gap=sci(gap)))
    out = steps["add_norm_2"]
    show_plotly(figure_spec(feature_heatmap, out, labels, title=t("transformer.out_title"), value_label="Y",
                            axis_titles=(t("transformer.axis_dim"), t("transformer.axis_token"))),
                key="transformer_out_fig")
    frame = pd.DataFrame(out, columns=[str(i) for i in range(d)])
    frame.insert(0, t("transformer.col_token"), words)
    frame.insert(0, t("transformer.col_position"), list(range(n)))
    csv_download(t("transformer.download"), frame, "transformer_block_output.csv", key="transformer_csv")
    return activation


def section_locality(t, s: Sentence, activation: str) -> None:
    """4. Change one token: the feed-forward layer changes only its row, attention every row."""
    X, safe, labels, seed = s.X, s.safe, s.labels, s.seed
    n = len(X)
    st.subheader(t("transformer.local_header"))
    explanation(t("transformer.local_intro"))
    j = 0 if n == 1 else bounded_slider(t("transformer.local_pos"), 0, n - 1, (n + 1) // 2 - 1, key="transformer_pos",
                                        bind="query-params")
    check = locality(X, seed, activation, j)
    names = {"ffn": t("transformer.mode_ffn"), "attention": t("transformer.mode_attention")}
    show_plotly(figure_spec(change_bars, labels, check.row_change, names, highlight=j, title=t("transformer.local_title",
                            token=labels[j]), value_label=t("transformer.change_label"),
                            exact_zero=t("transformer.exact_zero")), key="transformer_local_fig")
    st.markdown(t("transformer.local_result", j=j, token=safe[j], ffn=check.rows_changed("ffn"), n=n,
                  others=repr(check.others_max("ffn")), attn=check.rows_changed("attention")))


@st.cache_resource(show_spinner=False)
def real_model_sizes():
    """-> (config, parameter count) of lesson 8's trained model, or None when its package is not installed."""
    try:
        model = load_model()
    except ModelUnavailable:
        return None
    return model.weights.config, parameter_count(model.weights)


def section_real_model(t, s: Sentence) -> None:
    """5. The real thing: lesson 8's model is a stack of such blocks, with its sizes read from its own config."""
    st.subheader(t("transformer.real_header"))
    sizes = real_model_sizes()
    if sizes is None:
        st.caption(t("transformer.real_missing", command=INSTALL_COMMAND))
        return
    config, params = sizes
    st.markdown(t("transformer.real_model", layers=config.num_layers, d=config.hidden_size, d_here=s.X.shape[1],
                  heads=config.num_heads, head=config.head_size, d_ff=config.intermediate_size,
                  vocab=f"{config.vocab_size:,}", positions=config.max_positions,
                  params=t("transformer.real_params", n=params / float(t("transformer.real_params_unit")))))
    st.page_link("lessons/pretrained.py", label=t("transformer.real_link", all_heads=config.num_layers * config.num_heads),
                 icon=":material/arrow_forward:")
