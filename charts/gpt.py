"""Lesson 9's charts (inside a GPT): the next-token distribution before and after the sampling knobs, a profile over
the layers for the trained model and its untrained copy, and grouped bars (losses, times). No Streamlit here."""

from __future__ import annotations

import numpy as np

from charts.dicts import arr, figure, layout as figure_layout
from charts.style import LEGEND_BELOW, PHONE_PLOT_PX, UNIFORM_TEXT, ACCENT, SECOND, THIRD, wrap_text


def next_token_bars(labels, model_probs, sampled_probs, *, title: str | None = None, model_label: str = "model",
                    sampled_label: str = "sampled from", value_label: str = "probability", height: int = 420) -> dict:
    """labels: (k,) tokens, model_probs: (k,) the model's softmax at temperature 1, sampled_probs: (k,) after the
    knobs -> horizontal grouped bars, the most likely token on top; hover shows exact values."""
    labels = [str(x) for x in labels]
    rows = [f"{i + 1}. {label}" for i, label in enumerate(labels)]
    traces = []
    for name, values, colour in ((model_label, model_probs, SECOND), (sampled_label, sampled_probs, ACCENT)):
        v = np.asarray(values, dtype=np.float64) * 100.0
        traces.append({"type": "bar", "orientation": "h", "name": name, "y": rows, "x": arr(v),
                       "marker": {"color": colour}, "text": [f"{x:.1f}%" for x in v], "textposition": "outside",
                       "cliponaxis": False, "hovertemplate": f"%{{y}}<br>{name}: %{{x:.2f}} %<extra></extra>"})
    top = max([float(np.max(np.asarray(p, dtype=np.float64))) for p in (model_probs, sampled_probs)] + [1e-9]) * 100.0
    # room right of the longest bar for its value at full size (on a phone Plotly shrank "77.3%" to 7.5 px to fit)
    lay = figure_layout(title, height, barmode="group", legend=LEGEND_BELOW, uniformtext=UNIFORM_TEXT,
                        xaxis={"title": {"text": value_label + " (%)"}, "range": [0, top * 1.35]},
                        yaxis={"type": "category", "autorange": "reversed", "automargin": True})
    return figure(traces, lay)


def layer_profile(trained, untrained, *, title: str | None = None, trained_label: str = "trained",
                  untrained_label: str = "untrained", value_label: str = "share", layer_label: str = "layer",
                  reference: float | None = None, reference_label: str = "", height: int = 360) -> dict:
    """trained: (L,), untrained: (L,) one number per layer -> two lines over the layers (percent), and an optional
    dotted reference level (what an even spread would give)."""
    layers = list(range(len(trained)))
    traces = []
    for name, values, colour in ((trained_label, trained, ACCENT), (untrained_label, untrained, SECOND)):
        v = np.asarray(values, dtype=np.float64) * 100.0
        traces.append({"type": "scatter", "mode": "lines+markers", "name": name, "x": layers, "y": arr(v),
                       "line": {"color": colour}, "hovertemplate": f"{layer_label} %{{x}}<br>{name}: %{{y:.1f}} %"
                                                                   "<extra></extra>"})
    if reference is not None:
        traces.append({"type": "scatter", "mode": "lines", "name": reference_label, "x": [0, len(layers) - 1],
                       "y": [reference * 100.0] * 2, "line": {"color": THIRD, "dash": "dot"},
                       "hovertemplate": f"{reference_label}: %{{y:.1f}} %<extra></extra>"})
    lay = figure_layout(title, height, legend=LEGEND_BELOW,
                        xaxis={"title": {"text": layer_label}, "dtick": 5},
                        yaxis={"title": {"text": value_label + " (%)"}, "range": [0, 100]})
    return figure(traces, lay)


