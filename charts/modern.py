"""Lesson "Attention as it is built today": values over a distance in tokens (a score under two RoPE bases, a query's
weight on the keys behind it), one line per series, with an optional vertical line (the window's edge). No Streamlit."""

from __future__ import annotations

import numpy as np

from charts.dicts import arr, figure, layout as figure_layout
from charts.style import OKABE_ITO


def distance_lines(distances, series: dict, *, title: str | None = None, x_label: str = "distance",
                   y_label: str = "", log_x: bool = False, marker: float | None = None, marker_label: str = "",
                   fmt: str = ".3f", height: int = 360) -> dict:
    """distances: (m,) tokens, series: {name: (m,) values} -> one line per series (log x axis if log_x: distance 0 is
    drawn at 0.5), with a dashed vertical line at `marker`."""
    x = np.asarray(distances, dtype=np.float64)
    if log_x:
        x = np.where(x == 0, 0.5, x)
    traces = []
    for i, (name, values) in enumerate(series.items()):
        traces.append({"type": "scatter", "mode": "lines", "name": name, "x": arr(x),
                       "y": arr(np.asarray(values, dtype=np.float64)),
                       "line": {"color": OKABE_ITO[i % len(OKABE_ITO)], "width": 2},
                       "hovertemplate": f"{name}<br>{x_label} %{{x:,.0f}}: %{{y:{fmt}}}<extra></extra>"})
    shapes, notes = [], []
    if marker is not None:
        shapes.append({"type": "line", "yref": "paper", "x0": marker, "x1": marker, "y0": 0, "y1": 1,
                       "line": {"color": "black", "width": 1, "dash": "dash"}})
        notes.append({"yref": "paper", "x": float(np.log10(marker)) if log_x else marker, "y": 1, "text": marker_label,
                      "showarrow": False, "xanchor": "left", "yanchor": "top"})
    lay = figure_layout(title, height, legend={"orientation": "h", "y": -0.25}, shapes=shapes, annotations=notes,
                        xaxis={"title": {"text": x_label}, "type": "log" if log_x else "linear"},
                        yaxis={"title": {"text": y_label}})
    return figure(traces, lay)
