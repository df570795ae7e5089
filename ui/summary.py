"""Lesson 9, the summary: each claim of the lesson in one line, its numbers computed live at the lessons' defaults,
beside the one figure that backs it (drawn by the lesson's own chart builder), and a link to the lesson.

``facts_*`` compute a claim's numbers from attention_core (cached: the same for everyone); ``claim`` draws one claim.
GloVe is needed by the RNN claim (lesson 1's sentence) and the "learned" claim (lesson 6's trained head, pure NumPy,
shared with lesson 6's training runs); without the vectors those two say so and the others still stand.
Lesson 8's model is never needed here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.causal import RANDOM_DIM, causal_vs_bidirectional, mask_facts, random_word_vectors
from attention_core.glove import embed, split_known
from attention_core.glove.pretrained import candidates, two_way_rows
from attention_core.glove.training import TrainSetting, head_rows, train_head
from attention_core.qkv import lookup
from attention_core.rnn import influence_profile, sequential_steps
from attention_core.scaling import DIM_CHOICES, TABLE_KEYS
from attention_core.self_attention import top_targets
from attention_core.text import tokenize
from charts.bars import weight_bars
from charts.causal import weights_heatmap
from charts.qkv import blend_bar
from charts.rnn import influence_chart
from charts.scaling import sweep_figure
from ui import self_attention as lesson3
from ui.shared.common import csv_download, heatmap_axes, md_escape
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.shared.i18n import Translator, percent, sci

S = "summary"
RNN_SETTING = {"hidden": 32, "radius": 0.9, "seed": 0}  # lesson 1's defaults
CAUSAL_SEED = 0
LESSON_FILES = {
    "rnn": "lessons/rnn.py", "qkv": "lessons/qkv.py", "self_attention": "lessons/self_attention.py",
    "scaling": "lessons/scaling.py", "causal": "lessons/causal.py", "glove": "lessons/glove.py",
    "transformer": "lessons/transformer.py", "pretrained": "lessons/pretrained.py", "gpt": "lessons/gpt.py",
    "heads": "lessons/heads.py", "tiny_gpt": "lessons/tiny_gpt.py",
}
TINY_GPT_SEED = 0  # lesson 11's default seed
HEADS_K = 8  # the summary's switch-off claim: the top 8 induction heads (lesson 10's headline k)
CLAIMS = ("rnn", "qkv", "self_attention", "scaling", "causal", "glove")  # the claims in lesson order: each names its lesson
FURTHER = ("self_attention", "transformer", "pretrained")  # the step further: multi-head, PE + FFN, a trained model


# ---- the numbers -----------------------------------------------------------------------------------------------

@st.cache_resource(show_spinner=False)
def facts_rnn(_kv) -> dict:
    """Lesson 1's default sentence through its default RNN: the first word's influence on the final state against the
    last word's, and the sequential steps (RNN n, attention 1)."""
    from ui.rnn import default_text

    known, _ = split_known(tokenize(default_text()), _kv)
    profile = influence_profile(embed(known, _kv)[0], **RNN_SETTING)
    return {"known": known, "profile": profile, "n": len(known), "ratio": float(profile.rnn_norm[0] / profile.rnn_norm[-1]),
            "steps": sequential_steps(len(known))}


@st.cache_resource(show_spinner=False)
def facts_qkv() -> dict:
    """Lesson 2's default query at the library's default temperature: the shares of the four books."""
    from ui.qkv import library

    lib = library()
    found = lookup(lib.queries[0].vector, lib.keys, lib.values, lib.default_temperature)
    best = found.best
    return {"lib": lib, "found": found, "best": best, "share": float(found.weights[best]),
            "books_used": int(np.sum(found.weights > 0.01))}


def facts_self_attention(lang: str) -> dict:
    """Lesson 3's sentence in this language: n tokens, n x n weights, the pronoun's largest weight (coreference head)."""
    data = lesson3.sa_data()
    preset = data.by_id(data.default_for(lang))
    coref = lesson3.sa_heads(preset.id)[0]
    target = top_targets(coref[preset.pronoun], 1)[0]
    n = len(preset.tokens)
    return {"preset": preset, "weights": coref, "n": n, "pairs": n * n, "target": target,
            "share": float(coref[preset.pronoun, target])}


