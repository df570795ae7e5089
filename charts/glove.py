"""Lesson 6 charts: the rank histogram over seeds, the 3-D PCA attention cloud, the training loss curve."""

from __future__ import annotations

import numpy as np

from charts.dicts import arr, colorscale, figure
from charts.style import ACCENT, SECOND, SEQUENTIAL, THIRD, base_layout

MIN_MARKER, MAX_MARKER = 5.0, 26.0
MIN_LINE, MAX_LINE = 0.5, 12.0


def rank_histogram(
    counts,
    highlight_rank: int | None = None,
    title: str | None = None,
    rank_label: str = "rank",
    share_label: str = "share of seeds",
    observed_label: str = "observed",
    uniform_label: str = "uniform (1/n)",
    height: int = 380,
) -> dict:
    """counts: (n,) how often each rank 1..n occurred -> bars of the share (%) with the uniform 1/n line.

    Bar ``highlight_rank`` (1-based, e.g. this seed's rank) is drawn in the accent colour.
    """
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.size
    total = max(counts.sum(), 1.0)
    ranks = np.arange(1, n + 1)
    shares = 100.0 * counts / total
    colours = [ACCENT if r == highlight_rank else SECOND for r in ranks]
    uniform = np.full(n, 100.0 / n) if n else np.zeros(0)
    data = [
        {"customdata": arr(counts, np.int32),
         "hovertemplate": f"{rank_label} %{{x}}<br>{share_label} = %{{y:.2f}} % (%{{customdata}})<extra></extra>",
         "marker": {"color": colours}, "name": observed_label, "x": arr(ranks, np.int32),
         "y": arr(shares), "type": "bar"},
        {"hovertemplate": f"{uniform_label} = %{{y:.2f}} %<extra></extra>",
         "line": {"color": THIRD, "dash": "dash", "width": 3}, "marker": {"size": 10, "symbol": "line-ew"},
         "mode": "lines+markers", "name": uniform_label, "x": arr(ranks, np.int32),
         "y": arr(uniform), "type": "scatter"},
    ]
    layout = {k: v for k, v in base_layout(title, height).items() if v is not None}
    layout.update(
        xaxis={"title": {"text": rank_label}, "tickmode": "array", "tickvals": ranks.tolist()},
        yaxis={"title": {"text": share_label + " (%)"}, "rangemode": "tozero"},
        legend=dict(orientation="h", yanchor="top", y=0.98, xanchor="center", x=0.5),
        bargap=0.15,
    )
    return figure(data, layout)


def _scaled(weights: np.ndarray, low: float, high: float) -> np.ndarray:
    """weights in [0, 1] -> low..high by the share of the largest weight (so the biggest is always ``high``)."""
    top = float(np.max(weights)) if weights.size else 0.0
    if top <= 0:
        return np.full(weights.shape, low)
    return low + (high - low) * weights / top


