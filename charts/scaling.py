"""Charts of the scaling lesson: the score histogram with its normal curve, the sweep over d, the d animation,
and the sampling temperature of a language model.

Each builder returns a plain figure dict (charts.dicts). No Streamlit here.
"""

from __future__ import annotations

import numpy as np

from charts.bars import weight_bars
from charts.dicts import arr as _arr, figure as _figure, layout as _layout
from charts.style import ACCENT, SECOND, THIRD

UNSCALED_COLOUR = ACCENT  # Okabe-Ito orange: q . k as it is
SCALED_COLOUR = SECOND  # Okabe-Ito blue: q . k / sqrt(d)
PANEL_TITLE_FONT = 16
SAMPLES_PER_LINE = 6
BUTTON_LIFT_PX = 34  # the play/pause buttons stand this far above the upper panel, clear of its title


def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def score_histogram(edges, density, counts, curve_x, curve_y, x_title: str, y_title: str,
                    bars_name: str, curve_name: str, title: str | None = None, height: int = 380) -> dict:
    """edges: (b+1,), density/counts: (b,), curve_x/curve_y: (m,) -> density bars with a curve over them."""
    edges = _f64(edges)
    bars = dict(
        type="bar", x=_arr((edges[:-1] + edges[1:]) / 2), y=_arr(density), width=_arr(np.diff(edges)), name=bars_name,
        marker=dict(color=SECOND), opacity=0.75,
        customdata=_arr(np.column_stack([edges[:-1], edges[1:], np.asarray(counts)])),
        hovertemplate="%{customdata[0]:.4g} … %{customdata[1]:.4g}<br>n = %{customdata[2]:d}"
                      f"<br>{y_title} = %{{y:.4g}}<extra></extra>",
    )
    curve = dict(type="scatter", x=_arr(curve_x), y=_arr(curve_y), mode="lines", name=curve_name,
                 line=dict(color=ACCENT, width=3), hovertemplate=f"z = %{{x:.4g}}<br>{y_title} = %{{y:.4g}}<extra></extra>")
    return _figure([bars, curve], _layout(
        title, height, bargap=0, xaxis=dict(title=dict(text=x_title), tickformat="~g"),
        yaxis=dict(title=dict(text=y_title), tickformat="~g"),
        legend=dict(x=0.99, xanchor="right", y=0.98, yanchor="top", bgcolor="rgba(0,0,0,0)")))


def weights_on_unit_axis(labels, weights, title: str, value_label: str, height: int = 360) -> dict:
    """labels: (n,), weights: (n,) -> charts.bars.weight_bars with the largest in the accent colour, y on [0, 1.1]."""
    return weight_bars(labels, weights, title=title, highlight=int(np.argmax(weights)), value_label=value_label,
                       height=height, y_range=(0, 1.1))


def _stacked_panels(titles, height: int, gap: float, top: int, bottom: int) -> dict:
    """Axes for len(titles) panels stacked in one column, each titled at its top left (no overlap at any width)."""
    n = len(titles)
    plot_px = height - top - bottom
    gap_frac = gap / plot_px if plot_px > 0 else 0.1
    span = (1.0 - gap_frac * (n - 1)) / n
    layout, notes = {}, []
    for i, text in enumerate(titles):
        lo = 1.0 - (i + 1) * span - i * gap_frac
        hi = lo + span
        suffix = "" if i == 0 else str(i + 1)
        layout[f"xaxis{suffix}"] = dict(anchor=f"y{suffix}", domain=[0.0, 1.0])
        layout[f"yaxis{suffix}"] = dict(anchor=f"x{suffix}", domain=[max(lo, 0.0), min(hi, 1.0)])
        notes.append(dict(text=text, x=0.0, xanchor="left", xref="paper", y=min(hi, 1.0), yanchor="bottom",
                          yref="paper", showarrow=False, font=dict(size=PANEL_TITLE_FONT)))
    layout["annotations"] = notes
    return layout


