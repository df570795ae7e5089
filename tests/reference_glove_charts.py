"""The graph_objects versions of charts.glove.rank_histogram and attention_cloud_3d (before the plain dicts): the
reference for their JSON."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from charts.glove import MAX_LINE, MAX_MARKER, MIN_LINE, MIN_MARKER, _scaled
from charts.style import ACCENT, SECOND, SEQUENTIAL, THIRD, base_layout


def rank_histogram(
    counts,
    highlight_rank: int | None = None,
    title: str | None = None,
    rank_label: str = "rank",
    share_label: str = "share of seeds",
    observed_label: str = "observed",
    uniform_label: str = "uniform (1/n)",
    height: int = 380,
) -> go.Figure:
    """counts: (n,) how often each rank 1..n occurred -> bars of the share (%) with the uniform 1/n line.

    Bar ``highlight_rank`` (1-based, e.g. this seed's rank) is drawn in the accent colour.
    """
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.size
    total = max(counts.sum(), 1.0)
    ranks = np.arange(1, n + 1)
    shares = 100.0 * counts / total
    colours = [ACCENT if r == highlight_rank else SECOND for r in ranks]
    fig = go.Figure()
    fig.add_trace(go.Bar(
        x=ranks, y=shares, name=observed_label, marker_color=colours, customdata=counts.astype(int),
        hovertemplate=f"{rank_label} %{{x}}<br>{share_label} = %{{y:.2f}} % (%{{customdata}})<extra></extra>",
    ))
    uniform = np.full(n, 100.0 / n) if n else np.zeros(0)
    fig.add_trace(go.Scatter(
        x=ranks, y=uniform, name=uniform_label, mode="lines+markers", line=dict(color=THIRD, dash="dash", width=3),
        marker=dict(symbol="line-ew", size=10), hovertemplate=f"{uniform_label} = %{{y:.2f}} %<extra></extra>",
    ))
    fig.update_layout(
        **base_layout(title, height),
        xaxis=dict(title=rank_label, tickmode="array", tickvals=ranks.tolist()),
        yaxis=dict(title=share_label + " (%)", rangemode="tozero"),
        legend=dict(orientation="h", yanchor="top", y=0.98, xanchor="center", x=0.5),
        bargap=0.15,
    )
    return fig


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
) -> go.Figure:
    """coords: (n, 3), labels: (n,), weights: (n,) the query's attention row -> rotatable Scatter3d.

    The query is a diamond in the accent colour; every other word's weight sets its marker size and colour
    (Viridis) and the width of its line from the query. Hover shows the word and its exact weight.
    """
    P = np.asarray(coords, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    labels = [str(x) for x in labels]
    n = len(labels)
    others = [i for i in range(n) if i != query_index]
    widths = _scaled(w, MIN_LINE, MAX_LINE)
    fig = go.Figure()
    for i in others:  # one trace per line: Scatter3d has one width per trace
        fig.add_trace(go.Scatter3d(
            x=[P[query_index, 0], P[i, 0]], y=[P[query_index, 1], P[i, 1]], z=[P[query_index, 2], P[i, 2]],
            mode="lines", line=dict(color=ACCENT, width=float(widths[i])), opacity=0.55,
            hoverinfo="skip", showlegend=False,
        ))
    fig.add_trace(go.Scatter3d(
        x=P[others, 0], y=P[others, 1], z=P[others, 2], mode="markers+text",
        text=[labels[i] for i in others], textposition="top center", customdata=w[others], name=weight_label,
        marker=dict(size=_scaled(w, MIN_MARKER, MAX_MARKER)[others], color=w[others], colorscale=SEQUENTIAL,
                    cmin=0.0, cmax=float(max(w.max(), 1e-12)) if n else 1.0, showscale=True,
                    colorbar=dict(title=dict(text=weight_label)), line=dict(width=0)),
        hovertemplate=f"%{{text}}<br>{weight_label} = %{{customdata:.4f}}<extra></extra>", showlegend=False,
    ))
    fig.add_trace(go.Scatter3d(
        x=[P[query_index, 0]], y=[P[query_index, 1]], z=[P[query_index, 2]], mode="markers+text",
        text=[labels[query_index]], textposition="bottom center", customdata=[w[query_index]], name=query_label,
        marker=dict(size=MAX_MARKER * 0.7, color=ACCENT, symbol="diamond", line=dict(color="black", width=2)),
        hovertemplate=f"{query_label}: %{{text}} → %{{text}}<br>{weight_label} = %{{customdata:.4f}}<extra></extra>",
        showlegend=False,
    ))
    layout = base_layout(title, height)
    layout["margin"] = dict(l=0, r=0, t=50 if title else 10, b=0)
    fig.update_layout(**layout, scene=dict(
        xaxis=dict(title=axis_labels[0]), yaxis=dict(title=axis_labels[1]), zaxis=dict(title=axis_labels[2]),
        aspectmode="cube",
    ))
    return fig
