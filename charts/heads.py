"""The charts of "What heads do": the loss with heads switched off against random draws, bars with intervals, the
rank of an answer per layer, and a scatter of heads. Plain figure dicts (charts/dicts.py); no Streamlit here."""

from __future__ import annotations

import numpy as np

from charts.dicts import arr, figure, layout as figure_layout
from charts.style import LEGEND_BELOW, UNIFORM_TEXT, ACCENT, SECOND, THIRD

GREY = "#999999"


def ablation_band(ks, random_draws, series: dict, levels: dict, *, title: str | None = None,
                  random_label: str = "random", k_label: str = "k", value_label: str = "loss",
                  height: int = 420) -> dict:
    """ks: (K,), random_draws: (K, D) one value per random draw, series: {name: (K,)} lines over k, levels:
    {name: value} dotted horizontal lines -> the draws as grey dots at each k, the series as lines with markers."""
    draws = np.asarray(random_draws, dtype=np.float64)
    x = [str(k) for k in ks]
    traces = [{"type": "scatter", "mode": "markers", "name": random_label,
               "x": [x[i] for i in range(len(x)) for _ in range(draws.shape[1])], "y": arr(draws.ravel()),
               "marker": {"color": GREY, "size": 6, "opacity": 0.6},
               "hovertemplate": f"{k_label} = %{{x}}<br>{random_label}: %{{y:.2f}}<extra></extra>"}]
    for (name, values), colour in zip(series.items(), (ACCENT, SECOND, THIRD, "#009E73")):
        traces.append({"type": "scatter", "mode": "lines+markers", "name": name, "x": x,
                       "y": arr(np.asarray(values, dtype=np.float64)), "marker": {"color": colour, "size": 10},
                       "line": {"color": colour},
                       "hovertemplate": f"{k_label} = %{{x}}<br>{name}: %{{y:.2f}}<extra></extra>"})
    for name, value in levels.items():
        traces.append({"type": "scatter", "mode": "lines", "name": name, "x": [x[0], x[-1]], "y": [value, value],
                       "line": {"color": "#555555", "dash": "dot"},
                       "hovertemplate": f"{name}: %{{y:.2f}}<extra></extra>"})
    lay = figure_layout(title, height, legend=LEGEND_BELOW,
                        xaxis={"title": {"text": k_label}, "type": "category"},
                        yaxis={"title": {"text": value_label}, "rangemode": "tozero"})
    return figure(traces, lay)


def interval_bars(labels, means, lows, highs, *, title: str | None = None, value_label: str = "",
                  highlight: int | None = None, fmt: str = ".2f", height: int = 360) -> dict:
    """labels: (m,), means/lows/highs: (m,) -> vertical bars with their 95 % intervals as error bars, values written;
    bar `highlight` in the accent colour."""
    m = np.asarray(means, dtype=np.float64)
    colours = [ACCENT if i == highlight else SECOND for i in range(len(m))]
    bars = {"type": "bar", "x": [str(s) for s in labels], "y": arr(m), "marker": {"color": colours},
            "error_y": {"type": "data", "symmetric": False, "array": arr(np.asarray(highs, dtype=np.float64) - m),
                        "arrayminus": arr(m - np.asarray(lows, dtype=np.float64)), "color": "#333333"},
            "text": [format(v, fmt) for v in m], "textposition": "inside",
            "hovertemplate": f"%{{x}}<br>{value_label}: %{{y:{fmt}}}<extra></extra>"}
    # a value that would shrink below 10 px to fit its bar is left out (Plotly drew "0.01" at 2 px on a phone)
    lay = figure_layout(title, height, showlegend=False, xaxis={"type": "category"}, uniformtext=UNIFORM_TEXT,
                        yaxis={"title": {"text": value_label}, "rangemode": "tozero"})
    return figure([bars], lay)


