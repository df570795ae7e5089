"""Charts of the causal-mask lesson: masked scores reading -inf, the generation animation, the leak test's bars.

The builders return plain figure dicts (PlainFigure), written without plotly.graph_objects validation: a sentence
or seed nobody used before costs ~1 ms of figure building instead of ~20-80 ms. The heat map itself still comes
from charts.matrix.attention_heatmap, built once per layout (labels, titles) and filled with the new numbers;
tests/test_causal_charts.py checks the JSON equals the one the graph_objects version gives.
"""

from __future__ import annotations

import copy
import functools

import numpy as np
from _plotly_utils.utils import to_typed_array_spec

from charts.dicts import PlainFigure
from charts.matrix import attention_heatmap
from charts.style import ACCENT, SECOND, base_layout

MINUS_INF = "−∞"


@functools.lru_cache(maxsize=64)
def _heatmap_layout(labels: tuple, title, value_label: str, axis_titles: tuple, zmax, highlight_row=None) -> dict:
    """attention_heatmap's dict for these labels and titles, with all-zero weights (the numbers are filled in later)."""
    n = len(labels)
    return attention_heatmap(np.zeros((n, n)), list(labels), title=title, zmax=zmax, value_label=value_label,
                             axis_titles=tuple(axis_titles), highlight_row=highlight_row).to_dict()


def _heatmap(z, labels, title, value_label: str, axis_titles, zmax=1.0, highlight_row=None) -> PlainFigure:
    """z: (n, n) with NaN where hidden -> attention_heatmap(...)'s dict with these numbers, built without validation.

    The parts changed later (data, layout and its margin/axes) are copies; the rest (the template) is shared, read-only.
    """
    spec = _heatmap_layout(tuple(str(x) for x in labels), title, value_label, tuple(axis_titles), zmax, highlight_row)
    heat = {**spec["data"][0], "z": to_typed_array_spec(np.asarray(z))}  # base64, as fig.to_dict() writes arrays
    return PlainFigure({**spec, "data": [heat, *copy.deepcopy(spec["data"][1:])], "layout": {**spec["layout"]}})


def default_template() -> dict | None:
    """The layout template a new go.Figure gets (Streamlit's, once streamlit is imported), as a dict."""
    import plotly.io as pio

    return _template_named(pio.templates.default)


@functools.lru_cache(maxsize=4)
def _template_named(name) -> dict | None:
    import plotly.graph_objects as go

    return go.Figure().to_dict()["layout"].get("template")


def weights_heatmap(weights, labels, title: str | None = None, hidden=None, value_label: str = "weight",
                    highlight_row: int | None = None, axis_titles: tuple[str, str] = ("key", "query")) -> PlainFigure:
    """weights: (n, n) -> charts.matrix.attention_heatmap's figure as a plain dict (``hidden`` cells grey)."""
    W = np.asarray(weights, dtype=np.float64)
    z = W if hidden is None else np.where(np.asarray(hidden, dtype=bool), np.nan, W)
    return _heatmap(z, labels, title, value_label, axis_titles, highlight_row=highlight_row)


def masked_scores_heatmap(scores, labels, title: str | None = None, value_label: str = "score",
                          masked_note: str = "masked", axis_titles: tuple[str, str] = ("key", "query")) -> PlainFigure:
    """scores: (n, n) with -inf where masked -> heat map; masked cells grey, reading "−∞" (text and hover)."""
    S = np.asarray(scores, dtype=np.float64)
    masked = np.isneginf(S)
    fig = _heatmap(np.where(masked, np.nan, S), labels, title, value_label, axis_titles, zmax=None)
    rows, cols = np.nonzero(masked)
    labels = [str(x) for x in labels]
    show_text = S.size <= 144
    trace = {"customdata": [[labels[i], labels[j]] for i, j in zip(rows, cols)],
             "hovertemplate": f"%{{customdata[0]}} → %{{customdata[1]}}<br>{value_label} = {MINUS_INF} ({masked_note})"
                              "<extra></extra>",
             "mode": "text" if show_text else "markers", "showlegend": False, "textfont": {"size": 13},
             "x": cols.tolist(), "y": rows.tolist(), "type": "scatter"}
    if show_text:
        trace["text"] = [MINUS_INF] * len(rows)
    else:
        trace["marker"] = {"opacity": 0, "size": 10}
    fig["data"].append(trace)
    return fig


def _row_box(row: int, n: int) -> dict:
    """The outline of row ``row`` as a line trace (a trace, not a layout shape, so frames stay cheap to build)."""
    lo, hi = row - 0.5, row + 0.5
    return {"hoverinfo": "skip", "line": {"color": ACCENT, "width": 4}, "mode": "lines", "showlegend": False,
            "x": [-0.5, n - 0.5, n - 0.5, -0.5, -0.5], "y": [lo, lo, hi, hi, lo], "type": "scatter"}


