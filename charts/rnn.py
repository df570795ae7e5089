"""Charts of the RNN bottleneck lesson: influence per position (log axis) and the first-word memory probe."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from charts.style import ACCENT, OKABE_ITO, SECOND, base_layout

PROBE_COLOURS = [OKABE_ITO[0], OKABE_ITO[2], OKABE_ITO[3], OKABE_ITO[5], OKABE_ITO[4]]  # no orange: that is attention


def influence_chart(
    tokens,
    rnn_norm,
    attention_norm,
    rnn_steps,
    attention_steps,
    names: dict[str, str],
    title: str | None = None,
    height: int = 440,
) -> go.Figure:
    """tokens: (n,), *_norm: (n,) positive, *_steps: (n,) ints -> two lines over the positions, log y axis.

    ``names`` holds the localised texts: "rnn", "attention" (trace names), "x", "y" (axis titles),
    "steps" (hover label for the path length).
    """
    labels = [str(w) for w in tokens]
    positions = list(range(1, len(labels) + 1))
    fig = go.Figure()
    for key, values, steps, colour, dash, symbol in (
        ("rnn", rnn_norm, rnn_steps, SECOND, "solid", "circle"),
        ("attention", attention_norm, attention_steps, ACCENT, "dash", "diamond"),
    ):
        fig.add_trace(
            go.Scatter(
                x=positions,
                y=np.asarray(values, dtype=np.float64),
                mode="lines+markers",
                name=names[key],
                line=dict(color=colour, dash=dash, width=2.5),
                marker=dict(color=colour, symbol=symbol, size=8),
                customdata=np.column_stack([labels, np.asarray(steps, dtype=int)]).tolist(),
                hovertemplate=(
                    f"%{{x}}: %{{customdata[0]}}<br>{names[key]} = %{{y:.4e}}"
                    f"<br>{names['steps']} = %{{customdata[1]}}<extra></extra>"
                ),
            )
        )
    fig.update_layout(
        **base_layout(title, height),
        xaxis=dict(
            title=names["x"], tickvals=positions, ticktext=labels, tickangle=-60 if len(labels) > 12 else 0,
            range=[0.5, len(labels) + 0.5],
        ),
        yaxis=dict(title=names["y"], type="log", exponentformat="power"),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0),
        hovermode="closest",
    )
    return fig


def memory_probe_chart(
    lengths,
    rnn_r2,
    hidden_sizes,
    attention_r2,
    names: dict[str, str],
    title: str | None = None,
    height: int = 460,
) -> go.Figure:
    """lengths: (L,), rnn_r2: (k, L), hidden_sizes: (k,), attention_r2: (L,) -> R^2 against sentence length.

    ``names``: "rnn" (a format string with {hidden}), "attention", "x", "y".
    """
    lengths = np.asarray(lengths, dtype=int)
    rnn_r2 = np.asarray(rnn_r2, dtype=np.float64)
    fig = go.Figure()
    for i, hidden in enumerate(hidden_sizes):
        name = names["rnn"].format(hidden=int(hidden))
        colour = PROBE_COLOURS[i % len(PROBE_COLOURS)]
        fig.add_trace(
            go.Scatter(
                x=lengths, y=rnn_r2[i], mode="lines+markers", name=name,
                line=dict(color=colour, width=2.5), marker=dict(color=colour, size=6),
                hovertemplate=f"{names['x']} = %{{x}}<br>{name}<br>R² = %{{y:.4f}}<extra></extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            x=lengths, y=np.asarray(attention_r2, dtype=np.float64), mode="lines+markers", name=names["attention"],
            line=dict(color=ACCENT, dash="dash", width=3), marker=dict(color=ACCENT, symbol="diamond", size=7),
            hovertemplate=f"{names['x']} = %{{x}}<br>{names['attention']}<br>R² = %{{y:.6f}}<extra></extra>",
        )
    )
    low = min(-0.1, float(np.min(rnn_r2)) - 0.05)
    layout = base_layout(title, height)
    layout["margin"] = dict(layout["margin"], b=120)  # the legend sits under the axis, clear of the mode bar
    fig.update_layout(
        **layout,
        xaxis=dict(title=names["x"], range=[0, int(lengths.max()) + 1]),
        yaxis=dict(title=names["y"], range=[low, 1.08], zeroline=True),
        legend=dict(orientation="h", yanchor="top", y=-0.22, x=0),
    )
    return fig