def grouped_bars(groups, series: dict, *, title: str | None = None, value_label: str = "", fmt: str = ".2f",
                 height: int = 340) -> dict:
    """groups: (g,) labels, series: {name: (g,) values} -> vertical bars, one colour per series, values written."""
    colours = (ACCENT, SECOND, THIRD)
    traces = []
    for (name, values), colour in zip(series.items(), colours):
        v = np.asarray(values, dtype=np.float64)
        traces.append({"type": "bar", "name": name, "x": [str(g) for g in groups], "y": arr(v),
                       "marker": {"color": colour}, "text": [format(x, fmt) for x in v], "textposition": "outside",
                       "cliponaxis": False, "hovertemplate": f"%{{x}}<br>{name}: %{{y:{fmt}}}<extra></extra>"})
    names = [str(g) for g in groups]
    # long group names wrap into lines a phone's share of the width holds, upright (turned on their side they ran down
    # into the legend: lesson 10's "attention weight on position 0")
    wrapped = [wrap_text(name, max(60.0, PHONE_PLOT_PX / max(len(names), 1) - 10), size=12) for name in names]
    xaxis = {"type": "category", "tickvals": names, "ticktext": wrapped, "tickangle": 0} if wrapped != names else \
        {"type": "category"}
    # a value that would shrink below 10 px to fit its bar (18 layers x 2 on a phone: 3.4 px) is left out: hover says it
    lay = figure_layout(title, height, barmode="group", legend=LEGEND_BELOW, uniformtext=UNIFORM_TEXT,
                        yaxis={"title": {"text": value_label}, "rangemode": "tozero"}, xaxis=xaxis)
    return figure(traces, lay)


def model_sizes(names, parameters, *, title: str | None = None, value_label: str = "parameters",
                value_text=None, height: int = 300) -> dict:
    """names: (m,), parameters: (m,) counts -> horizontal bars on a log axis, the first (this model) highlighted.
    value_text: (m,) each bar's label as the page's language writes the count (default: 1.5 B, 134.5 M)."""
    v = np.asarray(parameters, dtype=np.float64)
    if value_text is None:
        value_text = [f"{x / 1e9:,.1f} B" if x >= 1e9 else f"{x / 1e6:,.1f} M" for x in v]
    bars = {"type": "bar", "orientation": "h", "y": [str(n) for n in names], "x": arr(v),
            "marker": {"color": [ACCENT] + [SECOND] * (len(v) - 1)},
            "text": [str(x) for x in value_text], "textposition": "outside",
            "cliponaxis": False, "hovertemplate": f"%{{y}}<br>{value_label}: %{{x:,.0f}}<extra></extra>"}
    # a log axis ending at the longest bar left its label ("175.0 B") cut at the plot's edge, at 1280 px and on a
    # phone: the axis runs on by 40 % of its span past the longest bar (Plotly's log ranges are in decades)
    lo, top = np.log10(v.min()) - 0.5, np.log10(v.max())
    lay = figure_layout(title, height, showlegend=False,
                        xaxis={"type": "log", "title": {"text": value_label}, "range": [lo, top + 0.4 * (top - lo)]},
                        yaxis={"type": "category", "autorange": "reversed", "automargin": True})
    return figure([bars], lay)


def induction_map(scores, row_labels, col_labels, threshold: float, *, mark_label: str = "", **heatmap) -> dict:
    """scores: (L, H) each head's induction score -> lesson 9's heat map (charts.matrix.attention_heatmap, rows the
    layers) with every head at or above ``threshold`` ringed: the threshold the page counts, marked on the map."""
    from charts.matrix import attention_heatmap

    fig = attention_heatmap(scores, row_labels, col_labels, **heatmap)
    v = np.asarray(scores, dtype=np.float64)
    layers, heads = np.nonzero(v >= threshold)
    fig["data"].append({"type": "scatter", "mode": "markers", "name": mark_label, "x": [int(h) for h in heads],
                        "y": [int(layer) for layer in layers], "showlegend": True,
                        "marker": {"symbol": "circle-open", "size": 16, "color": THIRD, "line": {"width": 2}},
                        "hoverinfo": "skip"})
    fig["layout"]["legend"] = {"orientation": "h", "y": -0.08}
    return fig
