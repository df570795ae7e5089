"""Transformer page figures: the feature heat map (the change bars are charts.bars.change_bars)."""

from __future__ import annotations

import numpy as np

from charts.dicts import figure, layout as figure_layout
from charts.style import DIVERGING

def feature_heatmap(values, row_labels, title: str | None = None, value_label: str = "value",
                    axis_titles: tuple[str, str] = ("dimension", "token")) -> dict:
    """values: (n, d) -> heat map, rows = tokens (top to bottom), columns = feature dimensions 0..d-1, diverging
    colours centred on 0; hover shows the row, the dimension and the exact value."""
    Z = np.asarray(values, dtype=np.float64)
    n, d = Z.shape
    rows = [str(x) for x in row_labels]
    top = float(np.abs(Z).max()) if Z.size else 0.0
    top = top if top > 0 else 1.0
    data = [dict(
        # By name, so plotly.js draws its own "RdBu" (blue to red through grey), as this chart always has; the list
        # charts.dicts.colorscale gives is Plotly's Python "RdBu" (red to blue through white).
        type="heatmap", z=Z.tolist(), x=list(range(d)), y=rows, colorscale=DIVERGING, zmid=0.0,
        zmin=-top, zmax=top, colorbar=dict(title=dict(text=value_label)),
        hovertemplate=f"%{{y}}<br>{axis_titles[0]} %{{x}}<br>{value_label} = %{{z:.4f}}<extra></extra>",
    )]
    layout = figure_layout(
        title, max(300, 90 + 22 * n),
        xaxis=dict(title=dict(text=axis_titles[0]), showgrid=False, zeroline=False),
        yaxis=dict(title=dict(text=axis_titles[1]), type="category", autorange="reversed", showgrid=False,
                   zeroline=False),
    )
    return figure(data, layout)

