"""Token lines: one token's attention over a sentence, as lines whose width follows the weight.

Queries stand in a column on the left, keys in a column on the right (the same tokens, top to bottom, in the
order of the heat map's rows). Every token is a marker carrying its position in ``customdata``, so a page can
make the markers clickable (st.plotly_chart(on_select=..., selection_mode="points")) and read back which
token was clicked. Lines are not clickable and carry no hover; the key markers hover with the exact weight.
"""

from __future__ import annotations

import numpy as np

from charts.dicts import arr, figure
from charts.style import ACCENT, SECOND, base_layout, text_width_px

LINE_TRACE_PREFIX = "line"
LABEL_FONT_PX = 16  # the labels' margins are sized for presenter mode's font (16 px), so they fit at 14 px too
MARKER_ROOM_PX = 24  # half the largest key marker plus the gap between a marker and its label


def token_lines(
    tokens,
    weights_row,
    selected: int,
    keep=None,
    title: str | None = None,
    value_label: str = "weight",
    query_label: str = "query",
    key_label: str = "key",
    max_width: float = 16.0,
    height: int | None = None,
) -> dict:
    """tokens: (n,), weights_row: (n,) = the row of token ``selected``; keep: (n,) bool lines to draw (default all).

    Line i runs from the selected query to key i with width proportional to weights_row[i]. Trace order:
    the drawn lines (named "line <i>"), then the query markers, then the key markers.
    """
    labels = [str(tok) for tok in tokens]
    w = np.asarray(weights_row, dtype=np.float64)
    n = len(labels)
    keep = np.ones(n, dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    ys = list(range(n))
    data = [{"hoverinfo": "skip", "line": {"color": SECOND, "width": max(0.75, max_width * float(w[i]))},
             "mode": "lines", "name": f"{LINE_TRACE_PREFIX} {i}", "opacity": 0.75, "showlegend": False,
             "x": [0.0, 1.0], "y": [selected, int(i)], "type": "scatter"} for i in np.flatnonzero(keep)]
    data.append({
        "cliponaxis": False, "customdata": ys, "hovertemplate": f"{query_label}: %{{text}}<extra></extra>",
        "marker": {"color": [ACCENT if i == selected else SECOND for i in ys], "line": {"color": "white", "width": 1},
                   "size": [18 if i == selected else 12 for i in ys]},
        "mode": "markers+text", "name": query_label, "showlegend": False, "text": labels,
        "textposition": "middle left", "unselected": {"marker": {"opacity": 1.0}}, "x": [0.0] * n, "y": ys,
        "type": "scatter",
    })
    percent = [f"{labels[i]}  {100 * w[i]:.1f}%" for i in ys]
    source = labels[selected] if 0 <= selected < n else ""
    keys = {
        "cliponaxis": False,
        "hovertemplate": f"{source} → %{{text}}<br>{value_label} = %{{customdata[1]:.4f}}<extra></extra>",
        "marker": {"color": [SECOND if k else "rgba(128,128,128,0.6)" for k in keep],
                   "line": {"color": "white", "width": 1}, "size": [8 + 22 * float(v) for v in w]},
        "mode": "markers+text", "name": key_label, "showlegend": False, "text": percent, "textposition": "middle right",
        "unselected": {"marker": {"opacity": 1.0}}, "x": [1.0] * n, "y": ys, "type": "scatter",
    }
    if n:
        keys["customdata"] = arr(np.column_stack([ys, w]))
    data.append(keys)
    # The labels stand in the margins (cliponaxis=False), which are sized from the longest label: "because 11.9%"
    # is never cut at the right edge, however narrow the column.
    layout = base_layout(title, height or max(320, 70 + 30 * n))
    if layout["title"] is None:
        del layout["title"]
    layout["margin"].update(
        l=int(MARKER_ROOM_PX + max([text_width_px(s, LABEL_FONT_PX) for s in labels] + [text_width_px(query_label, 13)])),
        r=int(MARKER_ROOM_PX + max([text_width_px(s, LABEL_FONT_PX) for s in percent] + [text_width_px(key_label, 13)])),
    )
    layout.update(
        xaxis={"range": [-0.04, 1.04], "visible": False, "fixedrange": True},
        yaxis={"range": [n - 0.5, -0.5], "visible": False, "fixedrange": True},
        dragmode=False, hovermode="closest", clickmode="event+select",
        annotations=[{"font": {"size": 13}, "showarrow": False, "text": text, "x": x, "y": -0.5, "yshift": 18}
                     for x, text in ((0.0, query_label), (1.0, key_label))],
    )
    return figure(data, layout)