def attention_cloud_3d(
    coords,
    labels,
    weights,
    query_index: int,
    title: str | None = None,
    weight_label: str = "weight",
    query_label: str = "query",
    axis_labels: tuple[str, str, str] = ("PC1", "PC2", "PC3"),
    height: int = 560,
) -> dict:
    """coords: (n, 3), labels: (n,), weights: (n,) the query's attention row -> rotatable Scatter3d (a plain dict).

    The query is a diamond in the accent colour; every other word's weight sets its marker size and colour
    (Viridis) and the width of its line from the query. Hover shows the word and its exact weight.
    """
    P = np.asarray(coords, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    labels = [str(x) for x in labels]
    n = len(labels)
    q = query_index
    others = [i for i in range(n) if i != q]
    widths = _scaled(w, MIN_LINE, MAX_LINE)
    data = [  # one trace per line: Scatter3d has one width per trace
        {"hoverinfo": "skip", "line": {"color": ACCENT, "width": float(widths[i])}, "mode": "lines", "opacity": 0.55,
         "showlegend": False, "x": [float(P[q, 0]), float(P[i, 0])], "y": [float(P[q, 1]), float(P[i, 1])],
         "z": [float(P[q, 2]), float(P[i, 2])], "type": "scatter3d"}
        for i in others
    ]
    data.append({
        "customdata": arr(w[others]),
        "hovertemplate": f"%{{text}}<br>{weight_label} = %{{customdata:.4f}}<extra></extra>",
        "marker": {"cmax": float(max(w.max(), 1e-12)) if n else 1.0, "cmin": 0.0,
                   "color": arr(w[others]), "colorbar": {"title": {"text": weight_label}},
                   "colorscale": colorscale(SEQUENTIAL), "line": {"width": 0}, "showscale": True,
                   "size": arr(_scaled(w, MIN_MARKER, MAX_MARKER)[others])},
        "mode": "markers+text", "name": weight_label, "showlegend": False, "text": [labels[i] for i in others],
        "textposition": "top center", "x": arr(P[others, 0]), "y": arr(P[others, 1]),
        "z": arr(P[others, 2]), "type": "scatter3d",
    })
    data.append({
        "customdata": [float(w[q])],
        "hovertemplate": f"{query_label}: %{{text}} → %{{text}}<br>{weight_label} = %{{customdata:.4f}}<extra></extra>",
        "marker": {"color": ACCENT, "line": {"color": "black", "width": 2}, "size": MAX_MARKER * 0.7,
                   "symbol": "diamond"},
        "mode": "markers+text", "name": query_label, "showlegend": False, "text": [labels[q]],
        "textposition": "bottom center", "x": [float(P[q, 0])], "y": [float(P[q, 1])], "z": [float(P[q, 2])],
        "type": "scatter3d",
    })
    layout = {k: v for k, v in base_layout(title, height).items() if v is not None}
    layout["margin"] = dict(l=0, r=0, t=50 if title else 10, b=0)
    layout["scene"] = {"aspectmode": "cube", "xaxis": {"title": {"text": axis_labels[0]}},
                       "yaxis": {"title": {"text": axis_labels[1]}}, "zaxis": {"title": {"text": axis_labels[2]}}}
    return figure(data, layout)


_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def decade_label(power: int) -> str:
    """-2 -> "0.01", 0 -> "1", -5 -> "10⁻⁵": a log axis's label of 10**power."""
    return f"{10.0**power:g}" if -3 <= power <= 3 else "10" + str(power).translate(_SUPERSCRIPTS)


def loss_curve(losses, title: str | None = None, step_label: str = "step", loss_label: str = "loss",
               height: int = 340) -> dict:
    """losses: (steps + 1,) the loss before each step and at the end -> line chart, exact hover; a log y axis labelled
    at whole decades only (0.01, 0.1, 1, ...), spanning at least one decade so that two labels always show."""
    y = np.asarray(losses, dtype=np.float64)
    line = {"type": "scatter", "x": arr(np.arange(y.size), np.int32), "y": arr(y), "mode": "lines",
            "line": {"color": SECOND, "width": 3},
            "hovertemplate": f"{step_label} %{{x}}<br>{loss_label} = %{{y:.6f}}<extra></extra>"}
    positive = y.size and bool(np.all(y > 0))
    layout = {k: v for k, v in base_layout(title, height).items() if v is not None}
    yaxis = {"title": {"text": loss_label}, "type": "log" if positive else "linear"}
    if positive:
        low, high = int(np.floor(np.log10(y.min()))), int(np.ceil(np.log10(y.max())))
        high = max(high, low + 1)
        yaxis.update(range=[low, high], tickmode="array", tickvals=[10.0**k for k in range(low, high + 1)],
                     ticktext=[decade_label(k) for k in range(low, high + 1)], minor={"showgrid": False})
    layout.update(xaxis={"title": {"text": step_label}}, yaxis=yaxis, showlegend=False)
    return figure([line], layout)
