"""Lesson "Attention as it is built today": its four sections, each a question first, then the measurement that
answers it (grouped-query attention, the sliding window, RoPE's two bases and QK-norm, Japanese read as words)."""

from __future__ import annotations

import streamlit as st

from attention_core.gemma.weights import GemmaConfig
from attention_core.gpt_studies import modern as study
from attention_core.measure.head_stats import Count
from attention_core.smollm2.weights import GPTConfig
from charts.gpt import grouped_bars
from charts.matrix import attention_heatmap
from charts.modern import distance_lines
from ui.modern.page import (S, japanese_heads, readable_ids, shown, smollm2_cache_bytes, smollm2_pieces,
                            text_numbers, texts, window_summary)
from ui.shared.common import BOX_CHARS, explanation, guarded_fragment, heatmap_axes, md_escape, predict_then_reveal
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec

GEMMA, SMOLLM2 = GemmaConfig(), GPTConfig()
LONG_CONTEXT = 32768  # Gemma's context: what the window saves there


def f2(x: float) -> str:
    return f"{x:.2f}"


def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def kib(n: float) -> str:
    return f"{n / 1024:,.1f}"


def mib(n: float) -> str:
    return f"{n / 2 ** 20:,.0f}"


def _heatmap(t, weights, labels, title: str, key: str) -> None:
    show_plotly(figure_spec(attention_heatmap, weights, labels, title=title, axis_titles=heatmap_axes(t),
                            value_label=t("common.weight")), key=key)


# ---------------------------------------------------------------- grouped-query attention

def gqa_answer(numbers: study.TextNumbers) -> int:
    spread = numbers.spread
    return 1 if spread.within < 0.05 else (2 if spread.within < 0.75 * spread.between else 3)


@guarded_fragment  # an answer or a slider reruns its section alone: the page holds four of Gemma's measurements
def gqa_section(t, ids) -> None:
    st.subheader(t(f"{S}.gqa_title"))
    explanation(t(f"{S}.gqa_explain"))
    numbers = text_numbers(ids)
    kv_bytes_section(t, ids, numbers)  # what sharing saves is arithmetic on the config: it does not answer the question
    if not predict_then_reveal(t, S, 3, lambda: gqa_answer(numbers), key="modern_gqa_predict"):
        return
    layer = st.slider(t(f"{S}.layer"), 0, GEMMA.n_layer - 1, 0, key="modern_layer", bind="query-params")
    labels = [shown(i) for i in ids]
    columns = st.columns(2)
    for head in range(GEMMA.n_head):
        with columns[head % 2]:
            _heatmap(t, numbers.maps[layer, head], labels, t(f"{S}.gqa_map", layer=layer, head=head),
                     f"modern_gqa_map_{head}")
    spread = numbers.spread
    st.markdown(t(f"{S}.gqa_numbers", within=f2(spread.within), between=f2(spread.between),
                  within_pairs=spread.within_pairs, between_pairs=spread.between_pairs, layer=layer,
                  here=f2(float(spread.by_group[layer, 0])), lowest=f2(float(spread.by_group.min())),
                  highest=f2(float(spread.by_group.max()))))


def kv_bytes_section(t, ids, numbers: study.TextNumbers) -> None:
    gemma_config = study.kv_bytes_per_token(GEMMA.n_layer, GEMMA.n_kv_head, GEMMA.head_dim)
    gemma_full = study.kv_bytes_per_token(GEMMA.n_layer, GEMMA.n_head, GEMMA.head_dim)
    smol_config = study.kv_bytes_per_token(SMOLLM2.n_layer, SMOLLM2.n_kv_head, SMOLLM2.head_dim)
    smol_full = study.kv_bytes_per_token(SMOLLM2.n_layer, SMOLLM2.n_head, SMOLLM2.head_dim)
    groups = [t(f"{S}.model_gemma"), t(f"{S}.model_smollm2")]
    show_plotly(figure_spec(grouped_bars, groups, {t(f"{S}.kv_shared"): [gemma_config / 1024, smol_config / 1024],
                                                   t(f"{S}.kv_full"): [gemma_full / 1024, smol_full / 1024]},
                            title=t(f"{S}.kv_chart"), value_label=t(f"{S}.kv_axis"), fmt=".1f"), key="modern_kv_bars")
    st.markdown(t(f"{S}.kv_numbers", gemma=kib(gemma_config), gemma_full=kib(gemma_full), smol=kib(smol_config),
                  smol_full=kib(smol_full), saved=f"{gemma_full / gemma_config:.0f}",
                  measured=kib(numbers.cache_bytes_per_token), tokens=len(ids)))
    measured = smollm2_cache_bytes(model_text(ids))
    if measured is None:
        st.caption(t(f"{S}.kv_no_smollm2"))
    else:
        st.caption(t(f"{S}.kv_smollm2_measured", tokens=measured[0], measured=kib(measured[1])))


