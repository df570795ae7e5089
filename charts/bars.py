"""Bar charts: one row of attention weights (or any labelled non-negative numbers), and how much each row changed."""

from __future__ import annotations

import numpy as np

from charts.dicts import arr, figure, layout as figure_layout
from charts.style import ACCENT, SECOND, UNIFORM_TEXT, base_layout


def weight_bars(
    labels,
    weights,
    title: str | None = None,
    highlight: int | None = None,
    value_label: str = "weight",
    as_percent: bool = False,
    sort: bool = False,
    height: int = 360,
    y_range: tuple[float, float] | None = None,
) -> dict:
    """labels: (n,), weights: (n,) -> bar chart; bar ``highlight`` in the accent colour; hover shows exact values;
    ``y_range`` fixes the axis (a flat row and a one-hot row then look different as controls move)."""
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
    yaxis = {"title": {"text": value_label + (" (%)" if as_percent else "")}, "rangemode": "tozero"}
    if y_range is not None:
        yaxis["range"] = list(y_range)
    # a value that would shrink below 10 px to fit (lesson 8's 12 heads on a phone: "30.4%" at 7 px) is left out
    layout = figure_layout(title, height, showlegend=False, yaxis=yaxis, uniformtext=UNIFORM_TEXT,
                           xaxis={"type": "category", "tickvals": positions, "ticktext": [labels[i] for i in order]})
    return figure([bars], layout)


def change_bars(labels, row_change: dict, names: dict, highlight: int | None = None, title: str | None = None,
                value_label: str = "max |Δ|", exact_zero: str = "0 exactly", height: int = 360,
                colours: tuple[str, str] = (SECOND, ACCENT), digits: int = 3) -> dict:
    """labels (n), row_change {mode: (n,)} -> grouped bars, one series per key of ``names`` ({mode: legend name}).

    Bars that are exactly 0.0 carry the text "0", bars of float-rounding size (< 1e-9) their value; hover shows the
    exact value (to ``digits`` significant digits, or that it is 0 exactly). ``highlight`` shades one column (the
    token that was changed).
    """
    labels = [str(x) for x in labels]
    n = len(labels)
    x = list(range(n))
    data = []
    for mode, colour in zip(names, colours):
        values = np.asarray(row_change[mode], dtype=np.float64)
        zero = values == 0.0
        data.append(dict(
            type="bar", x=x, y=arr(values), name=names[mode], marker=dict(color=colour),
            text=["0" if z else (f"{v:.0e}" if v < 1e-9 else "") for z, v in zip(zero, values)],
            textposition="outside", cliponaxis=False,
            customdata=[[labels[i], exact_zero if zero[i] else f"{values[i]:.{digits}g}"] for i in range(n)],
            hovertemplate=f"%{{customdata[0]}}<br>{names[mode]}: {value_label} = %{{customdata[1]}}<extra></extra>",
        ))
    layout = base_layout(title, height)
    if layout["title"] is None:
        del layout["title"]
    layout.update(
        barmode="group",
        xaxis=dict(tickvals=x, ticktext=labels),
        yaxis=dict(title=dict(text=value_label), rangemode="tozero"),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=1, xanchor="right"),
    )
    if highlight is not None and 0 <= highlight < n:
        layout["shapes"] = [dict(type="rect", xref="x", yref="paper", x0=highlight - 0.5, x1=highlight + 0.5, y0=0,
                                 y1=1, fillcolor="rgba(128,128,128,0.2)", line=dict(width=0), layer="below")]
    return figure(data, layout)