def facts_scaling() -> dict:
    """Lesson 4's table (computed once per process at start-up): the mean largest weight at the smallest and largest d."""
    from ui.scaling import table as scaling_table

    table = scaling_table()
    return {"table": table, "d_max": DIM_CHOICES[-1], "unscaled": float(table["max_unscaled"][-1]),
            "scaled": float(table["max_scaled"][-1]), "scaled_min_d": float(table["max_scaled"][0])}


@st.cache_resource(show_spinner=False)
def facts_causal() -> dict:
    """Lesson 5's default sentence with seeded random vectors: causal and bidirectional weights and their facts."""
    from attention_core.sentences import load_sentences

    words = tokenize(load_sentences()[0].text)
    results = causal_vs_bidirectional(random_word_vectors(words, RANDOM_DIM, CAUSAL_SEED), CAUSAL_SEED)
    return {"words": words, "results": results, **mask_facts(results)}


@st.cache_resource(show_spinner=False)
def facts_learned(_kv) -> dict:
    """Lesson 6's head at its default setting (trained once per process, shared with lesson 6's runs): on the held-out
    pronoun sentences, how often "it" gives the right noun more weight than the other one (chance: 50 %)."""
    from ui.glove.page import pronoun_data
    from ui.glove.training import shared_trainings

    dataset, train_batch, held_batch = pronoun_data(_kv)
    setting = TrainSetting()
    result, _, _ = shared_trainings().run(setting, lambda: train_head(train_batch, setting))
    choices = candidates(dataset.held_out)
    before = two_way_rows(head_rows(result.W_q_init, result.W_k_init, held_batch, setting.context), choices)
    after = two_way_rows(head_rows(result.W_q, result.W_k, held_batch, setting.context), choices)
    return {"held": len(dataset.held_out), "before": float(before.mean()), "after": float(after.mean()),
            "chance": 0.5}


# ---- the export: the claims as shown, with their numbers --------------------------------------------------------

class ClaimsSaid(Translator):
    """The page's translator, which also keeps every claim it writes (``summary.claim_<section>``, or its short form
    when the vectors are missing) with the values formatted into it, in the order shown: what the CSV holds."""

    def __init__(self, lang: str):
        super().__init__(lang)
        self.claims: list[tuple[str, str, dict]] = []  # (section, text, values)

    def __call__(self, key: str, **values) -> str:
        text = super().__call__(key, **values)
        if key.startswith(f"{S}.claim_"):
            self.claims.append((key.removeprefix(f"{S}.claim_").removesuffix("_short"), text, values))
        return text


_MARKUP = re.compile(r"\*\*|\\(?=[\\`*_{}\[\]()#+\-.!|$<>~:^&])")  # bold marks and md_escape's backslashes


def plain(text) -> str:
    """A claim's Markdown -> its plain text (no bold marks, no md_escape backslashes)."""
    return _MARKUP.sub("", str(text))


def claims_table(t: ClaimsSaid) -> pd.DataFrame:
    """The claims ``t`` wrote -> one row each: the lesson, the claim as plain text, its values ("name = value; ...")."""
    lesson = lambda section: t(f"nav.{section}") if t.has(f"nav.{section}") else section  # noqa: E731
    return pd.DataFrame({
        t(f"{S}.col_lesson"): [lesson(section) for section, _, _ in t.claims],
        t(f"{S}.col_claim"): [plain(text) for _, text, _ in t.claims],
        t(f"{S}.col_values"): ["; ".join(f"{k} = {plain(v)}" for k, v in values.items()) for _, _, values in t.claims],
    })


def section_download(t: ClaimsSaid) -> None:
    """The claims shown above and their numbers as a CSV (BOM, headers in the page's language)."""
    csv_download(t(f"{S}.download"), claims_table(t), "summary_claims.csv", "summary_csv")


# ---- the page ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Claim:
    section: str  # the lesson's section: its link and its number
    text: str  # the claim in one line, with its numbers


def claim(t: Translator, item: Claim, draw) -> None:
    """One claim: its line, the figure that backs it (``draw()``), and the link to its lesson."""
    with st.container(border=True, key=f"summary_claim_{item.section}"):
        st.markdown(item.text)
        draw()
        st.page_link(LESSON_FILES[item.section], label=t(f"{S}.link", lesson=t(f"nav.{item.section}")),
                     icon=":material/arrow_forward:")


