"""The sections of "What heads do", in the page's order: switch them off (and the learner's own heads), a head needs
another (K-composition), reading the layers (the logit lens), weight is not influence (the sink). Each asks its
question before it shows what answers it; every number is formatted here from the study (ui/heads/results.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st

from attention_core.gpt_studies import causal_study as cs
from attention_core.gpt_studies import head_effects as he
from attention_core.measure import head_stats
from charts.gpt import grouped_bars
from charts.heads import ablation_band, head_scatter, interval_bars, rank_by_layer
from charts.matrix import attention_heatmap
from ui.shared.common import (BOX_CHARS, csv_download, data_table, explanation, guarded_fragment, md_escape, predict_then_reveal,
                              preset_or_own_text)
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.heads.results import (ALL_HEADS, MAX_NAME_TOKENS, MAX_PROMPT_TOKENS, OWN_KS, PERIOD, S, Band, Base, encode,
                              head_label, lens_of, model, own_choices, own_losses, own_name, readable_ids, shown, shown_token, texts)
from ui.shared.links import url_selectbox

SHOWN_K = 8  # the k the first question and the headline sentence are about
TOP_K_DEFAULT = 4
SINK_WEIGHT = 0.5  # a head putting more than half its weight on position 0 counts as a sink head
NO_EFFECT = 0.05  # nats: a head whose removal moves the loss less than this "does nothing here"
EARLY_LAYERS = 2  # layers 0-1: heads whose zeroing damages the model in general
STRONG_INDUCTION = 0.3  # "induction heads" in the effect split (lesson 9's scale)
PERMUTATIONS = 2000


def _explain(t, key: str, **values) -> None:
    explanation(t(f"{S}.{key}", **values))


def f2(x: float) -> str:
    text = f"{x:.2f}"
    return "0.00" if text == "-0.00" else text


def pct(x: float, digits: int = 0) -> str:
    """0.593 -> '59 %' (a space before the sign, in both languages)."""
    return f"{100 * x:.{digits}f} %"


def joined(t, items) -> str:
    return ("、" if t.lang == "ja" else ", ").join(items)


# ---------------------------------------------------------------- switch them off

def switch_off_answer(a: cs.AblationStudy) -> int:
    """1: no more than random heads; 2: more, but less than halfway to the first copy; 3: at least halfway."""
    row = a.ks.index(SHOWN_K)
    clean, loss = float(a.clean.mean()), float(a.induction_zero[row].mean())
    if loss >= clean + 0.5 * (a.clean_first - clean):
        return 3
    return 2 if loss > float(np.quantile(a.random_zero[row], 0.95)) else 1


def switch_off_section(t, base: Base, band: Band | None) -> None:
    st.subheader(t(f"{S}.off_title"))
    _explain(t, "off_explain", sequences=base.picking.trace.ids.shape[0], period=PERIOD)
    picking = base.picking.induction.mean(axis=0)  # (L, H): what picks the heads (the question is what they do)
    layers, count = picking.shape
    show_plotly(figure_spec(attention_heatmap, picking, [f"L{k}" for k in range(layers)],
                            [f"H{k}" for k in range(count)],
                            title=t(f"{S}.picking_map", sequences=base.picking.trace.ids.shape[0]),
                            value_label=t(f"{S}.score_label"), axis_titles=(t(f"{S}.head_label"), t(f"{S}.layer_label")),
                            plot_width=420, height=26 * layers + 160), key="heads_picking_map")
    st.caption(t(f"{S}.picking_top", k=SHOWN_K, heads=joined(t, [head_label(h) for h in cs.top_heads(picking, SHOWN_K)])))
    if band is None:
        return
    a = band.ablation
    clean = float(a.clean.mean())
    if not predict_then_reveal(t, S, 3, switch_off_answer(a), key="heads_off_predict", k=SHOWN_K,
                               clean=f2(clean), first=f2(a.clean_first), total=a.picking_scores.size):
        return
    show_plotly(figure_spec(
        ablation_band, a.ks, a.random_zero,
        {t(f"{S}.series_induction_zero"): a.induction_zero.mean(axis=1),
         t(f"{S}.series_induction_mean"): a.induction_mean.mean(axis=1),
         t(f"{S}.series_sink_zero"): a.sink_zero.mean(axis=1)},
        {t(f"{S}.level_clean"): clean, t(f"{S}.level_first"): a.clean_first},
        title=t(f"{S}.off_chart", draws=a.random_zero.shape[1], sequences=len(a.clean)),
        random_label=t(f"{S}.series_random", draws=a.random_zero.shape[1]), k_label=t(f"{S}.k_label"),
        value_label=t(f"{S}.loss_label")), key="heads_off_chart")
    row = a.ks.index(SHOWN_K)
    mean, low, high = head_stats.mean_interval(a.induction_zero[row])
    rose = a.rose(row)
    draws = a.random_zero[row]
    st.markdown(t(f"{S}.off_numbers", k=SHOWN_K, heads=joined(t, [head_label(h) for h in a.induction_heads[:SHOWN_K]]),
                  clean=f2(clean), loss=f2(mean), low=f2(low), high=f2(high), rose=rose.k, sequences=rose.n,
                  first=f2(a.clean_first), draws=draws.size, median=f2(float(np.median(draws))),
                  p5=f2(float(np.quantile(draws, 0.05))), p95=f2(float(np.quantile(draws, 0.95))),
                  percentile=f"{a.percentile(row):.0f}", reach=int((draws >= mean).sum()),
                  mean_loss=f2(float(a.induction_mean[row].mean())), mean_percentile=f"{a.percentile(row, True):.0f}",
                  sink_zero=f2(float(a.sink_zero[row].mean())), sink_mean=f2(float(a.sink_mean[row].mean())),
                  sinks=joined(t, [head_label(h) for h in a.sink_heads[:SHOWN_K]])))
    table = pa.table({
        t(f"{S}.col_k"): list(a.ks),
        # two numbers a cell, with a space to wrap at: the table fits a projector's column (st.table, large type)
        t(f"{S}.col_induction"): [f"{float(z):.2f} / {float(m):.2f}" for z, m in
                                  zip(a.induction_zero.mean(axis=1), a.induction_mean.mean(axis=1))],
        t(f"{S}.col_random"): [f"{np.median(r):.2f} ({np.quantile(r, 0.05):.2f}–{np.quantile(r, 0.95):.2f})"
                               for r in a.random_zero],
        t(f"{S}.col_percentile"): [round(a.percentile(i)) for i in range(len(a.ks))],
        t(f"{S}.col_sink_zero"): [round(float(v), 2) for v in a.sink_zero.mean(axis=1)],
    })
    data_table(table, hide_index=True, key="heads_off_table", wrap=True)  # long headers: st.table wraps them
    quantiles = {kind: np.quantile(draws_k, [0.05, 0.5, 0.95], axis=1) for kind, draws_k in
                 (("zero", a.random_zero), ("mean", a.random_mean))}
    csv_download(t(f"{S}.off_csv"), pd.DataFrame({  # the figure's numbers, unrounded but for noise (4 places)
        t(f"{S}.col_k"): list(a.ks), t(f"{S}.series_induction_zero"): a.induction_zero.mean(axis=1).round(4),
        t(f"{S}.series_induction_mean"): a.induction_mean.mean(axis=1).round(4),
        **{t(f"{S}.csv_random_{kind}", q=q): quantiles[kind][i].round(4) for kind in ("zero", "mean")
           for i, q in enumerate((5, 50, 95))},
        t(f"{S}.col_percentile"): [round(a.percentile(i), 1) for i in range(len(a.ks))],
        t(f"{S}.series_sink_zero"): a.sink_zero.mean(axis=1).round(4)}), "heads_switch_off.csv", key="heads_off_csv")
    st.caption(t(f"{S}.off_limits", picking=a.sequences[0], scoring=a.sequences[1], draws=draws.size))
    high_draws_sentence(t, base, band)
    writers_section(t, base, band)
    own_heads_section(t, base, band)


def high_draws_sentence(t, base: Base, band: Band) -> None:
    """What the random sets that land high hold, each named by its costliest head (computed from the band)."""
    found = he.high_draw_holders(band.ablation, band.single, base.composition.previous_head, SHOWN_K, EARLY_LAYERS)
    kinds = [kind for _, _, kind in found]
    early = sorted({h for _, h, kind in found if kind == "early"})
    st.markdown(t(f"{S}.off_high_draws", n=len(found), previous=kinds.count("previous"),
                  head=head_label(base.composition.previous_head), early=kinds.count("early"),
                  early_heads=joined(t, [head_label(h) for h in early]) or "—", induction=kinds.count("induction"),
                  k=SHOWN_K, other=kinds.count("other"), layers=EARLY_LAYERS - 1))


@st.cache_resource(show_spinner=False)
def copied_attribution(_base: Base) -> he.CopiedAttribution:
    """The scoring set's direct logit attribution of the copied token (one per process: about a second)."""
    return he.copied_token_attribution(model()[0], _base.scoring.trace, PERIOD)


