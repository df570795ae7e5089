"""Charts of the RNN bottleneck lesson: influence per position (log axis) and the first-word memory probe.

Both are plain Plotly figure dicts (charts.dicts explains why).
"""

from __future__ import annotations

import numpy as np

from charts.dicts import figure, layout as _layout
from charts.matrix import column_ticks
from charts.style import ACCENT, OKABE_ITO, SECOND

# The influence chart stands at full width: its plot area at 1280x720 with the sidebar open is about this wide.
FULL_PAGE_PLOT_PX = 700

PROBE_COLOURS = [OKABE_ITO[0], OKABE_ITO[2], OKABE_ITO[3], OKABE_ITO[5], OKABE_ITO[4]]  # no orange: that is attention


def _floats(values) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=np.float64).ravel()]


def influence_chart(
    tokens,
    rnn_norm,
    attention_norm,
    rnn_steps,
    attention_steps,
    names: dict[str, str],
    title: str | None = None,
    height: int = 440,
    value_text=None,
) -> dict:
    """tokens: (n,), *_norm: (n,) positive, *_steps: (n,) ints -> figure dict: two lines over the positions, log y axis.

    ``names`` holds the localised texts: "rnn", "attention" (trace names), "x", "y" (axis titles),
    "steps" (hover label for the path length). ``value_text`` writes a norm for the hover (the page's own way,
    1.7 × 10⁻⁷; Plotly's formats only know 1.7e-7); default: 4 significant digits.
    """
    value_text = value_text or "{:.4g}".format
    labels = [str(w) for w in tokens]
    positions = list(range(1, len(labels) + 1))
    data = []
    for key, values, steps, colour, dash, symbol in (
        ("rnn", rnn_norm, rnn_steps, SECOND, "solid", "circle"),
        ("attention", attention_norm, attention_steps, ACCENT, "dash", "diamond"),
    ):
        data.append({
            "type": "scatter", "x": positions, "y": _floats(values), "mode": "lines+markers", "name": names[key],
            "line": {"color": colour, "dash": dash, "width": 2.5},
            "marker": {"color": colour, "symbol": symbol, "size": 8},
            "customdata": [[w, int(s), value_text(v)]
                           for w, s, v in zip(labels, np.asarray(steps, dtype=int), _floats(values))],
            "hovertemplate": (
                f"%{{x}}: %{{customdata[0]}}<br>{names[key]} = %{{customdata[2]}}"
                f"<br>{names['steps']} = %{{customdata[1]}}<extra></extra>"
            ),
        })
    # Dense words stand upright, every k-th one when even that is too tight (the hover names every word).
    tick_at, tick_size, tick_angle = column_ticks(len(labels), FULL_PAGE_PLOT_PX)
    layout = _layout(title, height) | {
        "xaxis": {
            "title": {"text": names["x"]}, "tickvals": [positions[i] for i in tick_at],
            "ticktext": [labels[i] for i in tick_at], **({} if tick_angle is None else {"tickangle": tick_angle}),
            "tickfont": {"size": tick_size}, "range": [0.5, len(labels) + 0.5], "automargin": True,
        },
        "yaxis": {"title": {"text": names["y"]}, "type": "log", "exponentformat": "power"},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        "hovermode": "closest",
    }
    if "title" in layout:  # the legend's row above the plot covered the title: the title goes above it, at the top
        layout["margin"] = {**layout["margin"], "t": layout["margin"]["t"] + 40}
        layout["title"] = {**layout["title"], "yref": "container", "yanchor": "top", "y": 1 - 10 / height}
    return figure(data, layout)


def memory_probe_chart(
    lengths,
    rnn_r2,
    hidden_sizes,
    attention_r2,
    best_r2,
    names: dict[str, str],
    title: str | None = None,
    height: int = 500,
) -> dict:
    """lengths: (L,), rnn_r2: (k, L), hidden_sizes: (k,), attention_r2: (L,), best_r2: (k, L) -> figure dict, R^2 against length.

    Solid lines: the random tanh RNNs (measured); dotted, same colour: the best case of the same size (a
    norm-preserving linear RNN, exact); dashed orange: attention. ``names``: "rnn" and "best" (format strings with
    {hidden}), "attention", "x", "y".
    """
    x = [int(v) for v in np.asarray(lengths, dtype=int)]
    rnn_r2 = np.asarray(rnn_r2, dtype=np.float64)
    best_r2 = np.asarray(best_r2, dtype=np.float64)
    data = []
    for i, hidden in enumerate(hidden_sizes):
        colour = PROBE_COLOURS[i % len(PROBE_COLOURS)]
        for key, row, dash, width, symbol in (("rnn", rnn_r2[i], "solid", 2.5, "circle"),
                                              ("best", best_r2[i], "dot", 2, "square-open")):
            name = names[key].format(hidden=int(hidden))
            data.append({
                "type": "scatter", "x": x, "y": _floats(row), "mode": "lines+markers", "name": name,
                "legendgroup": key, "line": {"color": colour, "width": width, "dash": dash},
                "marker": {"color": colour, "size": 6, "symbol": symbol},
                "hovertemplate": f"{names['x']} = %{{x}}<br>{name}<br>R² = %{{y:.4f}}<extra></extra>",
            })
    data.append({
        "type": "scatter", "x": x, "y": _floats(attention_r2), "mode": "lines+markers", "name": names["attention"],
        "legendgroup": "attention", "line": {"color": ACCENT, "dash": "dash", "width": 3},
        "marker": {"color": ACCENT, "symbol": "diamond", "size": 7},
        "hovertemplate": f"{names['x']} = %{{x}}<br>{names['attention']}<br>R² = %{{y:.6f}}<extra></extra>",
    })
    low = min(-0.1, float(np.min(rnn_r2)) - 0.05)
    layout = _layout(title, height)
    layout["margin"] = dict(layout["margin"], b=150)  # the legend sits under the axis, clear of the mode bar
    layout |= {
        "xaxis": {"title": {"text": names["x"]}, "range": [0, max(x) + 1]},
        "yaxis": {"title": {"text": names["y"]}, "range": [low, 1.08], "zeroline": True},
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0},
    }
    return figure(data, layout)