def needs_vectors(t: Translator, section: str) -> None:
    """A claim that needs the GloVe vectors, when they are missing (the page's one error message says why)."""
    with st.container(border=True, key=f"summary_claim_{section}"):
        st.markdown(t(f"{S}.claim_{section}_short"))
        st.caption(t(f"{S}.needs_vectors"))
        st.page_link(LESSON_FILES[section], label=t(f"{S}.link", lesson=t(f"nav.{section}")),
                     icon=":material/arrow_forward:")


def section_rnn(t: Translator, kv) -> None:
    if kv is None:
        needs_vectors(t, "rnn")
        return
    f = facts_rnn(kv)
    p = f["profile"]
    names = {"rnn": t("rnn.fig1_rnn"), "attention": t("rnn.fig1_attention"), "x": t("rnn.fig1_x"),
             "y": t("rnn.fig1_y"), "steps": t("rnn.fig1_steps")}
    text = t(f"{S}.claim_rnn", hidden=RNN_SETTING["hidden"], n=f["n"], ratio=sci(f["ratio"]), rnn_steps=f["steps"]["rnn"],
             att_steps=f["steps"]["attention"])
    claim(t, Claim("rnn", text), lambda: show_plotly(figure_spec(
        influence_chart, f["known"], p.rnn_norm, p.attention_norm, p.rnn_steps, p.attention_steps, names,
        title=t(f"{S}.fig_rnn")), key="summary_rnn"))


def section_qkv(t: Translator) -> None:
    f = facts_qkv()
    lib, found = f["lib"], f["found"]
    titles = [b.title[t.lang] for b in lib.books]
    text = t(f"{S}.claim_qkv", query=md_escape(lib.queries[0].text[t.lang]), book=md_escape(titles[f["best"]]),
             share=percent(f["share"]), books=f["books_used"], n=len(titles))
    claim(t, Claim("qkv", text), lambda: show_plotly(figure_spec(
        blend_bar, titles, lib.values, found.weights, found.output, t("qkv.mix"), t("qkv.output"), t("qkv.share"),
        title=t(f"{S}.fig_qkv")), key="summary_qkv"))


def section_self_attention(t: Translator) -> None:
    f = facts_self_attention(t.lang)
    preset = f["preset"]
    text = t(f"{S}.claim_self_attention", n=f["n"], pairs=f["pairs"], pronoun=preset.tokens[preset.pronoun],
             target=preset.tokens[f["target"]], share=percent(f["share"]))
    claim(t, Claim("self_attention", text), lambda: show_plotly(lesson3.heat(
        f["weights"], preset.tokens, preset.pronoun, title=t(f"{S}.fig_self_attention"),
        value_label=t("common.weight"), axis_titles=heatmap_axes(t)), key="summary_self_attention"))


def section_scaling(t: Translator) -> None:
    f = facts_scaling()
    text = t(f"{S}.claim_scaling", d=f["d_max"], unscaled=f"{f['unscaled']:.3f}", scaled=f"{f['scaled']:.3f}",
             keys=TABLE_KEYS, uniform=f"{1 / TABLE_KEYS:.3f}")
    labels = {name: t(f"scaling.{key}") for name, key in (
        ("var", "chart_var"), ("max", "chart_max"), ("entropy", "chart_entropy"), ("jacobian", "chart_jacobian"),
        ("unscaled", "unscaled"), ("scaled", "scaled"), ("line_d", "line_d"), ("line_1", "line_1"),
        ("uniform", "uniform"), ("d", "col_d"))}
    claim(t, Claim("scaling", text), lambda: show_plotly(figure_spec(sweep_figure, f["table"], labels, TABLE_KEYS),
                                                         key="summary_scaling"))


def section_causal(t: Translator) -> None:
    f = facts_causal()
    causal = f["results"]["causal"]
    text = t(f"{S}.claim_causal", masked=f["masked"], above=f"{f['causal_max_above']:g}",
             first=percent(f["first_self"], 0), dim=RANDOM_DIM, seed=CAUSAL_SEED)
    claim(t, Claim("causal", text), lambda: show_plotly(figure_spec(
        weights_heatmap, causal.weights, f["words"], title=t(f"{S}.fig_causal"), hidden=~causal.mask,
        value_label=t("common.weight"), highlight_row=0, axis_titles=heatmap_axes(t)), key="summary_causal"))


