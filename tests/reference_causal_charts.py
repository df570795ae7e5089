"""The graph_objects versions of charts.causal (as they were before the plain dicts): the reference for their JSON."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from tests.reference_charts import attention_heatmap
from charts.style import ACCENT, SECOND, base_layout

MINUS_INF = "−∞"


def masked_scores_heatmap(scores, labels, title: str | None = None, value_label: str = "score",
                          masked_note: str = "masked", axis_titles: tuple[str, str] = ("key", "query")) -> go.Figure:
    """scores: (n, n) with -inf where masked -> heat map; masked cells grey, reading "−∞" (text and hover)."""
    S = np.asarray(scores, dtype=np.float64)
    masked = np.isneginf(S)
    finite = np.where(masked, 0.0, S)
    fig = attention_heatmap(finite, labels, title=title, hidden=masked, zmax=None, value_label=value_label,
                            axis_titles=axis_titles)
    fig.data[0].update(zmin=None)
    rows, cols = np.nonzero(masked)
    labels = [str(x) for x in labels]
    show_text = S.size <= 144
    fig.add_trace(go.Scatter(
        x=cols.tolist(), y=rows.tolist(),
        mode="text" if show_text else "markers",
        text=[MINUS_INF] * len(rows) if show_text else None,
        textfont=dict(size=13),
        marker=dict(size=10, opacity=0) if not show_text else None,
        customdata=[[labels[i], labels[j]] for i, j in zip(rows, cols)],
        hovertemplate=f"%{{customdata[0]}} → %{{customdata[1]}}<br>{value_label} = {MINUS_INF} ({masked_note})<extra></extra>",
        showlegend=False,
    ))
    return fig


def _row_box(row: int, n: int) -> go.Scatter:
    """The outline of row ``row`` as a line trace (a trace, not a layout shape, so frames stay cheap to build)."""
    lo, hi = row - 0.5, row + 0.5
    return go.Scatter(x=[-0.5, n - 0.5, n - 0.5, -0.5, -0.5], y=[lo, lo, hi, hi, lo], mode="lines",
                      line=dict(color=ACCENT, width=4), hoverinfo="skip", showlegend=False)


def generation_animation(frames, labels, generated: int, title: str | None = None, play_label: str = "▶ Play",
                         pause_label: str = "❚❚ Pause", step_label: str = "tokens generated: ",
                         value_label: str = "weight", frame_ms: int = 700,
                         axis_titles: tuple[str, str] = ("key", "query")) -> go.Figure:
    """frames: (n, n, n) from generation_frames -> heat map at ``generated`` tokens, with Plotly frames 1..n and a play button.

    Cells that are NaN (masked or not yet generated) are grey; the newest row is outlined in the accent colour.
    Play always starts from the first token; the figure's own slider scrubs through the frames.
    """
    F = np.asarray(frames, dtype=np.float64)
    n = F.shape[0]
    k0 = min(max(int(generated), 1), n)
    fig = attention_heatmap(np.nan_to_num(F[k0 - 1]), [str(x) for x in labels], title=title,
                            hidden=np.isnan(F[k0 - 1]), value_label=value_label, axis_titles=axis_titles)
    fig.data[0].z = np.asarray(fig.data[0].z, dtype=np.float32)  # as the frames below: the same numbers when played
    fig.add_trace(_row_box(k0 - 1, n))
    names = [str(k) for k in range(1, n + 1)]
    # Frame k carries only the k rows generated so far (the rest is empty, i.e. grey, as NaN cells are), as float32:
    # a quarter of the bytes of n full float64 matrices (a 38-token sentence: ~150 kB instead of ~600 kB).
    fig.frames = [
        go.Frame(name=names[k - 1], data=[go.Heatmap(z=F[k - 1, :k].astype(np.float32), y=list(range(k))),
                                          _row_box(k - 1, n)], traces=[0, 1])
        for k in range(1, n + 1)
    ]
    play = dict(frame=dict(duration=frame_ms, redraw=True), transition=dict(duration=0), mode="immediate",
                fromcurrent=False)
    still = dict(frame=dict(duration=0, redraw=True), transition=dict(duration=0), mode="immediate")
    fig.update_layout(
        height=fig.layout.height + 90,
        margin=dict(b=150),
        xaxis_range=[-0.5, n - 0.5],
        yaxis_range=[n - 0.5, -0.5],
        updatemenus=[dict(
            type="buttons", direction="left", x=0.0, y=0.0, xanchor="right", yanchor="top", pad=dict(t=95, r=10),
            showactive=False,
            buttons=[dict(label=play_label, method="animate", args=[names, play]),
                     dict(label=pause_label, method="animate", args=[[None], still])],
        )],
        sliders=[dict(
            active=k0 - 1, x=0.0, len=1.0, y=0.0, yanchor="top", pad=dict(t=80),
            currentvalue=dict(prefix=step_label),
            steps=[dict(label=name, method="animate", args=[[name], still]) for name in names],
        )],
    )
    return fig


def leak_bars(labels, row_change: dict, position: int, names: dict, title: str | None = None,
              value_label: str = "max |Δ output|", exact_zero: str = "0 exactly") -> go.Figure:
    """labels (n), row_change {mode: (n,)} -> grouped bars of each output row's change, one group per row.

    One bar series per key of ``names`` ({mode: legend name}), in that order; the changed token's column is shaded.

    Bars that are exactly 0.0 carry the text "0"; hover shows the exact value (or that it is 0 exactly).
    """
    labels = [str(x) for x in labels]
    n = len(labels)
    x = list(range(n))
    fig = go.Figure()
    for mode, colour in zip(names, (ACCENT, SECOND)):
        values = np.asarray(row_change[mode], dtype=np.float64)
        zero = values == 0.0
        fig.add_trace(go.Bar(
            x=x, y=values, name=names[mode], marker_color=colour,
            text=["0" if z else "" for z in zero], textposition="outside", cliponaxis=False,
            customdata=[[labels[i], exact_zero if zero[i] else f"{values[i]:.6g}"] for i in range(n)],
            hovertemplate=f"%{{customdata[0]}}<br>{names[mode]}: {value_label} = %{{customdata[1]}}<extra></extra>",
        ))
    fig.add_vrect(x0=position - 0.5, x1=position + 0.5, fillcolor="rgba(128,128,128,0.2)", line_width=0)
    fig.update_layout(
        **base_layout(title, 380),
        barmode="group",
        xaxis=dict(tickvals=x, ticktext=labels, title=None),
        yaxis=dict(title=value_label, rangemode="tozero"),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=1, xanchor="right"),
    )
    return fig