def writers_section(t, base: Base, band: Band) -> None:
    """Which heads write the copied token (direct logit attribution) beside what switching each off alone costs."""
    a, dla = band.ablation, copied_attribution(base)
    top = a.induction_heads[:SHOWN_K]
    needed = max(top, key=lambda h: band.single[h])
    writers = cs.top_heads(dla.heads, 3)
    table = pa.table({t(f"{S}.col_head"): [head_label(h) for h in top],
                      t(f"{S}.col_alone"): [round(float(band.single[h]), 3) for h in top],
                      t(f"{S}.col_direct"): [round(float(dla.heads[h]), 3) for h in top]})
    data_table(table, hide_index=True, key="heads_writers_table")
    st.markdown(t(f"{S}.writers_numbers", logit=f2(dla.logit), rows=a.sequences[1] * (PERIOD - 1),
                  sequences=a.sequences[1], k=SHOWN_K, top_sum=f2(float(sum(dla.heads[h] for h in top))),
                  heads_sum=f2(float(dla.heads.sum())), mlps=f2(float(dla.mlps.sum())), embedding=f2(dla.embedding),
                  needed=head_label(needed), alone=f2(float(band.single[needed])), term=f2(float(dla.heads[needed])),
                  writers=joined(t, [f"{head_label(h)} ({f2(float(dla.heads[h]))})" for h in writers])))


