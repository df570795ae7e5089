"""Transformer page figures, built as plain figure dicts (no plotly.graph_objects validation: ~0.1 ms, not 5-35 ms).

``FigureDict`` is a dict with ``to_dict()``, so ui.figures.figure_spec caches it like a go.Figure and
ui.display.show_plotly sends it as it is.
"""

from __future__ import annotations

import numpy as np

from charts.style import ACCENT, DIVERGING, SECOND, base_layout


class FigureDict(dict):
    """A Plotly figure as a plain dict ({"data": [...], "layout": {...}}); to_dict() as on a go.Figure."""

    def to_dict(self) -> dict:
        return dict(self)


def feature_heatmap(values, row_labels, title: str | None = None, value_label: str = "value",
                    axis_titles: tuple[str, str] = ("dimension", "token")) -> FigureDict:
    """values: (n, d) -> heat map, rows = tokens (top to bottom), columns = feature dimensions 0..d-1, diverging
    colours centred on 0; hover shows the row, the dimension and the exact value."""
    Z = np.asarray(values, dtype=np.float64)
    n, d = Z.shape
    rows = [str(x) for x in row_labels]
    top = float(np.abs(Z).max()) if Z.size else 0.0
    top = top if top > 0 else 1.0
    data = [dict(
        type="heatmap", z=Z.tolist(), x=list(range(d)), y=rows, colorscale=DIVERGING, zmid=0.0,
        zmin=-top, zmax=top, colorbar=dict(title=dict(text=value_label)),
        hovertemplate=f"%{{y}}<br>{axis_titles[0]} %{{x}}<br>{value_label} = %{{z:.4f}}<extra></extra>",
    )]
    layout = dict(
        **base_layout(title, max(300, 90 + 22 * n)),
        xaxis=dict(title=dict(text=axis_titles[0]), showgrid=False, zeroline=False),
        yaxis=dict(title=dict(text=axis_titles[1]), type="category", autorange="reversed", showgrid=False,
                   zeroline=False),
    )
    return FigureDict(data=data, layout=layout)


def change_bars(labels, row_change: dict, names: dict, highlight: int | None = None, title: str | None = None,
                value_label: str = "max |Δ|", exact_zero: str = "0 exactly", height: int = 360) -> FigureDict:
    """labels (n), row_change {mode: (n,)} -> grouped bars, one series per key of ``names`` ({mode: legend name}).

    Bars that are exactly 0.0 carry the text "0", bars of float-rounding size (< 1e-9) their value; hover shows the exact value (to 3 significant digits, or that it
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
            text=["0" if z else (f"{v:.0e}" if v < 1e-9 else "") for z, v in zip(zero, values)],  # rounding-size bars
            textposition="outside", cliponaxis=False,
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
    return FigureDict(data=data, layout=layout)
