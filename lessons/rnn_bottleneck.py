"""Lesson 1, the RNN bottleneck: an Elman RNN forgets early words; attention reaches every word in one step."""

import pandas as pd
import streamlit as st

from attention_core.glove import embed
from attention_core.rnn import influence_profile, memory_probe, sequential_steps
from attention_core.sentences import load_sentences
from charts.rnn import influence_chart, memory_probe_chart
from ui.common import (
    MAX_CHARS,
    glove_vectors,
    md_escape,
    page_header,
    predict_then_reveal,
    sentence_tokens,
    show_plotly,
    show_unknown,
    translator,
    url_selectbox,
    what_to_try,
)
from ui.figures import figure_spec

SECTION = "rnn"
FORMULA = (
    r"h_t = \tanh\left(W_x x_t + W_h h_{t-1} + b\right), \qquad "
    r"\frac{\partial h_T}{\partial x_t} = \Bigl(\prod_{k=T}^{t+1} \mathrm{diag}\bigl(1 - h_k^2\bigr) W_h\Bigr)"
    r"\, \mathrm{diag}\bigl(1 - h_t^2\bigr) W_x"
)
CUSTOM = "custom"
DEFAULT_PRESET = "long_memory"
PROBE_HIDDEN = (8, 32, 128)
PROBE_LENGTHS = tuple(range(1, 41))
PROBE_TRAIN, PROBE_TEST = 2000, 500


@st.cache_data(show_spinner=False)
def presets():
    return load_sentences()


@st.cache_data(show_spinner=False, max_entries=256)
def profile_for(tokens: tuple[str, ...], hidden: int, radius: float, seed: int, _kv):
    vectors, unknown = embed(list(tokens), _kv)
    return (influence_profile(vectors, hidden, radius, seed) if len(vectors) else None), unknown


@st.cache_data(show_spinner=False, max_entries=64)
def probe_for(radius: float, seed: int):
    return memory_probe(PROBE_LENGTHS, PROBE_HIDDEN, radius, seed, n_train=PROBE_TRAIN, n_test=PROBE_TEST)


def sentence_controls(t) -> str:
    sentences = presets()
    ids = [s.id for s in sentences] + [CUSTOM]
    labels = {s.id: s.label[t.lang] for s in sentences} | {CUSTOM: t("common.custom")}
    default = CUSTOM if st.query_params.get("rnn_text") else DEFAULT_PRESET if DEFAULT_PRESET in ids else ids[0]
    choice = url_selectbox(t("common.preset"), ids, "rnn_preset", format_func=labels.get, default=default)
    if choice == CUSTOM:
        return st.text_input(
            t("common.sentence"), value="", max_chars=MAX_CHARS, placeholder=t("rnn.placeholder"),
            key="rnn_text", bind="query-params",
        )
    text = next(s.text for s in sentences if s.id == choice)
    st.caption(md_escape(text))
    return text


def model_controls(t) -> tuple[int, float, int]:
    hidden = st.slider(t("rnn.hidden"), 1, 256, 32, help=t("rnn.hidden_help"), key="rnn_hidden", bind="query-params")
    radius = st.slider(
        t("rnn.radius"), 0.1, 2.0, 0.9, step=0.05, help=t("rnn.radius_help"), key="rnn_radius", bind="query-params"
    )
    seed = st.number_input(
        t("common.seed"), min_value=0, max_value=2**31 - 1, value=0, step=1, help=t("rnn.seed_help"),
        key="rnn_seed", bind="query-params",
    )
    return int(hidden), round(float(radius), 4), int(seed)


def show_steps(t, n: int) -> None:
    st.subheader(t("rnn.steps_title"))
    steps = sequential_steps(n)
    left, middle, right = st.columns(3)
    left.metric(t("rnn.metric_rnn"), steps["rnn"], help=t("rnn.metric_rnn_help"))
    middle.metric(t("rnn.metric_attention"), steps["attention"], help=t("rnn.metric_attention_help"))
    right.metric(t("rnn.metric_pairs"), f"{n} × {n} = {steps['pairs']}")