# ---------------------------------------------------------------- the learner's own heads

@guarded_fragment
def own_heads_section(t, base: Base, band: Band) -> None:
    st.markdown(f"**{t(f'{S}.own_title')}**")
    a = band.ablation
    ranked = cs.top_heads(a.picking_scores, len(ALL_HEADS))
    by_list = st.toggle(t(f"{S}.own_by_list"), key="heads_own_list", bind="query-params")
    if by_list:
        names = st.multiselect(t(f"{S}.own_heads"), [head_label(h) for h in ALL_HEADS],
                               default=[head_label(h) for h in ranked[:TOP_K_DEFAULT]], key="heads_own_names")
        chosen = tuple(h for h in ALL_HEADS if head_label(h) in set(names))
    else:
        k = url_selectbox(t(f"{S}.own_k"), OWN_KS, "heads_own_k", default=TOP_K_DEFAULT, widget=st.select_slider)
        chosen = own_choices(band)[k]  # (each choice with the default name is computed at start-up, kept on disk)
    mean = st.toggle(t(f"{S}.own_mean"), value=True, key="heads_own_mean", bind="query-params")
    own_why(t, band)
    name = st.text_input(t(f"{S}.own_name"), value=texts().copy_name, max_chars=BOX_CHARS, key="heads_name",
                         bind="query-params").strip()
    losses = own_losses(chosen, mean)
    clean = float(a.clean.mean())
    loss_mean, low, high = head_stats.mean_interval(losses)
    if not chosen:
        st.info(t(f"{S}.own_none", clean=f2(clean)))
    else:
        st.markdown(t(f"{S}.own_loss", count=len(chosen), total=len(ALL_HEADS), kind=t(f"{S}.kind_{'mean' if mean else 'zero'}"),
                      loss=f2(loss_mean), low=f2(low), high=f2(high), clean=f2(clean), first=f2(a.clean_first),
                      sequences=len(losses)))
        if len(chosen) in a.ks:
            row = a.ks.index(len(chosen))
            draws = a.random_mean[row] if mean else a.random_zero[row]
            st.markdown(t(f"{S}.own_band", k=len(chosen), draws=draws.size,
                          percentile=f"{cs.percentile_among(loss_mean, draws):.0f}",
                          median=f2(float(np.median(draws)))))
        else:
            st.caption(t(f"{S}.own_no_band", ks=joined(t, [str(k) for k in a.ks])))
    if not name:
        st.warning(t(f"{S}.name_empty"))
        return
    if len(encode(" " + name)) > MAX_NAME_TOKENS:
        st.warning(t(f"{S}.name_too_long", limit=MAX_NAME_TOKENS))
        return
    copied = own_name(chosen, name)
    if copied is None:
        st.warning(t(f"{S}.name_not_found"))
        return
    plain = own_name((), name)
    table = pa.table({t(f"{S}.col_token"): [shown_token(i) for i in copied.tokens],
                      t(f"{S}.col_first_time"): [round(float(p), 4) for p in plain.first],
                      t(f"{S}.col_second_time"): [round(float(p), 4) for p in plain.second],
                      t(f"{S}.col_second_off"): [round(float(p), 4) for p in copied.second]})
    data_table(table, hide_index=True, key="heads_name_table")
    right = sum(a_ == b for a_, b in zip(copied.written, copied.tokens))
    st.markdown(t(f"{S}.name_numbers", second=pct(float(np.mean(plain.second)), 1), off=pct(float(np.mean(copied.second)), 1),
                  written=shown(copied.written), plain=shown(plain.written), right=right,
                  total=len(copied.tokens), count=len(chosen)))
    st.caption(t(f"{S}.name_zero_note"))