def model_text(ids) -> str:
    """The learner's text back from its Gemma ids (what the page read of it), for SmolLM2."""
    from ui.modern.page import model

    return model()[1].decode(ids)


# ---------------------------------------------------------------- the sliding window

def window_answer(summary: dict) -> int:
    past = float(summary["past"][list(GEMMA.global_layers)].mean())
    return 1 if past < 0.05 else (2 if past < 0.3 else 3)


@guarded_fragment
def window_section(t) -> None:
    st.subheader(t(f"{S}.window_title"))
    explanation(t(f"{S}.window_explain", window=GEMMA.window))
    if not predict_then_reveal(t, f"{S}.window", 3, lambda: window_answer(window_summary()),
                               key="modern_window_predict", window=GEMMA.window):
        return
    summary = window_summary()
    past, on_start = summary["past"], summary["on_start"]
    local = [layer for layer in range(GEMMA.n_layer) if layer not in GEMMA.global_layers]
    show_plotly(figure_spec(grouped_bars, list(range(GEMMA.n_layer)),
                            {t(f"{S}.window_past"): past.mean(axis=1), t(f"{S}.window_start"): on_start.mean(axis=1)},
                            title=t(f"{S}.window_chart"), value_label=t("common.weight"), fmt=".2f"),
                key="modern_window_bars")
    st.caption(t(f"{S}.window_chart_note", tokens=summary["tokens"], queries=summary["queries"]))
    last = summary["last_row"]
    n = summary["tokens"]
    distances = list(range(n))
    show_plotly(figure_spec(distance_lines, distances,
                            {t(f"{S}.window_layer", layer=local[-1]): last[local[-1]].mean(axis=0)[::-1],
                             t(f"{S}.window_layer", layer=GEMMA.global_layers[-1]):
                                 last[GEMMA.global_layers[-1]].mean(axis=0)[::-1]},
                            title=t(f"{S}.window_row_chart", tokens=n), x_label=t(f"{S}.distance"),
                            y_label=t("common.weight"), marker=GEMMA.window, marker_label=t(f"{S}.window_edge"),
                            log_x=True), key="modern_window_row")
    globals_past = past[list(GEMMA.global_layers)]
    with_window = study.window_cache_bytes(LONG_CONTEXT, GEMMA.n_layer, GEMMA.global_layers, GEMMA.window,
                                           GEMMA.n_kv_head, GEMMA.head_dim)
    without = study.window_cache_bytes(LONG_CONTEXT, GEMMA.n_layer, GEMMA.global_layers, None, GEMMA.n_kv_head,
                                       GEMMA.head_dim)
    st.markdown(t(f"{S}.window_numbers", local_max=f"{float(summary['past_max'][local].max()):g}",
                  local_layers=len(local), past=pct(float(globals_past.mean())),
                  start=pct(float(on_start[list(GEMMA.global_layers)].mean())),
                  lowest=pct(float(globals_past.min())), highest=pct(float(globals_past.max())),
                  tokens=n, queries=summary["queries"], window=GEMMA.window))
    st.markdown(t(f"{S}.window_saves", context=f"{LONG_CONTEXT:,}", without=mib(without), with_window=mib(with_window),
                  share=pct(1 - with_window / without)))
    explanation(t(f"{S}.window_limits"), caption=True)


# ---------------------------------------------------------------- RoPE's two bases and QK-norm

def rope_answer(numbers: study.TextNumbers) -> int:
    far_local = study.score_range(numbers.distances, numbers.scores_local_base, GEMMA.window, LONG_CONTEXT)
    far_global = study.score_range(numbers.distances, numbers.scores_global_base, GEMMA.window, LONG_CONTEXT)
    return 1 if far_local > 1.5 * far_global else (2 if far_global > 1.5 * far_local else 3)


