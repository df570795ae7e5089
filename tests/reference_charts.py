"""The plotly.graph_objects versions of charts.matrix.attention_heatmap, charts.bars.weight_bars and
charts.tokens.token_lines, as they were before those builders wrote plain dicts: the reference for their JSON
(tests/test_plain_charts.py) and for the other reference charts built on them."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from charts.matrix import HALF_PAGE_PLOT_PX, cell_text_fits, column_ticks, heatmap_height
from charts.style import ACCENT, MASKED_GREY, SECOND, SEQUENTIAL, base_layout, text_width_px
from charts.tokens import LABEL_FONT_PX, LINE_TRACE_PREFIX, MARKER_ROOM_PX


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
    plot_width: int = HALF_PAGE_PLOT_PX,
) -> go.Figure:
    """weights: (n_q, n_k) -> heat map; ``hidden`` (n_q, n_k) bool cells are drawn grey (masked / not yet generated).

    Axes are positions (tokens may repeat) labelled with the tokens; rows are queries, top to bottom. Legible at
    1280x720 with up to 40 tokens: numbers are written in the cells only where they fit (``show_values=None``: decided
    from n and the expected ``plot_width``; the hover always gives them), dense column labels are thinned and stand
    upright, every row keeps its label, and the colour bar is thin.
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
    height = height or heatmap_height(n_q)
    if show_values is None:
        show_values = cell_text_fits(n_q, n_k, height, plot_width)
    tick_at, tick_size, tick_angle = column_ticks(n_k, plot_width)
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
            textfont=dict(size=13) if show_values else None,
            colorbar=dict(title=dict(text=value_label, side="right"), thickness=12, xpad=6),
        )
    )
    layout = base_layout(title, height)
    layout["margin"].update(l=10, r=10)  # automargin makes room for the labels themselves
    fig.update_layout(
        **layout,
        plot_bgcolor=MASKED_GREY,
        xaxis=dict(tickvals=tick_at, ticktext=[col_labels[i] for i in tick_at], side="bottom", title=axis_titles[0],
                   tickangle=tick_angle, tickfont=dict(size=tick_size), showgrid=False, zeroline=False, automargin=True),
        yaxis=dict(tickvals=list(range(n_q)), ticktext=row_labels, autorange="reversed", title=axis_titles[1],
                   tickfont=dict(size=14 if n_q <= 30 else 13), showgrid=False, zeroline=False, automargin=True),
    )
    if highlight_row is not None and 0 <= highlight_row < n_q:
        fig.add_shape(
            type="rect", x0=-0.5, x1=n_k - 0.5, y0=highlight_row - 0.5, y1=highlight_row + 0.5,
            line=dict(color=ACCENT, width=4), fillcolor="rgba(0,0,0,0)",
        )
    return fig


def weight_bars(
    labels,
    weights,
    title: str | None = None,
    highlight: int | None = None,
    value_label: str = "weight",
    as_percent: bool = False,
    sort: bool = False,
    height: int = 360,
) -> go.Figure:
    """labels: (n,), weights: (n,) -> bar chart; bar ``highlight`` in the accent colour; hover shows exact values."""
    w = np.asarray(weights, dtype=np.float64)
    labels = [str(x) for x in labels]
    order = np.argsort(-w, kind="stable") if sort else np.arange(len(w))
    positions = [f"{i}" for i in order]
    colours = [ACCENT if i == highlight else SECOND for i in order]
    shown = w[order] * (100.0 if as_percent else 1.0)
    fmt = "%{y:.2f} %" if as_percent else "%{y:.4f}"
    fig = go.Figure(
        go.Bar(
            x=positions,
            y=shown,
            marker_color=colours,
            customdata=[labels[i] for i in order],
            hovertemplate=f"%{{customdata}}<br>{value_label} = {fmt}<extra></extra>",
            text=[f"{v:.1f}%" if as_percent else f"{v:.3f}" for v in shown],
            textposition="outside",
            cliponaxis=False,
        )
    )
    fig.update_layout(
        **base_layout(title, height),
        xaxis=dict(type="category", tickvals=positions, ticktext=[labels[i] for i in order], title=None),
        yaxis=dict(title=value_label + (" (%)" if as_percent else ""), rangemode="tozero"),
        showlegend=False,
    )
    return fig


