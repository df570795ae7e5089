"""Lesson "Watch a head form": curves over training steps (losses, heads' scores), with a reference level and the
step a head formed marked. No Streamlit here."""

from __future__ import annotations

import numpy as np

from charts.dicts import arr, figure, layout as figure_layout
from charts.style import LEGEND_BELOW, OKABE_ITO


def step_lines(steps, series: dict, *, title: str | None = None, step_label: str = "step", value_label: str = "",
               reference: float | None = None, reference_label: str = "", marker: int | None = None,
               marker_label: str = "", y_range=None, dashed=(), fmt: str = ".2f", height: int = 360) -> dict:
    """steps: (S,), series: {name: (S,) values} -> one line per series over the steps, in Okabe-Ito colours (a name
    in ``dashed`` drawn dashed); ``reference``: a dotted horizontal line, ``marker``: a vertical line at that step."""
    x = np.asarray(steps, dtype=np.int32)
    traces = []
    for i, (name, values) in enumerate(series.items()):
        traces.append({"type": "scatter", "mode": "lines", "name": name, "x": arr(x, np.int32),
                       "y": arr(np.asarray(values, dtype=np.float64)),
                       "line": {"color": OKABE_ITO[i % len(OKABE_ITO)], "width": 3,
                                "dash": "dash" if name in dashed else "solid"},
                       "hovertemplate": f"{name}<br>{step_label} %{{x}}: %{{y:{fmt}}}<extra></extra>"})
    shapes, notes = [], []
    if reference is not None:
        shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": reference, "y1": reference,
                       "line": {"color": "gray", "width": 2, "dash": "dot"}})
        notes.append({"xref": "paper", "x": 1, "y": reference, "text": reference_label, "showarrow": False,
                      "xanchor": "right", "yanchor": "bottom", "font": {"color": "gray"}})
    if marker is not None:
        shapes.append({"type": "line", "yref": "paper", "x0": marker, "x1": marker, "y0": 0, "y1": 1,
                       "line": {"color": "black", "width": 1, "dash": "dash"}})
        notes.append({"yref": "paper", "x": marker, "y": 1, "text": marker_label, "showarrow": False,
                      "xanchor": "left", "yanchor": "top"})
    yaxis = {"title": {"text": value_label}}
    if y_range is not None:
        yaxis["range"] = list(y_range)
    # the legend at the foot of the figure (container), not a fraction below the plot: with 8 series it wraps into
    # rows on a phone, Plotly shrinks the plot to make room, and "-0.3 of the plot" rose into the axis title
    legend = {**LEGEND_BELOW, "yref": "container", "y": 0, "yanchor": "bottom"}
    lay = figure_layout(title, height, legend=legend, shapes=shapes, annotations=notes,
                        xaxis={"title": {"text": step_label}}, yaxis=yaxis)
    return figure(traces, lay)
