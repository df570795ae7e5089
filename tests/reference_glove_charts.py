"""The graph_objects version of charts.glove.rank_histogram (before the plain dict): the reference for its JSON."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from charts.style import ACCENT, SECOND, THIRD, base_layout


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