def token_lines(
    tokens,
    weights_row,
    selected: int,
    keep=None,
    title: str | None = None,
    value_label: str = "weight",
    query_label: str = "query",
    key_label: str = "key",
    max_width: float = 16.0,
    height: int | None = None,
) -> go.Figure:
    """tokens: (n,), weights_row: (n,) = the row of token ``selected``; keep: (n,) bool lines to draw (default all).

    Line i runs from the selected query to key i with width proportional to weights_row[i]. Trace order:
    the drawn lines (named "line <i>"), then the query markers, then the key markers.
    """
    labels = [str(tok) for tok in tokens]
    w = np.asarray(weights_row, dtype=np.float64)
    n = len(labels)
    keep = np.ones(n, dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    ys = list(range(n))
    fig = go.Figure()
    for i in np.flatnonzero(keep):
        fig.add_trace(
            go.Scatter(
                x=[0.0, 1.0], y=[selected, i], mode="lines", name=f"{LINE_TRACE_PREFIX} {i}",
                line=dict(color=SECOND, width=max(0.75, max_width * float(w[i]))), opacity=0.75,
                hoverinfo="skip", showlegend=False,
            )
        )
    query_colours = [ACCENT if i == selected else SECOND for i in ys]
    fig.add_trace(
        go.Scatter(
            x=[0.0] * n, y=ys, mode="markers+text", name=query_label, text=labels, textposition="middle left",
            customdata=ys, marker=dict(size=[18 if i == selected else 12 for i in ys], color=query_colours,
                                       line=dict(color="white", width=1)), cliponaxis=False,
            hovertemplate=f"{query_label}: %{{text}}<extra></extra>",
            unselected=dict(marker=dict(opacity=1.0)), showlegend=False,
        )
    )
    percent = [f"{labels[i]}  {100 * w[i]:.1f}%" for i in ys]
    source = labels[selected] if 0 <= selected < n else ""
    fig.add_trace(
        go.Scatter(
            x=[1.0] * n, y=ys, mode="markers+text", name=key_label, text=percent, textposition="middle right",
            customdata=np.column_stack([ys, w]) if n else None,
            marker=dict(size=[8 + 22 * float(v) for v in w], color=[SECOND if k else "rgba(128,128,128,0.6)" for k in keep],
                        line=dict(color="white", width=1)),
            hovertemplate=f"{source} → %{{text}}<br>{value_label} = %{{customdata[1]:.4f}}<extra></extra>",
            unselected=dict(marker=dict(opacity=1.0)), showlegend=False, cliponaxis=False,
        )
    )
    # The labels stand in the margins (cliponaxis=False), which are sized from the longest label: "because 11.9%"
    # is never cut at the right edge, however narrow the column (issue 13).
    layout = base_layout(title, height or max(320, 70 + 30 * n))
    layout["margin"].update(
        l=int(MARKER_ROOM_PX + max([text_width_px(s, LABEL_FONT_PX) for s in labels] + [text_width_px(query_label, 13)])),
        r=int(MARKER_ROOM_PX + max([text_width_px(s, LABEL_FONT_PX) for s in percent] + [text_width_px(key_label, 13)])),
    )
    fig.update_layout(
        **layout,
        xaxis=dict(range=[-0.04, 1.04], visible=False, fixedrange=True),
        yaxis=dict(range=[n - 0.5, -0.5], visible=False, fixedrange=True),
        dragmode=False, hovermode="closest", clickmode="event+select",
    )
    fig.add_annotation(x=0.0, y=-0.5, text=query_label, showarrow=False, yshift=18, font=dict(size=13))
    fig.add_annotation(x=1.0, y=-0.5, text=key_label, showarrow=False, yshift=18, font=dict(size=13))
    return fig
