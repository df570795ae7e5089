"""Charts of the scaling lesson: the score histogram with its normal curve, the sweep over d, the d animation."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from charts.bars import weight_bars
from charts.style import ACCENT, SECOND, THIRD, base_layout

UNSCALED_COLOUR = ACCENT  # Okabe-Ito orange: q . k as it is
SCALED_COLOUR = SECOND  # Okabe-Ito blue: q . k / sqrt(d)


def score_histogram(edges, density, counts, curve_x, curve_y, x_title: str, y_title: str,
                    bars_name: str, curve_name: str, title: str | None = None, height: int = 380) -> go.Figure:
    """edges: (b+1,), density/counts: (b,), curve_x/curve_y: (m,) -> density bars with a curve over them."""
    edges = np.asarray(edges, dtype=np.float64)
    centres = (edges[:-1] + edges[1:]) / 2
    fig = go.Figure()
    fig.add_bar(
        x=centres, y=np.asarray(density, dtype=np.float64), width=np.diff(edges), name=bars_name,
        marker_color=SECOND, opacity=0.75,
        customdata=np.column_stack([edges[:-1], edges[1:], np.asarray(counts)]),
        hovertemplate="%{customdata[0]:.4g} … %{customdata[1]:.4g}<br>n = %{customdata[2]:d}"
                      f"<br>{y_title} = %{{y:.4g}}<extra></extra>",
    )
    fig.add_scatter(
        x=np.asarray(curve_x, dtype=np.float64), y=np.asarray(curve_y, dtype=np.float64), mode="lines",
        name=curve_name, line=dict(color=ACCENT, width=3),
        hovertemplate=f"z = %{{x:.4g}}<br>{y_title} = %{{y:.4g}}<extra></extra>",
    )
    fig.update_layout(**base_layout(title, height), bargap=0, xaxis=dict(title=x_title, tickformat="~g"),
                      yaxis=dict(title=y_title, tickformat="~g"),
                      legend=dict(x=0.99, xanchor="right", y=0.98, yanchor="top", bgcolor="rgba(0,0,0,0)"))
    return fig


def weights_on_unit_axis(labels, weights, title: str, value_label: str) -> go.Figure:
    """labels: (n,), weights: (n,) -> charts.bars.weight_bars with the largest bar highlighted and y fixed to [0, 1].

    A fixed axis keeps a flat row and a one-hot row visibly different as the controls move.
    """
    w = np.asarray(weights, dtype=np.float64)
    fig = weight_bars(labels, w, title=title, highlight=int(np.argmax(w)), value_label=value_label)
    fig.update_yaxes(range=[0, 1.1])
    return fig


def sweep_figure(table: dict, labels: dict[str, str], n_keys: int, height: int = 640) -> go.Figure:
    """sweep_table columns -> 2 x 2 panels against d (log axis): variance, largest weight, entropy, ||J||_F.

    ``labels`` keys: var, max, entropy, jacobian (panel titles), unscaled, scaled, line_d, line_1, uniform, d;
    ``n_keys`` places the "all keys equal" references (1 / n and ln n).
    """
    d = np.asarray(table["d"], dtype=np.float64)
    fig = make_subplots(rows=2, cols=2, subplot_titles=[labels[k] for k in ("var", "max", "entropy", "jacobian")],
                        horizontal_spacing=0.1, vertical_spacing=0.16)

    def series(name, y, se, colour, row, col, show=False):
        fig.add_scatter(
            x=d, y=np.asarray(y, dtype=np.float64), mode="lines+markers", name=name, legendgroup=name,
            showlegend=show, line=dict(color=colour), marker=dict(size=8),
            customdata=np.asarray(se, dtype=np.float64),
            hovertemplate=f"{name}<br>d = %{{x}}<br>%{{y:.4f}} ± %{{customdata:.4f}} (SE)<extra></extra>",
            row=row, col=col,
        )

    def reference(name, y, row, col, dash, show):
        fig.add_scatter(x=d, y=np.asarray(y, dtype=np.float64), mode="lines", name=name, legendgroup=name,
                        showlegend=show, line=dict(color=THIRD, dash=dash),
                        hovertemplate=f"{name}: %{{y:.4g}}<extra></extra>", row=row, col=col)

    reference(labels["line_d"], d, 1, 1, "dot", True)
    reference(labels["line_1"], np.ones_like(d), 1, 1, "dash", True)
    series(labels["unscaled"], table["var_qk"], table["var_qk_se"], UNSCALED_COLOUR, 1, 1, show=True)
    series(labels["scaled"], table["var_ratio"], table["var_ratio_se"], SCALED_COLOUR, 1, 1, show=True)
    reference(labels["uniform"], np.full_like(d, 1.0 / n_keys), 1, 2, "dashdot", True)
    reference(labels["uniform"], np.full_like(d, np.log(n_keys)), 2, 1, "dashdot", False)
    for (row, col), name in (((1, 2), "max"), ((2, 1), "entropy"), ((2, 2), "jacobian")):
        series(labels["unscaled"], table[f"{name}_unscaled"], table[f"{name}_unscaled_se"], UNSCALED_COLOUR, row, col)
        series(labels["scaled"], table[f"{name}_scaled"], table[f"{name}_scaled_se"], SCALED_COLOUR, row, col)
    ticks = dict(type="log", tickvals=list(d), ticktext=[str(int(x)) for x in d], title_text=labels["d"])
    for row in (1, 2):
        for col in (1, 2):
            fig.update_xaxes(**ticks, row=row, col=col)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(range=[0, 1.05], row=1, col=2)
    fig.update_yaxes(rangemode="tozero", row=2, col=1)
    fig.update_yaxes(rangemode="tozero", row=2, col=2)
    fig.update_layout(**base_layout(None, height), legend=dict(orientation="h", yanchor="bottom", y=1.06, x=0))
    return fig


def weights_animation(dims, unscaled, scaled, key_labels, titles: tuple[str, str], y_title: str,
                      play: str, pause: str, frame_label: str = "d = ", height: int = 420) -> go.Figure:
    """dims: (m,), unscaled/scaled: (m, n) weights per d -> side-by-side bars with one Plotly frame per d.

    The play button animates through the frames; the slider under the figure shows (and picks) the current d.
    """
    unscaled = np.asarray(unscaled, dtype=np.float64)
    scaled = np.asarray(scaled, dtype=np.float64)
    x = list(range(unscaled.shape[1]))
    names = [f"{frame_label}{int(d)}" for d in dims]
    hover = f"%{{customdata}}<br>{y_title} = %{{y:.4f}}<extra></extra>"

    def bars(w_u, w_s):  # plain dicts: Plotly validates each bar once, in the figure (go.Bar here would be twice)
        return [dict(type="bar", x=x, y=w_u, marker_color=UNSCALED_COLOUR, customdata=list(key_labels),
                     hovertemplate=hover, text=[f"{v:.2f}" for v in w_u], textposition="outside", cliponaxis=False),
                dict(type="bar", x=x, y=w_s, marker_color=SCALED_COLOUR, customdata=list(key_labels),
                     hovertemplate=hover, text=[f"{v:.2f}" for v in w_s], textposition="outside", cliponaxis=False,
                     xaxis="x2", yaxis="y2")]

    fig = make_subplots(rows=1, cols=2, subplot_titles=list(titles), horizontal_spacing=0.08)
    first = bars(unscaled[0], scaled[0])
    fig.add_trace(first[0], row=1, col=1)
    fig.add_trace(first[1], row=1, col=2)
    fig.frames = [go.Frame(data=bars(u, s), traces=[0, 1], name=name)
                  for u, s, name in zip(unscaled, scaled, names)]
    step_args = dict(mode="immediate", frame=dict(duration=700, redraw=True), transition=dict(duration=300))
    fig.update_layout(
        **base_layout(None, height),
        showlegend=False,
        updatemenus=[dict(
            type="buttons", direction="left", x=0, y=-0.16, xanchor="left", yanchor="top", showactive=False,
            pad=dict(t=0, r=10), buttons=[
                dict(label=play, method="animate", args=[None, dict(fromcurrent=True, **step_args)]),
                dict(label=pause, method="animate", args=[[None], dict(mode="immediate", frame=dict(duration=0))]),
            ],
        )],
        sliders=[dict(
            active=0, x=0.22, len=0.78, y=-0.1, yanchor="top", pad=dict(t=0),
            currentvalue=dict(prefix="", visible=True, xanchor="right", font=dict(size=16)),
            steps=[dict(label=name, method="animate", args=[[name], step_args]) for name in names],
        )],
    )
    for col in (1, 2):
        fig.update_xaxes(tickvals=x, ticktext=list(key_labels), row=1, col=col)
        fig.update_yaxes(range=[0, 1.12], title_text=y_title if col == 1 else None, row=1, col=col)
    fig.update_layout(margin=dict(b=130))
    return fig