def sweep_figure(table: dict, labels: dict[str, str], n_keys: int, height: int = 1040) -> dict:
    """sweep_table columns -> 4 panels stacked against d (log axis): variance, largest weight, entropy, ||J||_F.

    ``labels`` keys: var, max, entropy, jacobian (panel titles), unscaled, scaled, line_d, line_1, uniform, d;
    ``n_keys`` places the "all keys equal" references (1 / n and ln n). One column: the titles never overlap.
    """
    d = _f64(table["d"])
    layout = _layout(None, height, margin=dict(l=60, r=20, t=40, b=150),
                     legend=dict(orientation="h", yanchor="bottom", y=0, x=0, yref="container"))
    layout |= _stacked_panels([labels[k] for k in ("var", "max", "entropy", "jacobian")], height, 90, 40, 150)
    data = []

    def axes(panel):
        return {} if panel == 1 else dict(xaxis=f"x{panel}", yaxis=f"y{panel}")

    def series(name, y, se, colour, panel, show=False):
        data.append(dict(type="scatter", x=_arr(d), y=_arr(y), mode="lines+markers", name=name, legendgroup=name,
                         showlegend=show, line=dict(color=colour), marker=dict(size=8), customdata=_arr(se),
                         hovertemplate=f"{name}<br>d = %{{x}}<br>%{{y:.4f}} ± %{{customdata:.4f}} (SE)<extra></extra>",
                         **axes(panel)))

    def reference(name, y, panel, dash, show):
        data.append(dict(type="scatter", x=_arr(d), y=_arr(y), mode="lines", name=name, legendgroup=name, showlegend=show,
                         line=dict(color=THIRD, dash=dash), hovertemplate=f"{name}: %{{y:.4g}}<extra></extra>",
                         **axes(panel)))

    reference(labels["line_d"], d, 1, "dot", True)
    reference(labels["line_1"], np.ones_like(d), 1, "dash", True)
    series(labels["unscaled"], table["var_qk"], table["var_qk_se"], UNSCALED_COLOUR, 1, show=True)
    series(labels["scaled"], table["var_ratio"], table["var_ratio_se"], SCALED_COLOUR, 1, show=True)
    reference(labels["uniform"], np.full_like(d, 1.0 / n_keys), 2, "dashdot", True)
    reference(labels["uniform"], np.full_like(d, np.log(n_keys)), 3, "dashdot", False)
    for panel, name in ((2, "max"), (3, "entropy"), (4, "jacobian")):
        series(labels["unscaled"], table[f"{name}_unscaled"], table[f"{name}_unscaled_se"], UNSCALED_COLOUR, panel)
        series(labels["scaled"], table[f"{name}_scaled"], table[f"{name}_scaled_se"], SCALED_COLOUR, panel)
    for panel in range(1, 5):
        suffix = "" if panel == 1 else str(panel)
        layout[f"xaxis{suffix}"] |= dict(type="log", tickvals=list(d), ticktext=[str(int(x)) for x in d],
                                         **(dict(title=dict(text=labels["d"])) if panel == 4 else {}))
    layout["yaxis"] |= dict(type="log")
    layout["yaxis2"] |= dict(range=[0, 1.05])
    layout["yaxis3"] |= dict(rangemode="tozero")
    layout["yaxis4"] |= dict(rangemode="tozero")
    return _figure(data, layout)