def section_learned(t: Translator, kv) -> None:
    if kv is None:
        needs_vectors(t, "glove")
        return
    with st.spinner(t(f"{S}.training")):
        f = facts_learned(kv)
    labels = [t(f"{S}.bar_untrained"), t(f"{S}.bar_trained")]
    text = t(f"{S}.claim_glove", held=f["held"], before=percent(f["before"]), after=percent(f["after"]),
             chance=percent(f["chance"], 0))
    claim(t, Claim("glove", text), lambda: show_plotly(figure_spec(
        weight_bars, labels, [f["before"], f["after"]], title=t(f"{S}.fig_glove"), highlight=1,
        value_label=t(f"{S}.bar_value"), as_percent=True, y_range=(0.0, 100.0)), key="summary_glove"))


def pretrained_result(t: Translator) -> None:
    """Lesson 8's result with its live figures (held-out counts from ui.pretrained.page.measures); nothing without the
    model package (lesson 8 says how to install it)."""
    from attention_core.pretrained import ModelUnavailable
    from ui.pretrained.page import measures

    try:
        found = measures()
    except ModelUnavailable:
        return
    agreement, winograd = found.agreement.held_out.held_out_count, found.winograd.held_out.held_out_count
    st.markdown(t(f"{S}.further_pretrained_result", agr_k=agreement.k, agr_n=agreement.n,
                  agr_pairs=found.agreement.pairs, wino_k=winograd.k, wino_n=winograd.n,
                  wino_pairs=found.winograd.pairs, chance=f"{found.winograd.chance.mean:.0%}"))


def section_further(t: Translator) -> None:
    """The step further: multi-head attention, positional encoding and the feed-forward layer, a trained model."""
    st.subheader(t(f"{S}.further_title"))
    for section in FURTHER:
        st.markdown(t(f"{S}.further_{section}"))
        if section == "pretrained":
            pretrained_result(t)
        st.page_link(LESSON_FILES[section], label=t(f"{S}.link", lesson=t(f"nav.{section}")),
                     icon=":material/arrow_forward:")


def section_induction(t: Translator) -> None:
    """Lesson 9's claim: a real GPT copies a repeated random sequence (induction heads), measured once per process;
    without the model's package the claim is said in words and the caption says why there is no figure."""
    from attention_core.smollm2.weights import GPTUnavailable
    from charts.gpt import grouped_bars
    from ui.gpt.study import study as gpt_study

    try:
        with st.spinner(t("gpt.study_running")):
            s = gpt_study()
    except GPTUnavailable:
        with st.container(border=True, key="summary_claim_gpt"):
            st.markdown(t(f"{S}.claim_gpt_short"))
            st.caption(t(f"{S}.needs_model"))
            st.page_link(LESSON_FILES["gpt"], label=t(f"{S}.link", lesson=t("nav.gpt")), icon=":material/arrow_forward:")
        return
    first, second = s.losses
    text = t(f"{S}.claim_gpt", period=s.period, sequences=s.sequences, first=f"{first:.1f}", second=f"{second:.1f}",
             head=f"L{s.picked[0]}H{s.picked[1]}", score=f"{s.picked_score[0]:.2f}", untrained=f"{s.untrained_best:.2f}")
    claim(t, Claim("gpt", text), lambda: show_plotly(figure_spec(
        grouped_bars, [t("gpt.first_copy"), t("gpt.second_copy")],
        {t("gpt.trained"): s.losses, t("gpt.untrained"): s.untrained_losses}, title=t(f"{S}.fig_gpt"),
        value_label=t("gpt.loss_nats"), fmt=".1f"), key="summary_gpt"))