def generation_animation(frames, labels, generated: int, title: str | None = None, play_label: str = "▶ Play",
                         pause_label: str = "❚❚ Pause", step_label: str = "tokens generated: ",
                         value_label: str = "weight", frame_ms: int = 700,
                         axis_titles: tuple[str, str] = ("key", "query")) -> PlainFigure:
    """frames: (n, n, n) from generation_frames -> heat map at ``generated`` tokens, with Plotly frames 1..n and a play button.

    Cells that are NaN (masked or not yet generated) are grey; the newest row is outlined in the accent colour.
    Play always starts from the first token; the figure's own slider scrubs through the frames.
    """
    F = np.asarray(frames, dtype=np.float64)
    n = F.shape[0]
    k0 = min(max(int(generated), 1), n)
    fig = _heatmap(F[k0 - 1].astype(np.float32), labels, title, value_label, axis_titles)  # float32 as the frames
    fig["data"].append(_row_box(k0 - 1, n))
    names = [str(k) for k in range(1, n + 1)]
    # Frame k carries only the k rows generated so far (the rest is empty, i.e. grey, as NaN cells are), as float32:
    # a quarter of the bytes of n full float64 matrices (a 38-token sentence: ~150 kB instead of ~600 kB).
    fig["frames"] = [
        {"data": [{"y": list(range(k)), "z": to_typed_array_spec(F[k - 1, :k].astype(np.float32)),
                  "type": "heatmap"}, _row_box(k - 1, n)],
         "name": names[k - 1], "traces": [0, 1]}
        for k in range(1, n + 1)
    ]
    play = dict(frame=dict(duration=frame_ms, redraw=True), transition=dict(duration=0), mode="immediate",
                fromcurrent=False)
    still = dict(frame=dict(duration=0, redraw=True), transition=dict(duration=0), mode="immediate")
    layout = fig["layout"]
    layout["height"] = layout["height"] + 90
    layout["margin"] = {**layout.get("margin", {}), "b": 150}
    layout["xaxis"] = {**layout.get("xaxis", {}), "range": [-0.5, n - 0.5]}
    layout["yaxis"] = {**layout.get("yaxis", {}), "range": [n - 0.5, -0.5]}
    layout["updatemenus"] = [dict(
        type="buttons", direction="left", x=0.0, y=0.0, xanchor="right", yanchor="top", pad=dict(t=95, r=10),
        showactive=False,
        buttons=[dict(label=play_label, method="animate", args=[names, play]),
                 dict(label=pause_label, method="animate", args=[[None], still])],
    )]
    layout["sliders"] = [dict(
        active=k0 - 1, x=0.0, len=1.0, y=0.0, yanchor="top", pad=dict(t=80),
        currentvalue=dict(prefix=step_label),
        steps=[dict(label=name, method="animate", args=[[name], still]) for name in names],
    )]
    return fig


def leak_bars(labels, row_change: dict, position: int, names: dict, title: str | None = None,
              value_label: str = "max |Δ output|", exact_zero: str = "0 exactly") -> PlainFigure:
    """labels (n), row_change {mode: (n,)} -> grouped bars of each output row's change, one group per row.

    One bar series per key of ``names`` ({mode: legend name}), in that order; the changed token's column is shaded.

    Bars that are exactly 0.0 carry the text "0"; hover shows the exact value (or that it is 0 exactly).
    """
    labels = [str(x) for x in labels]
    n = len(labels)
    x = list(range(n))
    data = []
    for mode, colour in zip(names, (ACCENT, SECOND)):
        values = np.asarray(row_change[mode], dtype=np.float64)
        zero = values == 0.0
        data.append({
            "cliponaxis": False,
            "customdata": [[labels[i], exact_zero if zero[i] else f"{values[i]:.6g}"] for i in range(n)],
            "hovertemplate": f"%{{customdata[0]}}<br>{names[mode]}: {value_label} = %{{customdata[1]}}<extra></extra>",
            "marker": {"color": colour}, "name": names[mode], "text": ["0" if z else "" for z in zero],
            "textposition": "outside", "x": x, "y": to_typed_array_spec(values), "type": "bar",
        })
    layout = {k: {} if v is None else v for k, v in base_layout(title, 380).items()}  # None: graph_objects writes {}
    layout.update(
        barmode="group",
        xaxis=dict(tickvals=x, ticktext=labels, title=None),
        yaxis=dict(title={"text": value_label}, rangemode="tozero"),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=1, xanchor="right"),
        shapes=[{"fillcolor": "rgba(128,128,128,0.2)", "line": {"width": 0}, "type": "rect",
                 "x0": position - 0.5, "x1": position + 0.5, "xref": "x", "y0": 0, "y1": 1, "yref": "y domain"}],
    )
    layout["xaxis"]["title"] = {}  # what graph_objects writes for title=None
    if default_template() is not None:
        layout["template"] = default_template()
    return PlainFigure({"data": data, "layout": layout})