def rank_by_layer(series: dict, *, title: str | None = None, layer_label: str = "layer",
                  rank_label: str = "rank", top: int = 10, top_label: str = "top 10", height: int = 400) -> dict:
    """series: {name: (L + 1,) ranks (0 = first)} -> one line each over the layers, drawn as rank + 1 (1 = top) on a
    reversed log axis, with a dotted line where the top `top` ends."""
    traces = []
    for (name, ranks), colour in zip(series.items(), (ACCENT, SECOND, THIRD, GREY)):
        r = np.asarray(ranks, dtype=np.float64)
        traces.append({"type": "scatter", "mode": "lines+markers", "name": name, "x": list(range(len(r))),
                       "y": arr(r + 1), "line": {"color": colour},
                       "hovertemplate": f"{layer_label} %{{x}}<br>{name}: %{{y:,.0f}}"
                                        "<extra></extra>"})
    length = max(len(v) for v in series.values())
    traces.append({"type": "scatter", "mode": "lines", "name": top_label, "x": [0, length - 1], "y": [top, top],
                   "line": {"color": "#555555", "dash": "dot"}, "hoverinfo": "skip"})
    lay = figure_layout(title, height, legend=LEGEND_BELOW,
                        xaxis={"title": {"text": layer_label}, "dtick": 5},
                        yaxis={"title": {"text": rank_label}, "type": "log", "autorange": "reversed"})
    return figure(traces, lay)


def head_scatter(x, y, names, *, title: str | None = None, x_label: str = "", y_label: str = "",
                 highlight=(), highlight_label: str = "", other_label: str = "", height: int = 420) -> dict:
    """x, y: (m,) one point per head, names: (m,) -> a scatter; the heads in `highlight` (indices) in the accent
    colour as their own trace."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    marked = np.zeros(len(x), dtype=bool)
    marked[list(highlight)] = True
    traces = []
    for mask, colour, label in ((~marked, SECOND, other_label), (marked, ACCENT, highlight_label)):
        traces.append({"type": "scatter", "mode": "markers", "name": label, "x": arr(x[mask]), "y": arr(y[mask]),
                       "text": [names[i] for i in np.flatnonzero(mask)], "marker": {"color": colour, "size": 7},
                       "hovertemplate": f"%{{text}}<br>{x_label}: %{{x:.2f}}<br>{y_label}: %{{y:.3f}}<extra></extra>"})
    lay = figure_layout(title, height, legend=LEGEND_BELOW,
                        xaxis={"title": {"text": x_label}}, yaxis={"title": {"text": y_label}})
    return figure(traces, lay)


def repeat_arrows(tokens, queries, targets, weights, *, marked=(), hover=None, title: str | None = None,
                  min_weight: float = 0.0, line_px: int = 640, height: int | None = None) -> dict:
    """tokens: (n,) as shown, queries/targets/weights: (m,) arrows from a repeat to a position after an earlier
    occurrence of its token (width and opacity follow the head's weight there), marked: positions in the accent
    colour (the targets are in the arrows' colour), hover: (n,) texts -> the text laid out in lines (wrapped at
    line_px of estimated width) with the arrows: each starts above its repeat and ends below its target (above it
    when both share a line); an arrow with less weight than min_weight is left out (its target is still coloured)."""
    from charts.style import text_width_px

    xs, ys, x, line = [], [], 0.0, 0
    for token in tokens:
        width = text_width_px(token, 14) + 4
        if x + width > line_px and x > 0:
            x, line = 0.0, line + 1
        xs.append(x + width / 2)
        ys.append(line)
        x += width
    marked, reached = set(int(i) for i in marked), set(int(k) for k in targets)
    colours = [ACCENT if i in marked else SECOND if i in reached else "#444444" for i in range(len(xs))]
    text = {"type": "scatter", "mode": "text", "x": xs, "y": ys, "text": [str(tok) for tok in tokens],
            "textfont": {"size": 14, "color": colours},
            "hovertext": list(hover) if hover is not None else [str(tok) for tok in tokens], "hoverinfo": "text",
            "showlegend": False}
    arrows = []
    for q, k, w in zip(queries, targets, np.asarray(weights, dtype=np.float64)):
        q, k, w = int(q), int(k), float(w)
        if w < min_weight:
            continue
        end = ys[k] - 0.32 if ys[k] == ys[q] else ys[k] + 0.32
        arrows.append({"x": xs[k], "y": end, "ax": xs[q], "ay": ys[q] - 0.32, "xref": "x", "yref": "y",
                       "axref": "x", "ayref": "y", "text": "", "showarrow": True, "arrowhead": 2,
                       "arrowsize": 1, "arrowwidth": 0.8 + 3.2 * w, "opacity": 0.25 + 0.75 * w,
                       "arrowcolor": SECOND})
    lines = (ys[-1] + 1) if ys else 1
    lay = figure_layout(title, height or 60 * lines + 90, showlegend=False, annotations=arrows, dragmode=False,
                        xaxis={"visible": False, "range": [-4, line_px + 4], "fixedrange": True},
                        yaxis={"visible": False, "range": [lines - 0.4, -0.9], "fixedrange": True})
    return figure([text], lay)
