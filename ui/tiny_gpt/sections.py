"""Watch a head form: the sections in the page's order (the controls, the data and the untrained heads, the loss
curves and the heads' scores, the attention maps at a step, the one-layer control, heads switched off, the phase change
over seeds, and the bridge to lesson 9). Each asks its question before it shows what answers it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.attention import MAX_SEED
from attention_core.smollm2.weights import GPTUnavailable
from attention_core.tiny_gpt import Config, Run, attention_maps, initial_params
from attention_core.tiny_gpt.curve import PLATEAU_STEPS, TOLERANCE, flat_stretch
from charts.gpt import grouped_bars
from charts.matrix import attention_heatmap
from charts.tiny_gpt import step_lines
from ui.gpt.study import study as gpt_study  # lesson 9's study of the real model, shared and kept on disk
from ui.shared.gpt_models import INSTALL_COMMAND as GPT_INSTALL_COMMAND
from ui.shared.common import csv_download, explanation, guarded_fragment, predict_then_reveal
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.shared.links import url_selectbox
from ui.tiny_gpt.runs import (DEFAULT, DEFAULT_SEEDS, EVERY, LEARNING_RATES, S, SEEDS, evaluation, formed_at, get_run,
                              head_label, is_ready, knocked_out, shown_sequence, token_names)

PREVIOUS_AT = 0.4  # a layer-1 head with a previous-token score this high when the induction head formed

# ---------------------------------------------------------------- controls

def controls(t) -> tuple[Config, int] | None:
    """The model and the seed; None (with the button) while a learner's own setting is not trained yet."""
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        layers = url_selectbox(t(f"{S}.layers"), [2, 1], "tiny_layers", widget=st.segmented_control)
    with c2:
        heads = url_selectbox(t(f"{S}.heads"), [2, 1], "tiny_heads", widget=st.segmented_control)
    seed = int(c3.number_input(t("common.seed"), min_value=0, max_value=MAX_SEED, value=0, step=1, key="tiny_seed",
                               bind="query-params", help=t(f"{S}.seed_help", seeds=", ".join(map(str, DEFAULT_SEEDS)),
                                                     max_seed=f"{MAX_SEED:,}")))
    st.caption(t(f"{S}.seed_bounds", max_seed=f"{MAX_SEED:,}"))  # the box refuses what lies outside: say so
    with c4:
        rate = url_selectbox(t(f"{S}.rate"), LEARNING_RATES, "tiny_rate", default=DEFAULT.learning_rate,
                             widget=st.select_slider)
    config = replace(DEFAULT, n_layer=int(layers or 2), n_head=int(heads or 2), learning_rate=float(rate))
    stopped = st.session_state.pop("tiny_stopped", None)
    if stopped is not None:  # a run this session started was stopped (a control changed, another page) before its end
        st.warning(t(f"{S}.stopped", what=stopped), icon=":material/stop_circle:")
    if is_ready(config, seed):
        return config, seed
    st.info(t(f"{S}.own_run", steps=f"{config.steps:,}"), icon=":material/model_training:")
    if not st.button(t(f"{S}.train"), key="tiny_train", icon=":material/play_arrow:"):
        return None
    get_run(t, config, seed, describe_run(t, config, seed))  # the long action: here, under its progress bar
    return config, seed


def describe_run(t, config: Config, seed: int) -> str:
    return t(f"{S}.run_label", layers=config.n_layer, heads=config.n_head, seed=seed, rate=config.learning_rate)


# ---------------------------------------------------------------- before training: the data and the untrained heads