def section_heads(t: Translator) -> None:
    """Lesson 10's claim: switching off the induction heads (picked on other sequences) breaks the copying, far beyond
    as many random heads. The random-head band is start-up work kept on disk; until it is done the claim is said in
    words with how far the work is, and without the model's package the caption says why there is no figure."""
    from attention_core.smollm2.weights import GPTUnavailable
    from charts.heads import ablation_band
    from ui.heads import study as heads_study

    try:
        heads_study.model()
        band = heads_study.BAND.result() if heads_study.BAND.ready() else None
    except GPTUnavailable:
        band, caption = None, t(f"{S}.needs_model")
    else:
        if band is None:
            heads_study.BAND.start()  # (start-up work: already running unless this process skipped it)
        done, total = heads_study.PROGRESS.read()
        caption = t(f"{S}.heads_running", done=done, total=total or "…")
    if band is None:
        with st.container(border=True, key="summary_claim_heads"):
            st.markdown(t(f"{S}.claim_heads_short"))
            st.caption(caption)
            st.page_link(LESSON_FILES["heads"], label=t(f"{S}.link", lesson=t("nav.heads")),
                         icon=":material/arrow_forward:")
        return
    a = band.ablation
    row = a.ks.index(HEADS_K)
    draws = a.random_zero[row]
    text = t(f"{S}.claim_heads", k=HEADS_K, clean=f"{float(a.clean.mean()):.2f}",
             loss=f"{float(a.induction_zero[row].mean()):.2f}", median=f"{float(np.median(draws)):.2f}",
             draws=draws.size, percentile=f"{a.percentile(row):.0f}", sinks=f"{float(a.sink_zero[row].mean()):.2f}",
             sequences=len(a.clean), mean_loss=f"{float(a.induction_mean[row].mean()):.2f}")
    series = {t("heads.series_induction_zero"): a.induction_zero.mean(axis=1),
              t("heads.series_sink_zero"): a.sink_zero.mean(axis=1)}
    levels = {t("heads.level_clean"): float(a.clean.mean()), t("heads.level_first"): a.clean_first}
    claim(t, Claim("heads", text), lambda: show_plotly(figure_spec(
        ablation_band, a.ks, a.random_zero, series, levels, title=t(f"{S}.fig_heads"),
        random_label=t("heads.series_random", draws=a.random_zero.shape[1]), k_label=t("heads.k_label"),
        value_label=t("heads.loss_label")), key="summary_heads"))


def section_tiny_gpt(t: Translator) -> None:
    """Lesson 11's claim: the tiny GPT at its defaults (seed 0) forms an induction head during training, and one layer
    trained as long does not. Both runs are offered runs, kept on disk by the builds (trained here only if missing)."""
    from dataclasses import replace

    from charts.tiny_gpt import step_lines
    from ui.tiny_gpt.runs import DEFAULT, evaluation, formed_at, get_run
    from ui.tiny_gpt.sections import describe_run

    one_config = replace(DEFAULT, n_layer=1)
    two = get_run(t, DEFAULT, TINY_GPT_SEED, describe_run(t, DEFAULT, TINY_GPT_SEED))
    one = get_run(t, one_config, TINY_GPT_SEED, describe_run(t, one_config, TINY_GPT_SEED))
    _, bound = evaluation(DEFAULT)
    step = formed_at(two)
    formed = t("tiny_gpt.never") if step is None else t("tiny_gpt.at_step", step=f"{step:,}")
    prev = two.previous_token[-1, 0]
    text = t(f"{S}.claim_tiny_gpt", steps=f"{DEFAULT.steps:,}", start=f"{two.loss_repeated[0]:.2f}",
             end=f"{two.loss_repeated[-1]:.2f}", formed=formed, seed=TINY_GPT_SEED, prev=f"{prev.max():.2f}",
             one=f"{one.loss_repeated[-1]:.2f}", bound=f"{bound:.2f}")
    claim(t, Claim("tiny_gpt", text), lambda: show_plotly(figure_spec(
        step_lines, two.steps, {t("tiny_gpt.two_layers"): two.loss_repeated, t("tiny_gpt.one_layer"): one.loss_repeated},
        title=t(f"{S}.fig_tiny_gpt"), step_label=t("tiny_gpt.step"), value_label=t("tiny_gpt.loss_nats"),
        reference=bound, reference_label=t("tiny_gpt.plateau_label", value=f"{bound:.2f}"), marker=step,
        marker_label=t("tiny_gpt.formed_label") if step is not None else ""), key="summary_tiny_gpt"))