@guarded_fragment
def rope_section(t, ids) -> None:
    st.subheader(t(f"{S}.rope_title"))
    explanation(t(f"{S}.rope_explain"))
    if not predict_then_reveal(t, f"{S}.rope", 3, lambda: rope_answer(text_numbers(ids)), key="modern_rope_predict"):
        return
    numbers = text_numbers(ids)
    local_name, global_name = (t(f"{S}.rope_base", base=f"{b:,.0f}") for b in (GEMMA.rope_local_base,
                                                                             GEMMA.rope_global_base))
    layer = GEMMA.global_layers[0]
    show_plotly(figure_spec(distance_lines, numbers.distances,
                            {local_name: numbers.scores_local_base, global_name: numbers.scores_global_base},
                            title=t(f"{S}.rope_chart", layer=layer, token=shown(ids[-1])),
                            x_label=t(f"{S}.distance"), y_label=t(f"{S}.score"), log_x=True, marker=GEMMA.window,
                            marker_label=t(f"{S}.window_edge"), fmt=".2f"), key="modern_rope_lines")
    ranges = {name: [study.score_range(numbers.distances, scores, lo, hi) for lo, hi in ((1, GEMMA.window),
                                                                                         (GEMMA.window, LONG_CONTEXT))]
              for name, scores in (("local", numbers.scores_local_base), ("global", numbers.scores_global_base))}
    st.markdown(t(f"{S}.rope_numbers", layer=layer, near_local=f2(ranges["local"][0]), far_local=f2(ranges["local"][1]),
                  near_global=f2(ranges["global"][0]), far_global=f2(ranges["global"][1]),
                  window=GEMMA.window, context=f"{LONG_CONTEXT:,}",
                  slow_local=study.slow_pairs(GEMMA.head_dim, GEMMA.rope_local_base, LONG_CONTEXT),
                  slow_global=study.slow_pairs(GEMMA.head_dim, GEMMA.rope_global_base, LONG_CONTEXT),
                  pairs=GEMMA.head_dim // 2))
    lengths = numbers.lengths
    st.markdown(t(f"{S}.qk_numbers", **{f"{name}_{part}": f"{value:,.1f}" for name, spread in lengths.items()
                                        for part, value in zip(("mean", "min", "max"), spread)},
                  q_ratio=f"{lengths['q_raw'][2] / lengths['q_raw'][1]:,.0f}",
                  q_normed_ratio=f"{lengths['q_normed'][2] / lengths['q_normed'][1]:,.0f}"))


# ---------------------------------------------------------------- Japanese read as words

def japanese_answer(result: dict) -> int:
    share = result["trained"]["k"] / result["trained"]["n"]
    chance = result["chance"] / result["trained"]["n"]
    return 1 if share < 2 * chance else (2 if share < 0.5 else 3)


@guarded_fragment
def japanese_section(t) -> None:
    st.subheader(t(f"{S}.ja_title"))
    explanation(t(f"{S}.ja_explain"))
    text = st.text_input(t(f"{S}.ja_text"), value=texts().japanese, max_chars=BOX_CHARS, key="modern_ja_text",
                         bind="query-params")
    ids = readable_ids(t, text, "ja")
    if ids is None:
        return
    gemma_pieces = [md_escape(shown(i)) for i in ids]
    st.markdown(t(f"{S}.ja_gemma", n=len(ids), tokens=" | ".join(gemma_pieces)))
    smol = smollm2_pieces(model_text(ids))
    if smol is None:
        st.caption(t(f"{S}.kv_no_smollm2"))
    else:
        st.markdown(t(f"{S}.ja_smollm2", n=len(smol), tokens=" | ".join(md_escape(p) for p in smol)))
    result_call = japanese_heads
    if not predict_then_reveal(t, f"{S}.ja", 3, lambda: japanese_answer(result_call()), key="modern_ja_predict",
                               pick=len(texts().head_sentences) // 2):
        return
    result = japanese_heads()
    trained, untrained = result["trained"], result["untrained"]
    held, held_untrained = Count(trained["k"], trained["n"]), Count(untrained["k"], untrained["n"])
    head = tuple(trained["head"])
    st.markdown(t(f"{S}.ja_numbers", head=f"L{head[0]}H{head[1]}", pick=result["pick_sentences"],
                  score=result["score_sentences"], k=held.k, n=held.n, share=pct(held.share),
                  low=pct(held.interval[0]), high=pct(held.interval[1]), pick_share=pct(trained["pick_share"]),
                  untrained=f"L{untrained['head'][0]}H{untrained['head'][1]}", u_k=held_untrained.k,
                  u_share=pct(held_untrained.share), u_low=pct(held_untrained.interval[0]),
                  u_high=pct(held_untrained.interval[1]), chance=pct(result["chance"] / held.n)))
    maps = text_numbers(ids).maps
    _heatmap(t, maps[head[0], head[1]], [shown(i) for i in ids],
             t(f"{S}.ja_map", head=f"L{head[0]}H{head[1]}"), "modern_ja_map")
    explanation(t(f"{S}.ja_limits", n=held.n), caption=True)