def show_influence(t, tokens: list[str], profile) -> None:
    names = {
        "rnn": t("rnn.fig1_rnn"), "attention": t("rnn.fig1_attention"),
        "x": t("rnn.fig1_x"), "y": t("rnn.fig1_y"), "steps": t("rnn.fig1_steps"),
    }
    fig = figure_spec(
        influence_chart, tokens, profile.rnn_norm, profile.attention_norm, profile.rnn_steps, profile.attention_steps, names
    )
    show_plotly(fig, key="rnn_influence")
    rnn, att = profile.rnn_norm, profile.attention_norm
    st.caption(t(
        "rnn.fig1_caption", n=len(tokens), rnn_first=f"{rnn[0]:.3e}", rnn_last=f"{rnn[-1]:.3e}",
        rnn_ratio=f"{rnn[0] / rnn[-1]:.3g}" if rnn[-1] > 0 else "—",
        att_min=f"{att.min():.4g}", att_max=f"{att.max():.4g}", att_ratio=f"{att[0] / att[-1]:.3g}",
    ))
    if not st.session_state.get("presenter", False):
        st.caption(t("rnn.fig1_note"))
    table = pd.DataFrame({
        t("rnn.col_position"): range(1, len(tokens) + 1),
        t("rnn.col_word"): tokens,
        t("rnn.col_rnn"): rnn,
        t("rnn.col_attention"): att,
        t("rnn.col_rnn_steps"): profile.rnn_steps,
        t("rnn.col_attention_steps"): profile.attention_steps,
    })
    with st.expander(t("rnn.table_title")):
        number = st.column_config.NumberColumn(format="%.4e")
        st.dataframe(
            table, hide_index=True,
            column_config={t("rnn.col_rnn"): number, t("rnn.col_attention"): number},
        )
        st.download_button(
            t("rnn.download_influence"), table.to_csv(index=False).encode("utf-8"),
            file_name="rnn_influence.csv", mime="text/csv", key="rnn_download_influence",
        )


def show_probe(t, radius: float, seed: int) -> None:
    st.subheader(t("rnn.fig2_title"))
    with st.spinner():
        probe = probe_for(radius, seed)
    names = {"rnn": t("rnn.fig2_rnn"), "attention": t("rnn.fig2_attention"), "x": t("rnn.fig2_x"), "y": t("rnn.fig2_y")}
    show_plotly(
        figure_spec(memory_probe_chart, probe.lengths, probe.rnn_r2, probe.hidden_sizes, probe.attention_r2, names),
        key="rnn_probe",
    )
    lengths = [int(x) for x in probe.lengths]
    picks = [0, min(4, len(lengths) - 1), len(lengths) - 1]
    lines = [
        t(
            "rnn.fig2_line", hidden=hidden,
            **{f"l_{k}": lengths[i] for k, i in zip(("first", "mid", "last"), picks)},
            **{f"r_{k}": f"{row[i]:.3f}" for k, i in zip(("first", "mid", "last"), picks)},
        )
        for hidden, row in zip(probe.hidden_sizes, probe.rnn_r2)
    ]
    lines.append(t(
        "rnn.fig2_attention_line", att_min=f"{probe.attention_r2.min():.6f}", l_first=lengths[0], l_last=lengths[-1]
    ))
    st.caption("  \n".join(lines))
    if not st.session_state.get("presenter", False):
        st.caption(t("rnn.fig2_note", n_train=PROBE_TRAIN, n_test=PROBE_TEST))
    table = pd.DataFrame({t("rnn.col_length"): lengths})
    for hidden, row in zip(probe.hidden_sizes, probe.rnn_r2):
        table[t("rnn.fig2_rnn", hidden=hidden)] = row
    table[t("rnn.fig2_attention")] = probe.attention_r2
    st.download_button(
        t("rnn.download_probe"), table.to_csv(index=False).encode("utf-8"),
        file_name="rnn_memory_probe.csv", mime="text/csv", key="rnn_download_probe",
    )


t = translator()
page_header(t, SECTION, FORMULA)
sentence_col, model_col = st.columns([3, 2], gap="large")
with sentence_col:
    text = sentence_controls(t)
with model_col:
    hidden, radius, seed = model_controls(t)
what_to_try(t, SECTION)

tokens = sentence_tokens(t, text)
kv = glove_vectors(t) if tokens else None
profile, known = None, []
if kv is not None:
    profile, unknown = profile_for(tuple(tokens), hidden, radius, seed, kv)
    show_unknown(t, unknown)
    if profile is None:
        st.warning(t("rnn.no_known"))
    else:
        known = [w for w in tokens if w not in unknown]
        show_steps(t, len(known))

st.subheader(t("rnn.fig1_title"))
# The question stays on screen whatever the sentence, so an answer is not lost while the learner edits the text.
if predict_then_reveal(t, SECTION, 4, 4, key="rnn_predict") and profile is not None:
    show_influence(t, known, profile)

show_probe(t, radius, seed)
