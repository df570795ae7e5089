"""Charts of the causal-mask lesson: masked scores reading -inf and the generation animation, both on
charts.matrix.attention_heatmap (the leak test's bars are charts.bars.change_bars)."""

from __future__ import annotations

import numpy as np

from charts.dicts import arr
from charts.matrix import attention_heatmap
from charts.style import ACCENT

MINUS_INF = "−∞"


def weights_heatmap(weights, labels, title: str | None = None, hidden=None, value_label: str = "weight",
                    highlight_row: int | None = None, axis_titles: tuple[str, str] = ("key", "query")) -> dict:
    """weights: (n, n) -> charts.matrix.attention_heatmap's figure (``hidden`` cells grey)."""
    return attention_heatmap(weights, labels, title=title, hidden=hidden, value_label=value_label,
                             axis_titles=tuple(axis_titles), highlight_row=highlight_row)


def masked_scores_heatmap(scores, labels, title: str | None = None, value_label: str = "score",
                          masked_note: str = "masked", axis_titles: tuple[str, str] = ("key", "query")) -> dict:
    """scores: (n, n) with -inf where masked -> heat map; masked cells grey, reading "−∞" (text and hover)."""
    S = np.asarray(scores, dtype=np.float64)
    masked = np.isneginf(S)
    fig = attention_heatmap(S, labels, title=title, hidden=masked, zmax=None, value_label=value_label,
                            axis_titles=tuple(axis_titles))
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
                         axis_titles: tuple[str, str] = ("key", "query")) -> dict:
    """frames: (n, n, n) from generation_frames -> heat map at ``generated`` tokens, with Plotly frames 1..n and a play button.

    Cells that are NaN (masked or not yet generated) are grey; the newest row is outlined in the accent colour.
    Play always starts from the first token; the figure's own slider scrubs through the frames.
    """
    F = np.asarray(frames, dtype=np.float64)
    n = F.shape[0]
    k0 = min(max(int(generated), 1), n)
    fig = attention_heatmap(F[k0 - 1], labels, title=title, value_label=value_label, axis_titles=tuple(axis_titles))
    fig["data"][0]["z"] = arr(F[k0 - 1], np.float32)  # as the frames: scrubbing back to this frame changes no number
    fig["data"].append(_row_box(k0 - 1, n))
    names = [str(k) for k in range(1, n + 1)]
    # Frame k carries only the k rows generated so far (the rest is empty, i.e. grey, as NaN cells are), as float32:
    # a long sentence's n frames would otherwise be n full float64 matrices.
    fig["frames"] = [
        {"data": [{"y": list(range(k)), "z": arr(F[k - 1, :k], np.float32),
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