def own_why(t, band: Band) -> None:
    """Why mean-ablation is the default: the early head whose zeroing alone costs most, against the induction heads."""
    a = band.ablation
    early = band.single[:EARLY_LAYERS]
    layer, head = np.unravel_index(int(np.argmax(early)), early.shape)
    alone = float(early[layer, head])
    rises = a.induction_zero.mean(axis=1) - a.clean.mean()
    matched = [k for k, rise in zip(a.ks, rises) if rise <= alone]
    k = max(matched) if matched else 0
    st.caption(t(f"{S}.own_why", head=head_label((layer, head)), alone=f2(alone), k=k,
                 induction=f2(float(rises[a.ks.index(k)])) if k else "—"))


# ---------------------------------------------------------------- a head needs another

def composition_answer(c: cs.Composition) -> int:
    ratio = float(c.key_side.mean() / c.clean.mean())
    return 3 if ratio < 0.25 else (2 if ratio < 0.75 else 1)


def composition_section(t, base: Base) -> None:
    st.subheader(t(f"{S}.comp_title"))
    c = base.composition
    previous, induction = head_label(c.previous_head), head_label(c.induction_head)
    _explain(t, "comp_explain", previous=previous, induction=induction)
    if not predict_then_reveal(t, f"{S}.comp", 3, composition_answer(c), key="heads_comp_predict",
                               previous=previous, induction=induction, score=f2(float(c.clean.mean()))):
        return
    rows = [c.clean, c.switched_off, c.key_side, c.query_side]
    stats = [head_stats.mean_interval(r) for r in rows]
    labels = [t(f"{S}.comp_{k}") for k in ("clean", "off", "keys", "queries")]
    show_plotly(figure_spec(interval_bars, labels, [s[0] for s in stats], [s[1] for s in stats], [s[2] for s in stats],
                            title=t(f"{S}.comp_chart", induction=induction, sequences=len(c.clean)),
                            value_label=t(f"{S}.score_label"), highlight=2), key="heads_comp_chart")
    controls = c.control_means
    st.markdown(t(f"{S}.comp_numbers", previous=previous, induction=induction,
                  **{f"{name}{part}": f2(v) for name, s in zip(("clean", "off", "keys", "queries"), stats)
                     for part, v in zip(("", "_low", "_high"), s)},
                  controls=len(controls), lowest=f2(float(controls.min())),
                  below=int((controls <= float(c.switched_off.mean())).sum()), sequences=len(c.clean)))
    _explain(t, "comp_meaning", previous=previous, induction=induction)
    if float(c.key_side.mean()) < float(c.switched_off.mean()):
        st.markdown(t(f"{S}.comp_direct", previous=previous, induction=induction, keys=f2(stats[2][0]),
                      off=f2(stats[1][0])))


# ---------------------------------------------------------------- reading the layers

def lens_answer(first_layer: int, layers: int) -> int:
    return 1 if first_layer < layers / 3 else (2 if first_layer < 2 * layers / 3 else 3)