def maps_grid(t, maps, labels, title_key: str, key: str, **values) -> None:
    """maps: (L, H, T, T) -> one heat map a head, a row of heads a layer, the future cells grey."""
    hidden = np.triu(np.ones(maps.shape[-2:], dtype=bool), k=1)
    for layer in range(maps.shape[0]):
        for head, column in enumerate(st.columns(maps.shape[1])):
            with column:
                show_plotly(figure_spec(attention_heatmap, maps[layer, head], labels,
                                        title=t(f"{S}.{title_key}", head=head_label(layer, head), **values),
                                        hidden=hidden, show_values=False,
                                        axis_titles=(t("common.axis_key"), t("common.axis_query")),
                                        value_label=t("common.weight")),
                            key=f"{key}_{layer}_{head}")


def data_section(t, config: Config, seed: int) -> None:
    """One of the fixed sequences, and what the untrained model's heads do with it (nothing is trained here)."""
    st.subheader(t(f"{S}.data_title"))
    seqs = evaluation(config)[0]
    i = shown_sequence(config)
    labels = token_names(seqs.tokens[i])
    explanation(t(f"{S}.data_explain", tokens=" ".join(labels), period=int(seqs.period[i]), n=len(labels),
                  vocab=config.vocab))
    maps = attention_maps(initial_params(config, seed), seqs.tokens[i])  # (L, H, T, T)
    maps_grid(t, maps, labels, "init_map_title", "tiny_init_map")
    rows = np.arange(1, maps.shape[-1])
    st.caption(t(f"{S}.init_numbers", top=f"{maps[..., rows, :].max():.2f}", even=f"{1 / maps.shape[-1]:.2f}",
                 first=f"{1 / 2:.2f}"))


# ---------------------------------------------------------------- (a) the loss curves and the heads' scores

def curves_section(t, config: Config, seed: int) -> Run | None:
    st.subheader(t(f"{S}.curves_title"))
    explanation(t(f"{S}.curves_explain", steps=f"{config.steps:,}", batch=config.batch_size, n=config.seq_len))
    label = describe_run(t, config, seed)
    answer = lambda: curve_answer(get_run(t, config, seed, label))  # noqa: E731
    if not predict_then_reveal(t, S, 3, answer, key="tiny_curves_predict", plateau_steps=PLATEAU_STEPS,
                               tolerance=TOLERANCE):
        return None
    run = get_run(t, config, seed, label)
    _, plateau = evaluation(config)
    formed = formed_at(run)
    show_plotly(figure_spec(step_lines, run.steps, {t(f"{S}.repeated"): run.loss_repeated,
                                                    t(f"{S}.unrepeated"): run.loss_unrepeated},
                            title=t(f"{S}.loss_chart", run=describe_run(t, config, seed)), step_label=t(f"{S}.step"),
                            value_label=t(f"{S}.loss_nats"), reference=plateau,
                            reference_label=t(f"{S}.plateau_label", value=f"{plateau:.2f}"), marker=formed,
                            marker_label=t(f"{S}.formed_label") if formed is not None else ""),
                key="tiny_loss_chart")
    scores, dashed = {}, []
    for layer in range(config.n_layer):
        for head in range(config.n_head):
            dashed.append(t(f"{S}.prev_series", head=head_label(layer, head)))
            scores[dashed[-1]] = run.previous_token[:, layer, head]
            scores[t(f"{S}.ind_series", head=head_label(layer, head))] = run.induction[:, layer, head]
    show_plotly(figure_spec(step_lines, run.steps, scores, title=t(f"{S}.score_chart"), step_label=t(f"{S}.step"),
                            value_label=t(f"{S}.score"), marker=formed, y_range=(0, 1),
                            marker_label=t(f"{S}.formed_label") if formed is not None else "",
                            dashed=dashed),
                key="tiny_score_chart")
    last = run.induction[-1, -1]
    values = dict(start=f"{run.loss_repeated[0]:.2f}", end=f"{run.loss_repeated[-1]:.2f}", plateau=f"{plateau:.2f}",
                  unrepeated=f"{run.loss_unrepeated[-1]:.2f}", steps=f"{config.steps:,}",
                  head=head_label(config.n_layer - 1, int(np.argmax(last))), score=f"{last.max():.2f}")
    values["flat"] = flat_words(t, run)
    if formed is None:
        st.markdown(t(f"{S}.curves_flat", **values))
    else:
        prev = run.previous_token[-1, 0]
        st.markdown(t(f"{S}.curves_formed", step=f"{formed:,}", half=f"{plateau / 2:.2f}",
                      prev_head=head_label(0, int(np.argmax(prev))), prev_score=f"{prev.max():.2f}", **values))
    st.markdown(t(f"{S}.bound", plateau=f"{plateau:.2f}"))
    explanation(t(f"{S}.curves_why"))
    curves = {t(f"{S}.step"): run.steps, t(f"{S}.repeated"): run.loss_repeated,
              t(f"{S}.unrepeated"): run.loss_unrepeated, **scores}  # the two charts' data, as drawn
    csv_download(t(f"{S}.download"), pd.DataFrame(curves), "tiny_gpt_curves.csv", "tiny_curves_csv")
    return run


