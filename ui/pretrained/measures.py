"""Lesson 8's measured sections: the tired/wide minimal pair, the "it" head by what holds out, agreement through
minimal pairs, the Winograd pairs against what the best of 72 heads reaches by chance, and the catalogue.

Every number comes from attention_core.pretrained.measure (made once per process at start-up, ui/pretrained/page.py):
heads picked on one half of a set and scored on the other, counts with Wilson 95 % intervals, a positional rule and
the untrained copy alongside.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attention_core.measure.head_stats import Count, head_name
from attention_core.pretrained.measure import ROWS, PairStudy
from charts.matrix import attention_heatmap
from charts.tokens import token_lines
from ui.shared.common import csv_download, data_table, explanation
from ui.shared.display import show_plotly
from ui.shared.figures import figure_spec
from ui.pretrained.page import (
    S, UNTRAINED_SEED, grid_labels, lesson_sets, viewed, featured, measures, sentence_view,
)


def pct(x: float) -> str:
    return f"{x:.0%}"


def interval(count: Count) -> str:
    lo, hi = count.interval
    return f"{lo:.0%}–{hi:.0%}"


def count_values(prefix: str, count: Count) -> dict:
    """-> {prefix_k, prefix_n, prefix_share, prefix_ci} for a sentence that states a count."""
    return {f"{prefix}_k": count.k, f"{prefix}_n": count.n, f"{prefix}_share": pct(count.share),
            f"{prefix}_ci": interval(count)}


# ---------------------------------------------------------------- the tired/wide minimal pair

def pair_section(t, hide: bool) -> None:
    """The famous pair in the featured head, what that head follows on the "it" set, agreement and Winograd."""
    best, pair, test = featured()
    st.subheader(t(f"{S}.pair_title"))
    explanation(t(f"{S}.pair_explain"))
    name = head_name((best.layer, best.head))
    for s, column in enumerate(st.columns(2, gap="medium")):
        _, _, full = viewed(pair.sentences[s], hide)
        view = sentence_view(pair.sentences[s])
        row_at = view.tokens.index(pair.pronouns[s])
        weights = np.asarray(full[best.layer, best.head, row_at], dtype=np.float64)
        with column:
            show_plotly(figure_spec(token_lines, list(view.tokens), weights, row_at,
                                    title=t(f"{S}.pair_lines", head=name, word=pair.sentences[s].split()[-1]),
                                    value_label=t("common.weight"), query_label=t("common.axis_query"),
                                    key_label=t("common.axis_key")), key=f"pretrained_pair_{s}")
    largest = test.weights.max(axis=(0, 3))[test.flips].max() if test.flips.any() else 0.0
    st.markdown(t(f"{S}.flips", flips=int(test.flips.sum()), heads=test.flips.size, largest=pct(largest),
                  right_both=int(test.right_in_both.sum())))
    with st.spinner(t(f"{S}.catalogue_running")):
        found = measures()
    referent = found.referent
    st.markdown(t(f"{S}.it_head", head=name, items=referent.items, person=referent.person_items,
                  **count_values("ref", referent.counts["referent"]),
                  **count_values("first", referent.counts["first_noun"]),
                  **count_values("subj", referent.counts["subject"]),
                  **count_values("rest", referent.subject_among_rest)))
    agreement_part(t, found.agreement)
    winograd_part(t, found.winograd)


def _study_values(study: PairStudy) -> dict:
    held = study.held_out
    return {"pairs": study.pairs, "sentences": 2 * study.pairs, "heads": study.accuracy.size,
            "best": head_name(study.best), **count_values("best", study.best_count), "mean": pct(study.mean),
            "chance_mean": pct(study.chance.mean), "chance_p95": pct(study.chance.p95),
            "p": f"{study.chance.p_value:.2f}" if study.chance.p_value > 0 else f"< {1 / study.chance.draws:.4f}",
            "draws": study.chance.draws, "seed": study.chance.seed,
            "pick_pairs": len(study.split.pick_idx), "score_pairs": len(study.split.score_idx),
            "picked": held.name, **count_values("pick", held.pick_count), **count_values("held", held.held_out_count),
            **count_values("untrained", study.untrained_held_out.held_out_count)}


def agreement_part(t, study: PairStudy) -> None:
    st.markdown(f"#### {t(f'{S}.agreement_title')}")
    st.markdown(t(f"{S}.agreement_numbers", **_study_values(study)))


def winograd_part(t, study: PairStudy) -> None:
    st.markdown(f"#### {t(f'{S}.wino_heading')}")
    layers, count = study.accuracy.shape
    rows, cols = grid_labels(t, layers, count)
    show_plotly(figure_spec(attention_heatmap, study.accuracy, rows, cols, title=t(f"{S}.wino_title",
                            pairs=study.pairs), value_label=t(f"{S}.accuracy"), plot_width=600, height=360,
                            axis_titles=(t(f"{S}.axis_head"), t(f"{S}.axis_layer"))), key="pretrained_wino_map")
    values = _study_values(study)
    st.markdown(t(f"{S}.wino_numbers", **values))
    st.markdown(t(f"{S}.wino_half", half=study.half_cells, same=study.same_noun_heads, heads=study.accuracy.size))
    beyond = study.chance.p_value < 0.05 and study.held_out.held_out_count.interval[0] > 0.5
    st.markdown(f"**{t(f'{S}.verdict_beyond' if beyond else f'{S}.verdict_chance', **values)}**")
    explanation(t(f"{S}.verdict_limits", **values))
    st.page_link("lessons/heads.py", label=t(f"{S}.influence_link"), icon=":material/arrow_forward:")  # weight vs effect


# ---------------------------------------------------------------- the catalogue

def catalogue_table(t) -> pd.DataFrame:
    """The catalogue as the page shows it (and exports it): one row per kind, headers in the page's language."""
    rows = measures().catalogue
    out = []
    for kind in ROWS:
        row = rows[kind]
        held, control = row.trained.held_out_count, row.untrained.held_out_count
        score = (f"{held.k} / {held.n} ({pct(held.share)})" if held is not None
                 else t(f"{S}.mean_weight", share=pct(row.trained.held_out_mean)))
        untrained = (f"{row.untrained.name}: {control.k} / {control.n} ({pct(control.share)})" if control is not None
                     else f"{row.untrained.name}: {t(f'{S}.mean_weight', share=pct(row.untrained.held_out_mean))}")
        baseline = "" if row.baseline is None else (f"{t(f'{S}.rule_{row.rule}')}: {row.baseline.k} / "
                                                    f"{row.baseline.n} ({pct(row.baseline.share)})")
        out.append({t(f"{S}.col_kind"): t(f"{S}.kind_{kind}"), t(f"{S}.col_picked"): row.trained.name,
                    t(f"{S}.col_held_out"): score, t(f"{S}.col_interval"): "" if held is None else interval(held),
                    t(f"{S}.col_baseline"): baseline, t(f"{S}.col_untrained"): untrained,
                    t(f"{S}.col_split"): t(f"{S}.split_sizes", pick=len(row.split.pick_idx),
                                           score=len(row.split.score_idx))})
    return pd.DataFrame(out)


def catalogue_section(t) -> None:
    st.subheader(t(f"{S}.catalogue_title"))
    explanation(t(f"{S}.catalogue_explain"))
    with st.spinner(t(f"{S}.catalogue_running")):
        table = catalogue_table(t)
    data_table(table, hide_index=True, wrap=True)  # seven columns of phrases: wrapped, never scrolled
    csv_download(t(f"{S}.catalogue_csv"), table, "pretrained_catalogue.csv", key="pretrained_catalogue_csv")
    sets = lesson_sets()
    st.caption(t(f"{S}.catalogue_caption", seed=UNTRAINED_SEED, agreement=len(sets.agreement),
                 referent=len(sets.it_referent)))