def prompt_picker(t) -> tuple[int, ...] | None:
    """The page's control: the learner's prompt, read layer by layer in "Reading the layers" -> its ids, or None
    after saying why it cannot be read (empty, past the limit)."""
    data = texts()
    text = preset_or_own_text(t, S, "heads_lens", [label[t.lang] for label, _ in data.lens],
                              [text for _, text in data.lens])
    ids = readable_ids(t, text, MAX_PROMPT_TOKENS, f"{S}.lens_empty", f"{S}.lens_too_long")
    if ids is None:
        return None
    st.caption(t(f"{S}.lens_tokens", n=len(ids), text=shown(ids)))
    return ids


def lens_section(t, base: Base) -> None:
    st.subheader(t(f"{S}.lens_title"))
    _explain(t, "lens_explain")
    ids = prompt_picker(t)  # the learner's prompt, where it is read (None: the picker said why)
    if ids is None:
        st.caption(t(f"{S}.lens_needs_prompt"))
        return
    trained, untrained = lens_of(ids)
    layers = len(trained.ranks) - 1
    answer = shown_token(trained.answer)
    if not predict_then_reveal(t, f"{S}.lens", 3, lens_answer(trained.first_in_top(), layers), key="heads_lens_predict",
                               token=md_escape(answer), layers=layers):
        return
    held = np.array([r.ranks for r in base.trained])
    held_untrained = np.array([r.ranks for r in base.untrained])
    show_plotly(figure_spec(rank_by_layer, {t(f"{S}.lens_yours"): trained.ranks,
                                            t(f"{S}.lens_untrained"): untrained.ranks,
                                            t(f"{S}.lens_held_median", n=len(held)): np.median(held, axis=0),
                                            t(f"{S}.lens_held_untrained", n=len(held)): np.median(held_untrained, axis=0)},
                            title=t(f"{S}.lens_chart"), layer_label=t(f"{S}.layer_label"),
                            rank_label=t(f"{S}.rank_label"), top=cs.TOP, top_label=t(f"{S}.top_label", top=cs.TOP)),
                key="heads_lens_chart")
    st.markdown(t(f"{S}.lens_numbers", answer=md_escape(answer), first=trained.first_in_top(), layers=layers,
                  middle=f"{int(trained.ranks[layers // 2]) + 1:,}", half=layers // 2,
                  untrained_answer=md_escape(shown_token(untrained.answer))))
    rows = list(range(0, layers + 1, 3)) + ([layers] if layers % 3 else [])
    table = pa.table({t(f"{S}.col_layer"): rows,
                      t(f"{S}.col_rank"): [f"{int(trained.ranks[r]) + 1:,}" for r in rows],
                      t(f"{S}.col_top"): [" | ".join(shown_token(i) for i in trained.top[r]) for r in rows]})
    data_table(table, hide_index=True, key="heads_lens_table")
    late = [r.first_in_top() for r in base.trained]
    last_third = sum(f >= 2 * layers / 3 for f in late)
    st.markdown(t(f"{S}.lens_held_out", n=len(late), late=last_third, median=f"{np.median(late):.0f}",
                  early=joined(t, [t(f"{S}.quoted", token=md_escape(shown_token(r.answer)))
                                   for r, f in zip(base.trained, late) if f < 2 * layers / 3]) or "—",
                  middle_trained=f"{np.median(held[:, layers // 2]) + 1:,.0f}",
                  middle_untrained=f"{np.median(held_untrained[:, layers // 2]) + 1:,.0f}", half=layers // 2))
    st.caption(t(f"{S}.lens_limits"))


# ---------------------------------------------------------------- weight is not influence

def influence_answer(sink: cs.SinkReading) -> int:
    first, second = sink.loss_without_first - sink.loss, sink.loss_without_second - sink.loss
    return 1 if first > 2 * second else (2 if first >= 0.5 * second else 3)


@st.cache_data(show_spinner=False, max_entries=8)
def correlations(weight: np.ndarray, induction: np.ndarray, effect: np.ndarray) -> tuple[tuple, tuple, he.EffectSplit]:
    """(270,) each -> the rank correlations of weight and of induction score with effect (a bootstrap each), and the
    effects split by induction score (a permutation baseline): computed once, not at every run of the page."""
    return (head_stats.rank_correlation(weight, effect, cs.RANDOM_SEED, cs.BOOTSTRAP),
            head_stats.rank_correlation(induction, effect, cs.RANDOM_SEED, cs.BOOTSTRAP),
            he.effect_by_induction(induction, effect, STRONG_INDUCTION, PERMUTATIONS))


def influence_section(t, base: Base, band: Band | None) -> None:
    st.subheader(t(f"{S}.sink_title"))
    sink = base.sink
    share = float(sink.weight.mean())
    _explain(t, "sink_explain")
    if not predict_then_reveal(t, f"{S}.sink", 3, influence_answer(sink), key="heads_sink_predict",
                               share=pct(share)):
        return
    sinks = sink.weight > SINK_WEIGHT
    show_plotly(figure_spec(grouped_bars, [t(f"{S}.sink_weight_group"), t(f"{S}.sink_norm_group")],
                            {t(f"{S}.sink_all_heads"): [100 * share, 100 * float(sink.norm_share.mean())],
                             t(f"{S}.sink_sink_heads", n=int(sinks.sum())): [100 * float(sink.weight[sinks].mean()),
                                                                             100 * float(sink.norm_share[sinks].mean())]},
                            title=t(f"{S}.sink_chart", texts=sink.texts), value_label=t(f"{S}.share_label"),
                            fmt=".0f"), key="heads_sink_chart")
    st.markdown(t(f"{S}.sink_numbers", share=pct(share), heads=sinks.size, sink_heads=int(sinks.sum()),
                  weight=pct(float(sink.weight[sinks].mean())), norm=pct(float(sink.norm_share[sinks].mean())),
                  ratio=f2(sink.value_ratio), loss=f2(sink.loss), first=f"{sink.loss_without_first - sink.loss:+.2f}",
                  second=f"{sink.loss_without_second - sink.loss:+.2f}", tokens=sink.tokens, texts=sink.texts,
                  moved=pct(share)))
    if band is None:
        return
    scoring = base.scoring
    weight, induction, effect = scoring.sink.mean(axis=0).ravel(), scoring.induction.mean(axis=0).ravel(), band.single.ravel()
    names = [head_label(h) for h in ALL_HEADS]
    quiet = [i for i in np.argsort(-weight) if weight[i] > SINK_WEIGHT and abs(effect[i]) < NO_EFFECT]
    show_plotly(figure_spec(head_scatter, weight, effect, names, title=t(f"{S}.scatter_chart"),
                            x_label=t(f"{S}.scatter_x"), y_label=t(f"{S}.scatter_y"), highlight=quiet,
                            highlight_label=t(f"{S}.scatter_quiet", limit=NO_EFFECT),
                            other_label=t(f"{S}.scatter_other")), key="heads_sink_scatter")
    (rho, low, high), (rho_i, low_i, high_i), split = correlations(weight, induction, effect)
    biggest = int(np.argmax(effect))
    st.markdown(t(f"{S}.scatter_numbers", rho=f2(rho), low=f2(low), high=f2(high), rho_i=f2(rho_i), low_i=f2(low_i),
                  high_i=f2(high_i), heads=len(names), quiet=len(quiet), sink_heads=int((weight > SINK_WEIGHT).sum()),
                  limit=NO_EFFECT, examples=joined(t, [names[i] for i in quiet[:5]]) or "—",
                  biggest=names[biggest], biggest_effect=f2(float(effect[biggest])),
                  biggest_weight=pct(float(weight[biggest])), biggest_induction=f2(float(induction[biggest])),
                  sentence_sinks=int(sinks.sum())))
    st.markdown(t(f"{S}.scatter_split", heads=len(names), strong=split.strong, threshold=f2(split.threshold), rest=split.rest,
                  strong_median=f"{split.strong_median:+.3f}", rest_median=f"{split.rest_median:+.3f}",
                  difference=f"{split.strong_median - split.rest_median:+.3f}", permutations=f"{PERMUTATIONS:,}",
                  p95=f"{split.permuted_p95:+.3f}", p=f"{split.p_value:.4f}"))
    csv_download(t(f"{S}.scatter_csv"), pd.DataFrame({t(f"{S}.col_head"): names, t(f"{S}.scatter_x"): weight.round(4),
                                                     t(f"{S}.csv_induction"): induction.round(4),
                                                     t(f"{S}.scatter_y"): effect.round(4)}),
                 "heads_every_head.csv", key="heads_scatter_csv")
    st.caption(t(f"{S}.sink_limits"))