def run_flat(run: Run):
    """-> the run's longest level stretch before its drop (attention_core.tiny_gpt.curve), or None."""
    return flat_stretch(run.steps, run.loss_repeated, formed_at(run))


def curve_answer(run: Run) -> int:
    """The curve question's answer from the run's own curve: 3 no drop, 2 a level stretch of PLATEAU_STEPS first, 1
    a drop without one."""
    if formed_at(run) is None:
        return 3
    flat = run_flat(run)
    return 2 if flat is not None and flat.length >= PLATEAU_STEPS else 1


def flat_words(t, run: Run) -> str:
    flat = run_flat(run)
    if flat is None:
        return t(f"{S}.flat_none", tolerance=TOLERANCE)
    return t(f"{S}.flat_found", tolerance=TOLERANCE, first=f"{flat.first:,}", last=f"{flat.last:,}",
             length=f"{flat.length:,}", low=f"{flat.low:.2f}", high=f"{flat.high:.2f}")


# ---------------------------------------------------------------- (b) the attention maps at a step

@guarded_fragment
def maps_section(t, run: Run) -> None:
    st.subheader(t(f"{S}.maps_title"))
    config = run.config
    seqs = evaluation(config)[0]
    i = shown_sequence(config)
    tokens = seqs.tokens[i]
    labels = token_names(tokens)
    explanation(t(f"{S}.maps_explain", tokens=" ".join(labels), period=int(seqs.period[i])))
    steps = [int(s) for s in run.steps]
    step = st.select_slider(t(f"{S}.step"), steps, value=steps[-1], key="tiny_step", format_func=lambda s: f"{s:,}")
    index = steps.index(step)
    maps_grid(t, attention_maps(run.params_at(index), tokens), labels, "map_title", "tiny_map", step=f"{step:,}")
    st.caption(t(f"{S}.maps_numbers", step=f"{step:,}", loss=f"{run.loss_repeated[index]:.2f}",
                 head=head_label(config.n_layer - 1, int(np.argmax(run.induction[index, -1]))),
                 score=f"{run.induction[index, -1].max():.2f}"))


# ---------------------------------------------------------------- (c) the one-layer control

