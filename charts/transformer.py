"""Bars of how much each output row changed (Transformer page), built as a plain figure dict (no validation cost)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from charts.style import ACCENT, SECOND, base_layout


def change_bars(labels, row_change: dict, names: dict, highlight: int | None = None, title: str | None = None,
                value_label: str = "max |Δ|", exact_zero: str = "0 exactly", height: int = 360) -> go.Figure:
    """labels (n), row_change {mode: (n,)} -> grouped bars, one series per key of ``names`` ({mode: legend name}).

    Bars that are exactly 0.0 carry the text "0"; hover shows the exact value (to 3 significant digits, or that it
    is 0 exactly). ``highlight`` shades one column (the token that was changed).
    """
    labels = [str(x) for x in labels]
    n = len(labels)
    x = list(range(n))
    data = []
    for mode, colour in zip(names, (SECOND, ACCENT)):
        values = np.asarray(row_change[mode], dtype=np.float64)
        zero = values == 0.0
        data.append(dict(
            type="bar", x=x, y=values.tolist(), name=names[mode], marker=dict(color=colour),
            text=["0" if z else "" for z in zero], textposition="outside", cliponaxis=False,
            customdata=[[labels[i], exact_zero if zero[i] else f"{values[i]:.3g}"] for i in range(n)],
            hovertemplate=f"%{{customdata[0]}}<br>{names[mode]}: {value_label} = %{{customdata[1]}}<extra></extra>",
        ))
    layout = dict(
        **base_layout(title, height),
        barmode="group",
        xaxis=dict(tickvals=x, ticktext=labels, title=dict(text=None)),
        yaxis=dict(title=dict(text=value_label), rangemode="tozero"),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=1, xanchor="right"),
    )
    if highlight is not None and 0 <= highlight < n:
        layout["shapes"] = [dict(type="rect", xref="x", yref="paper", x0=highlight - 0.5, x1=highlight + 0.5, y0=0,
                                 y1=1, fillcolor="rgba(128,128,128,0.2)", line=dict(width=0), layer="below")]
    return go.Figure(dict(data=data, layout=layout), skip_invalid=False, _validate=False)
