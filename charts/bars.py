"""Bar charts of one row of attention weights (or any labelled non-negative numbers)."""

from __future__ import annotations

import numpy as np

from charts.dicts import PlainFigure, arr, figure
from charts.style import ACCENT, SECOND, base_layout


def weight_bars(
    labels,
    weights,
    title: str | None = None,
    highlight: int | None = None,
    value_label: str = "weight",
    as_percent: bool = False,
    sort: bool = False,
    height: int = 360,
) -> PlainFigure:
    """labels: (n,), weights: (n,) -> bar chart; bar ``highlight`` in the accent colour; hover shows exact values.

    Written as the plain dict go.Figure(...).to_dict() gives (tests/test_plain_charts.py compares the JSON).
    """
    w = np.asarray(weights, dtype=np.float64)
    labels = [str(x) for x in labels]
    order = np.argsort(-w, kind="stable") if sort else np.arange(len(w))
    positions = [f"{i}" for i in order]
    shown = w[order] * (100.0 if as_percent else 1.0)
    fmt = "%{y:.2f} %" if as_percent else "%{y:.4f}"
    bars = {
        "cliponaxis": False,
        "customdata": [labels[i] for i in order],
        "hovertemplate": f"%{{customdata}}<br>{value_label} = {fmt}<extra></extra>",
        "marker": {"color": [ACCENT if i == highlight else SECOND for i in order]},
        "text": [f"{v:.1f}%" if as_percent else f"{v:.3f}" for v in shown],
        "textposition": "outside",
        "x": positions,
        "y": arr(shown),
        "type": "bar",
    }
    layout = base_layout(title, height)
    if layout["title"] is None:
        layout["title"] = {}  # what update_layout(title=None) leaves
    layout.update(
        xaxis={"type": "category", "tickvals": positions, "ticktext": [labels[i] for i in order], "title": {}},
        yaxis={"title": {"text": value_label + (" (%)" if as_percent else "")}, "rangemode": "tozero"},
        showlegend=False,
    )
    return figure([bars], layout)