def control_section(t, run: Run) -> None:
    st.subheader(t(f"{S}.control_title"))
    config = run.config
    if config.n_layer == 1:
        st.info(t(f"{S}.control_is_this"))
        return
    control_config = replace(config, n_layer=1)
    label = describe_run(t, control_config, run.seed)
    if not is_ready(control_config, run.seed):  # the learner's own setting: its control is a long action too
        if not st.button(t(f"{S}.train_control"), key="tiny_train_control", icon=":material/play_arrow:"):
            return
        get_run(t, control_config, run.seed, label)
    answer = lambda: 3 if formed_at(get_run(t, control_config, run.seed, label)) is None else 1  # noqa: E731
    if not predict_then_reveal(t, f"{S}.control", 3, answer, key="tiny_control_predict", steps=f"{config.steps:,}"):
        return
    control = get_run(t, control_config, run.seed, label)
    _, plateau = evaluation(config)
    show_plotly(figure_spec(step_lines, run.steps, {t(f"{S}.two_layers"): run.loss_repeated,
                                                    t(f"{S}.one_layer"): control.loss_repeated},
                            title=t(f"{S}.control_chart"), step_label=t(f"{S}.step"), value_label=t(f"{S}.loss_nats"),
                            reference=plateau, reference_label=t(f"{S}.plateau_label", value=f"{plateau:.2f}")),
                key="tiny_control_chart")
    st.markdown(t(f"{S}.control_numbers", steps=f"{config.steps:,}", loss=f"{control.loss_repeated[-1]:.2f}",
                  two=f"{run.loss_repeated[-1]:.2f}", plateau=f"{plateau:.2f}",
                  score=f"{control.induction.max():.2f}", formed=t(f"{S}.never") if formed_at(control) is None
                  else t(f"{S}.at_step", step=f"{formed_at(control):,}")))
    explanation(t(f"{S}.control_why"))


# ---------------------------------------------------------------- (d) switching heads off

@guarded_fragment
def knockout_section(t, run: Run) -> None:
    st.subheader(t(f"{S}.knockout_title"))
    config = run.config
    if config.n_layer == 1:
        st.info(t(f"{S}.knockout_one_layer"))
        return
    prev = int(np.argmax(run.previous_token[-1, 0]))
    off = np.zeros((config.n_layer, config.n_head), dtype=bool)
    off[0, prev] = True
    clean = knocked_out(config, run.seed, tuple(np.zeros(off.size, dtype=bool)), run)
    without = knocked_out(config, run.seed, tuple(off.ravel()), run)
    _, plateau = evaluation(config)
    answer = 2 if without[0] > plateau else (1 if without[0] < clean[0] + 0.5 * (plateau - clean[0]) else 3)
    if not predict_then_reveal(t, f"{S}.knockout", 3, answer, key="tiny_knockout_predict",
                               head=head_label(0, prev)):
        return
    names = [head_label(layer, head) for layer in range(config.n_layer) for head in range(config.n_head)]
    chosen = st.pills(t(f"{S}.switch_off"), names, selection_mode="multi", default=[head_label(0, prev)],
                      key="tiny_off")
    mask = tuple(name in (chosen or []) for name in names)
    mine = knocked_out(config, run.seed, mask, run)
    groups = [t(f"{S}.repeated"), t(f"{S}.unrepeated")]
    series = {t(f"{S}.all_heads"): clean[:2], t(f"{S}.heads_off", heads=t.join(c for c in names if c in chosen)
                                                 or t(f"{S}.none")): mine[:2]}
    show_plotly(figure_spec(grouped_bars, groups, series, title=t(f"{S}.knockout_chart"),
                            value_label=t(f"{S}.loss_nats")), key="tiny_knockout_chart")
    st.markdown(t(f"{S}.knockout_numbers", head=head_label(0, prev), clean=f"{clean[0]:.2f}",
                  off=f"{without[0]:.2f}", plateau=f"{plateau:.2f}", induction=f"{without[2][-1].max():.2f}",
                  clean_induction=f"{clean[2][-1].max():.2f}"))
    explanation(t(f"{S}.knockout_why"))


# ---------------------------------------------------------------- (e) the phase change over seeds

