"""Lesson 1, the RNN bottleneck: its controls, its sections (the steps, the influence of each word, the memory
probe) and their cached calls. The page (lessons/rnn.py) only puts them in order."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from attention_core.attention import MAX_SEED
from attention_core.glove import embed
from attention_core.rnn import influence_profile, sequential_steps
from attention_core.rnn_probe import best_case_memory, first_length_below, last_length_at_least, memory_probe
from attention_core.sentences import load_sentences
from attention_core.text import tokenize
from charts.rnn import influence_chart, memory_probe_chart
from ui.shared.common import (
    BOX_CHARS, csv_download, data_table, explanation, glove_vectors, md_escape, predict_then_reveal, sentence_tokens,
    show_unknown, text_limits,
)
from ui.shared.display import on_touch_device, show_plotly
from ui.shared.i18n import Translator, sci
from ui.shared.links import url_selectbox

SECTION = "rnn"
CUSTOM = "custom"
DEFAULT_PRESET = "long_memory"
DEFAULTS = {"hidden": 32, "radius": 0.9, "seed": 0}
# The probe: sizes and lengths just large enough for its two conclusions (tests/test_rnn_claims.py holds them): the
# random RNNs lose the first word within a few words, and even the best state of N numbers holds only N / d words.
PROBE_HIDDEN = (8, 32, 64)
PROBE_LENGTHS = (*range(1, 13), 14, 16, 18, 20, 24, 28, 32, 36, 40)
PROBE_TRAIN, PROBE_TEST, PROBE_D = 1000, 250, 8
LOST = 0.1  # "lost": the read-out recovers less than a tenth of the first word's variance
FULL = 0.999  # "kept": the best case reads the first word back with R^2 >= 0.999


@st.cache_data(show_spinner=False)
def presets():
    return load_sentences()


@st.cache_data(show_spinner=False, max_entries=256)
def profile_for(tokens: tuple[str, ...], hidden: int, radius: float, seed: int, _kv):
    vectors, unknown = embed(list(tokens), _kv)
    return (influence_profile(vectors, hidden, radius, seed) if len(vectors) else None), unknown


@st.cache_data(show_spinner=False, max_entries=64)
def probe_for(radius: float, seed: int):
    """The random tanh RNNs and attention (depends on the radius and the seed)."""
    return memory_probe(PROBE_LENGTHS, PROBE_HIDDEN, radius, seed, d_in=PROBE_D, n_train=PROBE_TRAIN, n_test=PROBE_TEST)


@st.cache_data(show_spinner=False, max_entries=64)
def best_for(seed: int):
    """The best case (depends on the seed only: a radius change does not recompute it)."""
    return best_case_memory(PROBE_LENGTHS, PROBE_HIDDEN, seed, d_in=PROBE_D)


def default_text() -> str:
    return next(s.text for s in presets() if s.id == DEFAULT_PRESET)


class Controls(NamedTuple):
    text: str
    hidden: int
    radius: float
    seed: int


def controls(t) -> Controls:
    """The sentence (a preset or one's own) on the left, the RNN's size, spectral radius and seed on the right."""
    sentence_col, model_col = st.columns([3, 2], gap="large")
    with sentence_col:
        text = sentence_controls(t)
    with model_col:
        hidden, radius, seed = model_controls(t)
    return Controls(text, hidden, radius, seed)


def sentence_controls(t) -> str:
    sentences = presets()
    ids = [s.id for s in sentences] + [CUSTOM]
    labels = {s.id: s.label[t.lang] for s in sentences} | {CUSTOM: t("common.custom")}
    default = CUSTOM if st.query_params.get("rnn_text") else DEFAULT_PRESET if DEFAULT_PRESET in ids else ids[0]
    choice = url_selectbox(t("common.preset"), ids, "rnn_preset", format_func=labels.get, default=default)
    if choice == CUSTOM:
        text = st.text_input(
            t("common.sentence"), value="", max_chars=BOX_CHARS, placeholder=t("rnn.placeholder"),
            key="rnn_text", bind="query-params",
        )
        st.caption(text_limits(t))
        return text
    text = next(s.text for s in sentences if s.id == choice)
    st.caption(md_escape(text))
    return text


def model_controls(t) -> tuple[int, float, int]:
    d = DEFAULTS
    hidden = st.slider(t("rnn.hidden"), 1, 256, d["hidden"], help=t("rnn.hidden_help"), key="rnn_hidden",
                       bind="query-params")
    radius = st.slider(
        t("rnn.radius"), 0.1, 2.0, d["radius"], step=0.05, help=t("rnn.radius_help"), key="rnn_radius",
        bind="query-params",
    )
    seed = st.number_input(
        t("common.seed"), min_value=0, max_value=MAX_SEED, value=d["seed"], step=1, help=t("rnn.seed_help"),
        key="rnn_seed", bind="query-params",
    )
    return int(hidden), round(float(radius), 4), int(seed)


class Sentence(NamedTuple):
    tokens: list[str] | None
    kv: object  # the GloVe vectors, or None (no sentence, or the vectors are unavailable: said on the page)
    profile: object  # attention_core.rnn's influence profile, or None (no known word)


def section_steps(t, c: Controls) -> Sentence:
    """The sentence's known words -> the sequential steps an RNN and attention need (metrics)."""
    tokens = sentence_tokens(t, c.text)
    kv = glove_vectors(t) if tokens else None
    profile = None
    if kv is not None:
        profile, unknown = profile_for(tuple(tokens), c.hidden, c.radius, c.seed, kv)
        show_unknown(t, unknown)
        if profile is None:
            st.warning(t("rnn.no_known"))
        else:
            show_steps(t, len(tokens) - len([w for w in tokens if w in unknown]))
    return Sentence(tokens, kv, profile)


def section_influence(t, c: Controls, sentence: Sentence) -> None:
    """How strongly each word still moves the final state, behind a prediction that stays on screen whatever the
    sentence (an answer is not lost while the learner edits the text)."""
    st.subheader(t("rnn.fig1_title"))
    if predict_then_reveal(t, SECTION, 4, 4, key="rnn_predict"):
        kv_default = sentence.kv if sentence.kv is not None else glove_vectors(t)
        if kv_default is not None:
            predict_number(t, kv_default)
        if sentence.profile is not None:
            show_influence(t, sentence.tokens, c.hidden, c.radius, c.seed, sentence.kv)


def predict_number(t, kv) -> None:
    """The predicted quantity, computed at the default settings for the default sentence (never typed in the text)."""
    tokens = tuple(tokenize(default_text()))
    profile, unknown = profile_for(tokens, DEFAULTS["hidden"], DEFAULTS["radius"], DEFAULTS["seed"], kv)
    if profile is not None:
        st.caption(t("rnn.predict_number", n=len(tokens) - len(unknown), ratio=ratio_text(profile)))


def show_steps(t, n: int) -> None:
    st.subheader(t("rnn.steps_title"))
    steps = sequential_steps(n)
    left, middle, right = st.columns(3)
    left.metric(t("rnn.metric_rnn"), steps["rnn"], help=t("rnn.metric_rnn_help"))
    middle.metric(t("rnn.metric_attention"), steps["attention"], help=t("rnn.metric_attention_help"))
    right.metric(t("rnn.metric_pairs"), f"{n} × {n} = {steps['pairs']:,}")


def ratio_text(profile) -> str:
    rnn = profile.rnn_norm
    return number_text(rnn[0] / rnn[-1], 2) if rnn[-1] > 0 else "—"


def number_text(x: float, digits: int = 4) -> str:
    """``digits`` significant digits; a power of ten (1.7 × 10⁻⁷) outside 0.001 .. 10,000, never 1.7e-07."""
    x = float(x)
    return f"{x:.{digits}g}" if x == 0 or 1e-3 <= abs(x) < 1e4 else sci(x, digits)


def attention_spread(profile) -> dict:
    """What the caption says of attention's line: its range and the ratio of its ends (it is not flat), and the first
    word against the median word before the last, the query itself (nothing shrinks with distance)."""
    att = profile.attention_norm
    before = att[:-1] if len(att) > 1 else att
    return dict(att_min=number_text(att.min()), att_max=number_text(att.max()),
                att_spread=f"{att.max() / att.min():.3g}", att_first=number_text(att[0]),
                att_median=number_text(float(np.median(before))))


# Each section's whole view (figure dict, captions, table, CSV bytes) is cached under its small arguments: a rerun
# with nothing new hashes a few numbers instead of hashing arrays, building DataFrames and writing CSVs again.

@st.cache_data(show_spinner=False, max_entries=128)
def influence_view(tokens: tuple[str, ...], hidden: int, radius: float, seed: int, lang: str, _kv) -> dict | None:
    profile, unknown = profile_for(tokens, hidden, radius, seed, _kv)
    if profile is None:
        return None
    t = Translator(lang)
    known = [w for w in tokens if w not in unknown]
    names = {
        "rnn": t("rnn.fig1_rnn"), "attention": t("rnn.fig1_attention"),
        "x": t("rnn.fig1_x"), "y": t("rnn.fig1_y"), "steps": t("rnn.fig1_steps"),
    }
    rnn, att = profile.rnn_norm, profile.attention_norm
    caption = t(
        "rnn.fig1_caption", n=len(known), rnn_first=number_text(rnn[0]), rnn_last=number_text(rnn[-1]),
        rnn_ratio=ratio_text(profile), att_ratio=f"{att[0] / att[-1]:.3g}", **attention_spread(profile),
    )
    table = pd.DataFrame({
        t("rnn.col_position"): range(1, len(known) + 1),
        t("rnn.col_word"): known,
        t("rnn.col_rnn"): rnn,
        t("rnn.col_attention"): att,
        t("rnn.col_rnn_steps"): profile.rnn_steps,
        t("rnn.col_attention_steps"): profile.attention_steps,
    })
    fig = influence_chart(known, rnn, att, profile.rnn_steps, profile.attention_steps, names, value_text=number_text)
    # On screen the norms read 2.357 × 10⁻⁷ (text); the CSV keeps the numbers. An Arrow table: st.dataframe sends it
    # as it is (no DataFrame conversion on every rerun).
    shown = table.assign(**{name: [number_text(x) for x in table[name]] for name in (t("rnn.col_rnn"),
                                                                                      t("rnn.col_attention"))})
    arrow = pa.Table.from_pandas(shown, preserve_index=False)
    return {"fig": fig, "caption": caption, "table": arrow, "csv": table.to_csv(index=False)}


def show_influence(t, tokens: list[str], hidden: int, radius: float, seed: int, kv) -> None:
    view = influence_view(tuple(tokens), hidden, radius, seed, t.lang, kv)
    show_plotly(view["fig"], key="rnn_influence")
    st.caption(view["caption"])
    explanation(t("rnn.fig1_note_touch" if on_touch_device() else "rnn.fig1_note"), caption=True)  # no "hover"
    with st.expander(t("rnn.table_title")):
        norms = st.column_config.TextColumn(alignment="right")  # numbers written as text (powers of ten)
        data_table(view["table"], hide_index=True, column_config={t("rnn.col_rnn"): norms,
                                                                   t("rnn.col_attention"): norms})
        csv_download(t("rnn.download_influence"), view["csv"], "rnn_influence.csv", key="rnn_download_influence")


def gap_text(attention_r2) -> str:
    """1 - R^2 of attention at its worst length, as an upper bound that is never printed as 0."""
    return sci(max(float(max(1.0 - r for r in attention_r2)), 1e-16), 1)


def probe_lines(t, probe, best) -> list[str]:
    """One generated sentence per curve: every number and every 'falls below' is read off the computation."""
    lengths = [int(x) for x in probe.lengths]
    last = lengths[-1]
    lines = []
    for hidden, row in zip(probe.hidden_sizes, probe.rnn_r2):
        lost = first_length_below(lengths, row, LOST)
        key = "rnn.fig2_line" if lost is not None else "rnn.fig2_line_kept"
        r_lost = f"{row[lengths.index(lost)]:.3f}" if lost is not None else ""
        lines.append(t(key, hidden=hidden, r_first=f"{row[0]:.3f}", l_first=lengths[0], l_lost=lost, r_lost=r_lost,
                       level=LOST, r_last=f"{row[-1]:.3f}", l_last=last))
    for hidden, cap, row, held in zip(best.hidden_sizes, best.capacity, best.first_r2, best.words_held):
        full = last_length_at_least(lengths, row, FULL)
        lines.append(t("rnn.fig2_best_line", hidden=hidden, d=best.d_in, cap=f"{cap:g}", l_full=full or "—",
                       r_last=f"{row[-1]:.3f}", l_last=last, held=f"{held[-1]:.2f}"))
    lines.append(t("rnn.fig2_attention_line", gap=gap_text(probe.attention_r2), l_first=lengths[0], l_last=last))
    return lines


@st.cache_data(show_spinner=False, max_entries=128)
def probe_view(radius: float, seed: int, lang: str) -> dict:
    t = Translator(lang)
    probe, best = probe_for(radius, seed), best_for(seed)
    names = {"rnn": t("rnn.fig2_rnn"), "best": t("rnn.fig2_best"), "attention": t("rnn.fig2_attention"),
             "x": t("rnn.fig2_x"), "y": t("rnn.fig2_y")}
    fig = memory_probe_chart(probe.lengths, probe.rnn_r2, probe.hidden_sizes, probe.attention_r2, best.first_r2, names)
    caps = " / ".join(f"{c:g}" for c in best.capacity)
    sizes = " / ".join(str(h) for h in best.hidden_sizes)
    table = pd.DataFrame({t("rnn.col_length"): [int(x) for x in probe.lengths]})
    for hidden, row in zip(probe.hidden_sizes, probe.rnn_r2):
        table[t("rnn.fig2_rnn", hidden=hidden)] = row
    for hidden, row in zip(best.hidden_sizes, best.first_r2):
        table[t("rnn.fig2_best", hidden=hidden)] = row
    table[t("rnn.fig2_attention")] = probe.attention_r2
    return {
        "fig": fig, "lines": "  \n".join(probe_lines(t, probe, best)), "csv": table.to_csv(index=False),
        "note": t("rnn.fig2_note", n_train=f"{PROBE_TRAIN:,}", n_test=f"{PROBE_TEST:,}", d=PROBE_D, sizes=sizes,
                  caps=caps),
        "shows": t("rnn.fig2_shows", d=PROBE_D, sizes=sizes, caps=caps),
    }


def section_probe(t, c: Controls) -> None:
    """The memory probe: how well random RNNs, the best state of each size, and attention recall the first word."""
    st.subheader(t("rnn.fig2_title"))
    view = probe_view(c.radius, c.seed, t.lang)
    show_plotly(view["fig"], key="rnn_probe")
    st.caption(view["lines"])
    explanation(view["note"], caption=True)
    st.markdown(view["shows"])
    csv_download(t("rnn.download_probe"), view["csv"], "rnn_memory_probe.csv", key="rnn_download_probe")

