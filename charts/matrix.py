"""Heat maps of n x n (or n_q x n_k) attention matrices."""

from __future__ import annotations

import numpy as np

import re

from charts.dicts import arr, colorscale as scale, figure
from charts.dicts import title as axis_title
from charts.style import ACCENT, MASKED_GREY, SEQUENTIAL, base_layout

# Legibility at 1280x720: a heat map usually stands in half of the page's content (two columns, sidebar
# open), where its plot area is about this wide once the row labels and the colour bar have their room. A page whose
# map is full width passes a larger ``plot_width``.
HALF_PAGE_PLOT_PX = 220
CELL_TEXT_MIN_PX = (34, 20)  # a cell needs this (width, height) for "0.25" at 13 px not to touch its neighbours
TICK_MIN_PX = 17  # a column label (12 px, turned upright when dense) needs this much width
ROW_PX = 34  # the height of one row: row labels and cell numbers stay readable up to 40 tokens


def cell_text_fits(n_q: int, n_k: int, height: int | None = None, plot_width: int = HALF_PAGE_PLOT_PX) -> bool:
    """(n_q, n_k) cells in a plot about ``plot_width`` px wide and ``height`` px tall: room to write a number in each?"""
    plot_height = (height or heatmap_height(n_q)) - 130  # title, column labels and axis title
    return plot_width / max(n_k, 1) >= CELL_TEXT_MIN_PX[0] and plot_height / max(n_q, 1) >= CELL_TEXT_MIN_PX[1]


def heatmap_height(n_q: int) -> int:
    """The figure height (px) of an n_q-row map: every row gets ROW_PX, with room for the title and column labels."""
    return max(340, 150 + ROW_PX * n_q)


def column_ticks(n_k: int, plot_width: int = HALF_PAGE_PLOT_PX) -> tuple[list[int], int, int]:
    """(the column positions that get a label, their font size, their angle) so that labels never overlap.

    Up to a cell of TICK_MIN_PX every column is labelled; denser maps label every 2nd/3rd... column (the hover names
    every cell). Dense labels stand upright (-90); wider ones take Plotly's automatic angle (flat, 30 or 90 degrees,
    the first with no overlap), given as None.
    """
    cell = plot_width / max(n_k, 1)
    step = max(1, int(np.ceil(TICK_MIN_PX / cell)))
    size = 14 if cell >= 24 else 12
    angle = None if cell >= 24 else -90
    return list(range(0, n_k, step)), size, angle


_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]+")  # Japanese words and punctuation (。)


def every_column_tick(labels, plot_width: int = HALF_PAGE_PLOT_PX) -> tuple[list[str], int, int | None]:
    """(the text of every column's label, its font size, its angle): all labels, none thinned. Japanese labels stand
    upright as Japanese is written vertically (one character under another, each upright, not turned on its side);
    other labels keep column_ticks' angle."""
    _, size, angle = column_ticks(len(labels), plot_width)
    labels = [str(label) for label in labels]
    if labels and all(_CJK.fullmatch(label) for label in labels):
        return ["<br>".join(label) for label in labels], size, 0
    return labels, size, angle


def attention_heatmap(
    weights,
    row_labels,
    col_labels=None,
    title: str | None = None,
    highlight_row: int | None = None,
    hidden=None,
    zmax: float | None = 1.0,
    colorscale: str = SEQUENTIAL,
    value_label: str = "weight",
    height: int | None = None,
    show_values: bool | None = None,
    axis_titles: tuple[str, str] = ("key", "query"),
    plot_width: int = HALF_PAGE_PLOT_PX,
    label_every_column: bool = False,
) -> dict:
    """weights: (n_q, n_k) -> heat map; ``hidden`` (n_q, n_k) bool cells are drawn grey (masked / not yet generated).

    Axes are positions (tokens may repeat) labelled with the tokens; rows are queries, top to bottom. Legible at
    1280x720 with up to 40 tokens: numbers are written in the cells only where they fit (``show_values=None``: decided
    from n and the expected ``plot_width``; the hover always gives them), dense column labels are thinned and stand
    upright, every row keeps its label, and the colour bar is thin. ``label_every_column``: no column label is
    thinned out, and Japanese labels are written vertically (every_column_tick).
    """
    W = np.asarray(weights, dtype=np.float64)
    n_q, n_k = W.shape
    col_labels = list(row_labels) if col_labels is None else list(col_labels)
    row_labels = list(row_labels)
    z = W.copy()
    if hidden is not None:
        z = np.where(np.asarray(hidden, dtype=bool), np.nan, z)
    height = height or heatmap_height(n_q)
    if show_values is None:
        show_values = cell_text_fits(n_q, n_k, height, plot_width)
    tick_at, tick_size, tick_angle = column_ticks(n_k, plot_width)
    tick_text = [col_labels[i] for i in tick_at]
    if label_every_column:
        tick_at = list(range(n_k))
        tick_text, tick_size, tick_angle = every_column_tick(col_labels, plot_width)
    trace = {
        "colorbar": {"thickness": 12, "title": {"side": "right", "text": value_label}, "xpad": 6},
        "colorscale": scale(colorscale),
        "customdata": [[[q, k] for k in col_labels] for q in row_labels],
        "hoverongaps": False,
        "hovertemplate": f"%{{customdata[0]}} → %{{customdata[1]}}<br>{value_label} = %{{z:.4f}}<extra></extra>",
        "x": list(range(n_k)),
        "y": list(range(n_q)),
        "z": arr(z),
        "type": "heatmap",
    }
    if show_values:
        trace.update(textfont={"size": 13}, texttemplate="%{z:.2f}")
    if zmax is not None:
        trace.update(zmax=zmax, zmin=0.0)
    layout = base_layout(title, height)
    if layout["title"] is None:
        del layout["title"]
    layout["margin"].update(l=10, r=10)  # automargin makes room for the labels themselves
    xaxis = {"tickfont": {"size": tick_size}, "tickvals": tick_at, "ticktext": tick_text,
             "side": "bottom", "title": axis_title(axis_titles[0]), "showgrid": False, "zeroline": False,
             "automargin": True}
    if tick_angle is not None:
        xaxis["tickangle"] = tick_angle
    layout.update(
        plot_bgcolor=MASKED_GREY, xaxis=xaxis,
        yaxis={"tickfont": {"size": 14 if n_q <= 30 else 13}, "tickvals": list(range(n_q)), "ticktext": row_labels,
               "autorange": "reversed", "title": axis_title(axis_titles[1]), "showgrid": False, "zeroline": False,
               "automargin": True},
    )
    if highlight_row is not None and 0 <= highlight_row < n_q:
        layout["shapes"] = [{"fillcolor": "rgba(0,0,0,0)", "line": {"color": ACCENT, "width": 4}, "type": "rect",
                             "x0": -0.5, "x1": n_k - 0.5, "y0": highlight_row - 0.5, "y1": highlight_row + 0.5}]
    return figure([trace], layout)