def seeds_section(t) -> None:
    st.subheader(t(f"{S}.seeds_title"))
    explanation(t(f"{S}.seeds_explain", seeds=SEEDS, steps=f"{DEFAULT.steps:,}"))

    def steps_found():
        return [formed_at(get_run(t, DEFAULT, seed, describe_run(t, DEFAULT, seed), snapshots=False))
                for seed in range(SEEDS)]

    def answer() -> int:
        found = steps_found()
        formed = [s for s in found if s is not None]
        if len(formed) < SEEDS * 0.9:
            return 3
        return 1 if max(formed) - min(formed) <= EVERY else 2

    if not predict_then_reveal(t, f"{S}.seeds", 3, answer, key="tiny_seeds_predict", seeds=SEEDS):
        return
    found = steps_found()
    formed = sorted(s for s in found if s is not None)
    seeds = [seed for seed, s in enumerate(found) if s is not None]
    show_plotly(figure_spec(grouped_bars, [t(f"{S}.seed_n", seed=seed) for seed in seeds],
                            {t(f"{S}.formed_at"): [found[seed] for seed in seeds]},
                            title=t(f"{S}.seeds_chart", steps=f"{DEFAULT.steps:,}"), value_label=t(f"{S}.step"),
                            fmt=",.0f"), key="tiny_seeds_chart")
    if formed:
        runs = [get_run(t, DEFAULT, seed, describe_run(t, DEFAULT, seed), snapshots=False) for seed in seeds]
        at = [list(r.steps).index(found[seed]) for r, seed in zip(runs, seeds)]  # the measurement the head formed at
        with_prev = sum(r.previous_token[i, 0].max() >= PREVIOUS_AT for r, i in zip(runs, at))
        flats = [f.length if (f := run_flat(r)) is not None else 0 for r in runs]
        st.markdown(t(f"{S}.seeds_numbers", formed=len(formed), seeds=SEEDS, median=f"{np.median(formed):,.0f}",
                      low=f"{formed[0]:,}", high=f"{formed[-1]:,}", steps=f"{DEFAULT.steps:,}",
                      slowest=seeds[int(np.argmax([found[s] for s in seeds]))],
                      margin=f"{DEFAULT.steps - formed[-1]:,}", prev_at=f"{PREVIOUS_AT:.1f}", with_prev=with_prev,
                      plateau_steps=PLATEAU_STEPS, plateaus=sum(f >= PLATEAU_STEPS for f in flats),
                      flat_low=f"{min(flats):,}", flat_high=f"{max(flats):,}"))
    missing = [str(seed) for seed, s in enumerate(found) if s is None]
    if missing:
        st.markdown(t(f"{S}.seeds_missing", seeds=t.join(missing), steps=f"{DEFAULT.steps:,}"))
    explanation(t(f"{S}.seeds_why", steps=f"{DEFAULT.steps:,}"))


# ---------------------------------------------------------------- (f) the bridge to lesson 9

def bridge_section(t, run: Run | None) -> None:
    """Lesson 9's two scores on the real model (its study, picked on one set and scored on the other) beside this
    run's strongest previous-token head in the first layer and induction head in the last."""
    st.subheader(t(f"{S}.bridge_title"))
    st.markdown(t(f"{S}.bridge"))
    if run is not None and run.config.n_layer > 1:
        try:
            with st.spinner(t("gpt.study_running")):
                real = gpt_study()
        except GPTUnavailable:
            st.caption(t(f"{S}.bridge_no_model", command=GPT_INSTALL_COMMAND))
        else:
            previous, induction = run.previous_token[-1, 0], run.induction[-1, -1]  # (H,) the first and last layer
            p, i = int(np.argmax(previous)), int(np.argmax(induction))
            st.markdown(t(f"{S}.bridge_numbers", tiny_prev=f"{previous[p]:.2f}", tiny_prev_head=head_label(0, p),
                          tiny_ind=f"{induction[i]:.2f}", tiny_ind_head=head_label(run.config.n_layer - 1, i),
                          real_prev=f"{real.previous_score[0]:.2f}", real_prev_head="L{}H{}".format(*real.previous),
                          real_ind=f"{real.picked_score[0]:.2f}", real_ind_head="L{}H{}".format(*real.picked),
                          heads=real.induction.size, sequences=real.sequences))
    st.page_link("lessons/gpt.py", label=t(f"{S}.gpt_link"), icon=":material/arrow_back:")