def weights_animation(dims, unscaled, scaled, key_labels, titles: tuple[str, str], y_title: str,
                      play: str, pause: str, frame_label: str = "d = ", height: int = 560) -> dict:
    """dims: (m,), unscaled/scaled: (m, n) weights per d -> two stacked bar panels, one Plotly frame per d.

    The play button animates through the frames; the slider under the figure shows (and picks) the current d.
    The panels are stacked, each titled at its top left, so no title overlaps or is cut on a phone or a projector;
    the play/pause buttons sit at the top left, above the upper panel's title, and the slider (its current d at the
    left) under the lower panel.
    """
    unscaled, scaled = _f64(unscaled), _f64(scaled)
    x = list(range(unscaled.shape[1]))
    names = [f"{frame_label}{int(d)}" for d in dims]
    hover = f"%{{customdata}}<br>{y_title} = %{{y:.4f}}<extra></extra>"

    def bars(w_u, w_s):
        return [dict(type="bar", x=x, y=_arr(w), marker=dict(color=colour), customdata=list(key_labels),
                     hovertemplate=hover, text=[f"{v:.2f}" for v in w], textposition="outside", cliponaxis=False,
                     xaxis=axis_x, yaxis=axis_y)
                for w, colour, axis_x, axis_y in ((w_u, UNSCALED_COLOUR, "x", "y"), (w_s, SCALED_COLOUR, "x2", "y2"))]

    step_args = dict(mode="immediate", frame=dict(duration=700, redraw=True), transition=dict(duration=300))
    top, bottom = 100, 110
    plot_px = height - top - bottom
    layout = _layout(None, height, showlegend=False, margin=dict(l=60, r=30, t=top, b=bottom))
    layout |= _stacked_panels(list(titles), height, 60, top, bottom)
    layout |= dict(
        updatemenus=[dict(
            type="buttons", direction="left", x=0, y=1 + BUTTON_LIFT_PX / plot_px, xanchor="left", yanchor="bottom",
            showactive=False, pad=dict(t=0, r=0, b=0, l=0), buttons=[
                dict(label=play, method="animate", args=[None, dict(fromcurrent=True, **step_args)]),
                dict(label=pause, method="animate", args=[[None], dict(mode="immediate", frame=dict(duration=0))]),
            ],
        )],
        sliders=[dict(
            active=0, x=0, len=1.0, y=-0.08, yanchor="top", pad=dict(t=0, b=0),
            currentvalue=dict(prefix="", visible=True, xanchor="left", font=dict(size=16)),
            steps=[dict(label=name, method="animate", args=[[name], step_args]) for name in names],
        )],
    )
    for axis in ("xaxis", "xaxis2"):
        layout[axis] |= dict(tickvals=x, ticktext=list(key_labels))
    layout["yaxis"] |= dict(range=[0, 1.15], title=dict(text=y_title))
    layout["yaxis2"] |= dict(range=[0, 1.15], title=dict(text=y_title))
    frames = [dict(data=bars(u, s), traces=[0, 1], name=name) for u, s, name in zip(unscaled, scaled, names)]
    return _figure(bars(unscaled[0], scaled[0]), layout, frames)


def temperature_sampling(words, probs, temperatures, samples, entropies, start: int, titles: dict[str, str],
                         height: int = 520) -> dict:
    """words: (n,), probs: (t, n), temperatures: (t,), samples: (t, m) word indices, entropies: (t,) -> bars of
    the next-word probabilities with a slider over tau (answered in the browser: one Plotly frame per tau).

    ``titles`` keys: title (with {tau}, {h}, {m} and {samples} placeholders), y, slider; ``start`` is the first frame.
    The drawn words go into the title, SAMPLES_PER_LINE to a line, so a phone shows them all.
    """
    probs = _f64(probs)
    words = [str(w) for w in words]

    def frame_title(i):
        drawn = "<br>".join(" ".join(words[j] for j in samples[i][k:k + SAMPLES_PER_LINE])
                            for k in range(0, len(samples[i]), SAMPLES_PER_LINE))
        return titles["title"].format(tau=f"{temperatures[i]:g}", h=f"{entropies[i]:.2f}", samples=drawn, m=len(samples[i]))

    def bar(i):
        p = probs[i]
        top = int(np.argmax(p))
        return dict(type="bar", x=words, y=_arr(p), marker=dict(color=[ACCENT if j == top else SECOND for j in range(p.size)]),
                    text=[f"{100 * v:.1f}%" for v in p], textposition="outside", cliponaxis=False,
                    hovertemplate=f"%{{x}}<br>{titles['y']} = %{{y:.4f}}<extra></extra>")

    names = [f"{t:g}" for t in temperatures]
    step_args = dict(mode="immediate", frame=dict(duration=0, redraw=True), transition=dict(duration=0))
    layout = _layout(None, height, showlegend=False, margin=dict(l=60, r=30, t=130, b=110),
                     title=dict(text=frame_title(start), x=0, xanchor="left", xref="paper", font=dict(size=15)),
                     xaxis=dict(type="category"),
                     yaxis=dict(title=dict(text=titles["y"]), range=[0, 1.12], tickformat=".0%"),
                     sliders=[dict(active=int(start), x=0, len=1.0, y=-0.12, yanchor="top", pad=dict(t=0, b=0),
                                   currentvalue=dict(prefix=titles["slider"], visible=True, xanchor="left",
                                                     font=dict(size=16)),
                                   steps=[dict(label=name, method="animate", args=[[name], step_args])
                                          for name in names])])
    frames = [dict(data=[bar(i)], traces=[0], name=name, layout=dict(title=dict(text=frame_title(i))))
              for i, name in enumerate(names)]
    return _figure([bar(start)], layout, frames)
