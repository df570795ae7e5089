"""Charts of lesson 2, the QKV library: keys as a heat map, values as colour swatches, the blend, the value plane.

Arrays in, Plotly figures out; every label comes from the caller (already translated). No Streamlit here.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from charts.matrix import attention_heatmap
from charts.style import ACCENT, DIVERGING, MASKED_GREY, SEQUENTIAL, base_layout


def _hex(rgb) -> str:
    """rgb: (3,) 0..255 -> "#rrggbb"."""
    r, g, b = np.clip(np.rint(np.asarray(rgb, dtype=np.float64)), 0, 255).astype(int)
    return f"#{r:02x}{g:02x}{b:02x}"


def _ink(rgb) -> str:
    """Black or white text, whichever reads better on the colour ``rgb`` (WCAG relative luminance)."""
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    linear = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    luminance = float(linear @ np.array([0.2126, 0.7152, 0.0722]))
    return "#000000" if luminance > 0.179 else "#ffffff"


def _rgb_text(rgb, places: int = 1) -> str:
    return "(" + ", ".join(f"{v:.{places}f}" for v in np.asarray(rgb, dtype=np.float64)) + ")"


def key_heatmap(matrix, row_labels, col_labels, x_title: str, y_title: str, value_label: str,
                title: str | None = None) -> go.Figure:
    """matrix: (rows, features) query and key vectors -> diverging heat map centred on 0, first row outlined."""
    M = np.asarray(matrix, dtype=np.float64)
    fig = attention_heatmap(
        M, list(row_labels), list(col_labels), title=title, highlight_row=0, zmax=None,
        colorscale=DIVERGING, value_label=value_label, show_values=True,
    )
    reach = max(float(np.abs(M).max()), 1.0)
    fig.update_traces(zmin=-reach, zmax=reach, zmid=0.0, texttemplate="%{z:.1f}")
    fig.update_layout(xaxis_title=x_title, yaxis_title=y_title, plot_bgcolor="rgba(0,0,0,0)")
    return fig


def value_swatches(labels, rgb, value_label: str, title: str | None = None) -> go.Figure:
    """labels: (n,), rgb: (n, 3) 0..255 -> one colour swatch per row, its RGB written on it and in the hover."""
    colours = np.asarray(rgb, dtype=np.float64)
    labels = [str(x) for x in labels]
    texts = [_rgb_text(c, 0) for c in colours]
    fig = go.Figure(
        go.Bar(
            x=[1.0] * len(labels), y=list(range(len(labels))), orientation="h",
            marker=dict(color=[_hex(c) for c in colours], line=dict(color="#000000", width=1)),
            text=[f"{value_label} = {s}" for s in texts], textposition="inside", insidetextanchor="middle",
            textfont=dict(color=[_ink(c) for c in colours]),
            customdata=np.array([labels, texts], dtype=object).T,
            hovertemplate=f"%{{customdata[0]}}<br>{value_label} (RGB) = %{{customdata[1]}}<extra></extra>",
        )
    )
    fig.update_layout(
        **base_layout(title, 60 + 56 * len(labels)), showlegend=False, bargap=0.15,
        xaxis=dict(visible=False, range=[0, 1]),
        yaxis=dict(tickvals=list(range(len(labels))), ticktext=labels, autorange="reversed", title=None),
    )
    return fig


def blend_bar(labels, rgb, weights, output_rgb, mix_label: str, output_label: str, share_label: str,
              title: str | None = None) -> go.Figure:
    """labels: (n,), rgb: (n, 3), weights: (n,) summing to 1, output_rgb: (3,) -> the shares as one stacked bar
    in the books' colours, and below it the output's mixed colour: the answer is a blend, not one book."""
    colours = np.asarray(rgb, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    fig = go.Figure()
    for label, colour, share in zip(labels, colours, w):
        fig.add_trace(go.Bar(
            x=[100.0 * share], y=[mix_label], orientation="h", name=str(label),
            marker=dict(color=_hex(colour), line=dict(color="#000000", width=1)),
            text=[f"{100 * share:.1f} %" if share >= 0.06 else ""], textposition="inside",
            insidetextanchor="middle", textfont=dict(color=_ink(colour)),
            customdata=[[str(label), _rgb_text(colour, 0)]],
            hovertemplate=f"%{{customdata[0]}}<br>{share_label} = %{{x:.2f}} %<br>RGB = %{{customdata[1]}}<extra></extra>",
        ))
    out = np.asarray(output_rgb, dtype=np.float64)
    fig.add_trace(go.Bar(
        x=[100.0], y=[output_label], orientation="h", name=output_label, showlegend=False,
        marker=dict(color=_hex(out), line=dict(color="#000000", width=1)),
        text=[f"RGB {_rgb_text(out)}"], textposition="inside", insidetextanchor="middle",
        textfont=dict(color=_ink(out)), customdata=[[_rgb_text(out)]],
        hovertemplate=f"{output_label}<br>RGB = %{{customdata[0]}}<extra></extra>",
    ))
    fig.update_layout(
        **base_layout(title, 280), barmode="stack", showlegend=True,
        legend=dict(orientation="h", yanchor="top", y=-0.4, x=0, traceorder="normal"),
        xaxis=dict(title=f"{share_label} (%)", range=[0, 100]),
        yaxis=dict(autorange="reversed", title=None),
    )
    return fig


def value_plane(points, rgb, labels, hull, path, path_rgb, path_temperatures, current, current_rgb,
                cold, hot, names: dict[str, str], title: str | None = None) -> go.Figure:
    """The values as points on a 2-D plane, their convex hull, and where the output goes as the temperature moves.

    points: (n, 2) and rgb: (n, 3) for the books; hull: (h,) corner indices; path: (t, 2) with path_rgb (t, 3)
    and path_temperatures (t,); current: (2,) with current_rgb (3,); cold / hot: (2,) the limits for
    temperature -> 0 (argmax) and -> infinity (centroid). ``names`` gives the labels: hull, path, current,
    cold, hot, temperature, x, y.
    """
    P = np.asarray(points, dtype=np.float64)
    colours = np.asarray(rgb, dtype=np.float64)
    path = np.asarray(path, dtype=np.float64)
    temps = np.asarray(path_temperatures, dtype=np.float64)
    corners = list(np.asarray(hull, dtype=int))
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=P[corners + corners[:1], 0], y=P[corners + corners[:1], 1], mode="lines", fill="toself",
        fillcolor=MASKED_GREY, line=dict(color="#808080", dash="dot"), name=names["hull"], hoverinfo="skip",
    ))
    path_text = [_rgb_text(c) for c in np.asarray(path_rgb, dtype=np.float64)]
    fig.add_trace(go.Scatter(
        x=path[:, 0], y=path[:, 1], mode="lines+markers", name=names["path"],
        line=dict(color="#808080", width=1),
        marker=dict(size=6, color=np.log10(temps), colorscale=SEQUENTIAL,
                    colorbar=dict(title=dict(text=names["temperature"]),
                                  tickvals=np.log10([0.05, 0.2, 1, 5, 20]).tolist(),
                                  ticktext=["0.05", "0.2", "1", "5", "20"])),
        customdata=np.array([temps, path_text], dtype=object).T,
        hovertemplate=f"{names['temperature']} = %{{customdata[0]:.3f}}<br>RGB = %{{customdata[1]}}<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=P[:, 0], y=P[:, 1], mode="markers+text", name="", showlegend=False,
        text=[str(x) for x in labels], textposition="top center",
        marker=dict(size=26, color=[_hex(c) for c in colours], line=dict(color="#000000", width=2)),
        customdata=np.array([[str(x) for x in labels], [_rgb_text(c, 0) for c in colours]], dtype=object).T,
        hovertemplate="%{customdata[0]}<br>RGB = %{customdata[1]}<extra></extra>",
    ))
    for key, point, symbol in (("cold", cold, "x"), ("hot", hot, "diamond-open")):
        point = np.asarray(point, dtype=np.float64)
        fig.add_trace(go.Scatter(
            x=[point[0]], y=[point[1]], mode="markers", name=names[key],
            marker=dict(size=14, symbol=symbol, color="#888888", line=dict(width=2)),  # mid grey: seen on light and dark
            hovertemplate=f"{names[key]}<extra></extra>",
        ))
    now = np.asarray(current, dtype=np.float64)
    fig.add_trace(go.Scatter(
        x=[now[0]], y=[now[1]], mode="markers", name=names["current"],
        marker=dict(size=24, symbol="star", color=_hex(current_rgb), line=dict(color=ACCENT, width=3)),
        hovertemplate=f"{names['current']}<br>RGB = {_rgb_text(current_rgb)}<extra></extra>",
    ))
    fig.update_layout(
        **base_layout(title, 520),
        xaxis=dict(title=names["x"], zeroline=True, showticklabels=False),
        yaxis=dict(title=names["y"], zeroline=True, showticklabels=False, scaleanchor="x", scaleratio=1),
        legend=dict(orientation="h", yanchor="top", y=-0.12, x=0),
    )
    return fig
