"""Heat maps of n x n (or n_q x n_k) attention matrices."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from charts.style import ACCENT, MASKED_GREY, SEQUENTIAL, base_layout


def attention_heatmap(
    weights,
    row_labels,
    col_labels=None,
    title: str | None = None,
    highlight_row: int | None = None,
    hidden=None,
    zmax: float | None = 1.0,
    colorscale: str = SEQUENTIAL,
    value_label: str = "weight",
    height: int | None = None,
    show_values: bool | None = None,
    axis_titles: tuple[str, str] = ("key", "query"),
) -> go.Figure:
    """weights: (n_q, n_k) -> heat map; ``hidden`` (n_q, n_k) bool cells are drawn grey (masked / not yet generated).

    Axes are positions (tokens may repeat) labelled with the tokens; rows are queries, top to bottom.
    """
    W = np.asarray(weights, dtype=np.float64)
    n_q, n_k = W.shape
    col_labels = list(row_labels) if col_labels is None else list(col_labels)
    row_labels = list(row_labels)
    z = W.copy()
    if hidden is not None:
        z = np.where(np.asarray(hidden, dtype=bool), np.nan, z)
    q_names = np.repeat(np.array(row_labels, dtype=object)[:, None], n_k, axis=1)
    k_names = np.repeat(np.array(col_labels, dtype=object)[None, :], n_q, axis=0)
    if show_values is None:
        show_values = n_q * n_k <= 144
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(range(n_k)),
            y=list(range(n_q)),
            customdata=np.dstack([q_names, k_names]),
            hovertemplate=f"%{{customdata[0]}} → %{{customdata[1]}}<br>{value_label} = %{{z:.4f}}<extra></extra>",
            colorscale=colorscale,
            zmin=0.0 if zmax is not None else None,
            zmax=zmax,
            hoverongaps=False,
            texttemplate="%{z:.2f}" if show_values else None,
            colorbar=dict(title=dict(text=value_label)),
        )
    )
    layout = base_layout(title, height or max(320, 60 + 34 * n_q))
    fig.update_layout(
        **layout,
        plot_bgcolor=MASKED_GREY,
        xaxis=dict(tickvals=list(range(n_k)), ticktext=col_labels, side="bottom", title=axis_titles[0],
                   showgrid=False, zeroline=False),
        yaxis=dict(tickvals=list(range(n_q)), ticktext=row_labels, autorange="reversed", title=axis_titles[1],
                   showgrid=False, zeroline=False),
    )
    if highlight_row is not None and 0 <= highlight_row < n_q:
        fig.add_shape(
            type="rect", x0=-0.5, x1=n_k - 0.5, y0=highlight_row - 0.5, y1=highlight_row + 0.5,
            line=dict(color=ACCENT, width=4), fillcolor="rgba(0,0,0,0)",
        )
    return fig
