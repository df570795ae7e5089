"""The model view of lessons 8 and 9: every head of a trained model as a small map, in one clickable Vega-Lite chart.

All layers x heads maps stand in one grid (layer = row, head = column) drawn as a single rect mark: one view instead
of 72 facets, so the browser lays out one scene (docs/pretrained-page.md has the measurement). The grid has a fixed
size in pixels in which every cell is square (a head's matrix is n x n: drawn 3:1, a diagonal looks like a slope), so
the page draws it at its own width, not stretched to the column. A click on any cell
selects its (layer, head) through the point selection ``MODEL_VIEW_SELECTION`` (st.vega_lite_chart(on_select=...)
returns it); the opened head is outlined. The cells travel as an Arrow table (``model_view_table``), not as JSON
inside the spec, and that table holds only what cannot be derived: each weight as a fixed-point uint16, in C order of
(layer, head, query, key). The spec's transforms compute the rest (``decode_transforms``): 16 -> 2 bytes per cell, which
matters most for lesson 9's 270 maps, sent again for every new prompt. No Streamlit here.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from charts.style import ACCENT

MODEL_VIEW_SELECTION = "head"
GAP = 2  # empty cells between two maps
MAP_PX = 56  # one map is MAP_PX square whatever the sentence's length: 12 fit a 1280 px screen's column
PHONE_MAP_PX = 20  # ... and a phone's (390 px)
LABEL_PX = 13
PADDING = 5
WEIGHT_COLUMN = "w"  # the table's one column: the weight as fixed point
WEIGHT_SCALE = 65535  # 1.0 in that fixed point (uint16's largest value)


def axis_px(label_px: int) -> tuple[int, int]:
    """Room of the layer labels (left) and of the head labels (top) for labels of ``label_px``: fixed for a font size,
    so a click lands where a test aims."""
    return round(1.6 * label_px) + 10, round(1.4 * label_px) + 6


PHONE_WIDTH_PX = 340  # what a 390 px phone's column leaves a chart (Streamlit pads the main block on both sides)


def fitting_map_px(heads: int, tokens: int, label_px: int = LABEL_PX, width_px: int = PHONE_WIDTH_PX,
                   largest: int = PHONE_MAP_PX) -> int:
    """The side of one map in px (at most ``largest``) at which a row of ``heads`` maps of ``tokens`` tokens, with the
    layer labels and the padding, fits ``width_px``: the gaps between maps are cells, so a short prompt's grid is
    wider than ``heads * map_px`` (lesson 9's 9 heads at 20 px ran 729 px wide on a 390 px phone at 56 px)."""
    n = max(tokens, 1)
    plot = width_px - axis_px(label_px)[0] - 2 * PADDING
    return max(4, min(largest, int(plot * n / (heads * (n + GAP) - GAP))))


def unit_px(tokens: int, map_px: int = MAP_PX) -> float:
    """The side of one cell in px: a map of ``tokens`` x ``tokens`` cells is ``map_px`` wide and tall."""
    return map_px / max(tokens, 1)


def model_view_table(weights) -> pa.Table:
    """weights: (layers, heads, n, n) in [0, 1] -> one row per cell in C order, one uint16 column ``WEIGHT_COLUMN``.

    Only the weight travels, as fixed point round(w * 65535) (an exact 0 stays 0, 1 stays 65535; error <= 1/131070,
    far below the tooltip's 4 decimals): layer, head, query, key and the grid's x, y follow from the row's position,
    so the spec derives them (``decode_transforms``). 16 -> 2 bytes per cell (7 columns of int16/float32 before).
    """
    W = np.asarray(weights, dtype=np.float64)
    fixed = np.rint(np.clip(W, 0.0, 1.0) * WEIGHT_SCALE).astype(np.uint16)
    return pa.table({WEIGHT_COLUMN: fixed.ravel()})


def decode_transforms(layers: int, heads: int, n: int) -> list[dict]:
    """The Vega-Lite transforms turning ``model_view_table``'s rows back into cells of a (layers, heads, n, n) grid:
    the row's 0-based position (a row_number window without a sort keeps the input order) -> layer, head, query q,
    key k, the grid's x = head * (n + GAP) + k and y = layer * (n + GAP) + q, and the weight in [0, 1]."""
    step = n + GAP
    cell = "(datum.index - 1)"  # row_number counts from 1
    return [{"window": [{"op": "row_number", "as": "index"}]},
            {"calculate": f"floor({cell} / {heads * n * n})", "as": "layer"},
            {"calculate": f"floor({cell} / {n * n}) % {heads}", "as": "head"},
            {"calculate": f"floor({cell} / {n}) % {n}", "as": "q"},
            {"calculate": f"{cell} % {n}", "as": "k"},
            {"calculate": f"datum.head * {step} + datum.k", "as": "x"},
            {"calculate": f"datum.layer * {step} + datum.q", "as": "y"},
            {"calculate": f"datum.{WEIGHT_COLUMN} / {WEIGHT_SCALE}", "as": "weight"}]


def upright_keys(spec: dict) -> dict:
    """A heat-map dict -> the same with its key labels standing upright (-90 degrees): with every key labelled, a
    turned label's box is one line high, so no two overlap (Plotly's automatic 30 degrees made them overlap on a
    projector). The input is not changed."""
    layout = dict(spec.get("layout") or {})
    layout["xaxis"] = {**(layout.get("xaxis") or {}), "tickangle": -90}
    return {**spec, "layout": layout}


def _label_expr(names: list[str], field: str) -> str:
    """A Vega expression picking names[datum.<field>] (the names JSON-quoted: user text stays a string literal)."""
    return f"{json.dumps(names, ensure_ascii=True)}[datum.{field}]"


def model_view(tokens, layers: int, heads: int, opened: tuple[int, int], *, layer_label: str, head_label: str,
               query_label: str, key_label: str, value_label: str, title: str | None = None, map_px: int = MAP_PX,
               label_px: int = LABEL_PX) -> dict:
    """tokens: (n,), a grid of layers x heads maps, ``opened`` = (layer, head) outlined -> a Vega-Lite spec (dict).

    The data is ``model_view_table(weights)``, passed beside the spec: one uint16 per cell, from which the spec's
    transforms derive the layer, head, query, key, grid position and weight (16 -> 2 bytes per cell on the wire).
    Axes name the heads ("L3" / "H1", counted from 0 as the model's own files do); the hover gives the layer, head,
    query token, key token and the weight to 4 decimals (the fixed point is 8e-6 near: an exact 0 shows 0.0000).
    Each map is ``map_px`` square (square cells); labels and the legend are ``label_px`` (presenter mode: larger).
    The plot is exactly width x height px (autosize "pad": axes and legend are added around it, never squeezed in).
    """
    n = len(tokens)
    step = n + GAP
    names = [str(tok) for tok in tokens]
    unit = unit_px(n, map_px)
    width, height = (heads * step - GAP) * unit, (layers * step - GAP) * unit
    room = axis_px(label_px)
    ticks = lambda count: [i * step + (n - 1) / 2 for i in range(count)]  # noqa: E731 - the centre of each map
    layer_text, head_text = json.dumps(layer_label), json.dumps(head_label)  # (labels stay string literals)
    x_axis = {"values": ticks(heads), "labelExpr": f"{head_text} + floor(datum.value / {step})", "title": None,
              "orient": "top", "grid": False, "ticks": False, "domain": False, "labelAngle": 0,
              "minExtent": room[1], "maxExtent": room[1]}
    y_axis = {"values": ticks(layers), "labelExpr": f"{layer_text} + floor(datum.value / {step})", "title": None,
              "grid": False, "ticks": False, "domain": False, "minExtent": room[0], "maxExtent": room[0]}
    cells = {
        "mark": {"type": "rect", "cursor": "pointer"},
        "params": [{"name": MODEL_VIEW_SELECTION, "select": {"type": "point", "fields": ["layer", "head"],
                                                             "on": "click", "clear": False}}],
        "transform": [*decode_transforms(layers, heads, n),
                      {"calculate": _label_expr(names, "q"), "as": "query"},
                      {"calculate": _label_expr(names, "k"), "as": "key"},
                      {"calculate": f"{layer_text} + datum.layer + {head_text} + datum.head", "as": "name"},
                      {"calculate": "datum.x + 1", "as": "x2"}, {"calculate": "datum.y + 1", "as": "y2"}],
        "encoding": {
            "x": {"field": "x", "type": "quantitative", "scale": {"domain": [0, heads * step - GAP], "nice": False,
                                                                   "zero": False}, "axis": x_axis},
            "x2": {"field": "x2"},
            "y": {"field": "y", "type": "quantitative", "scale": {"domain": [0, layers * step - GAP], "nice": False,
                                                                   "zero": False, "reverse": True}, "axis": y_axis},
            "y2": {"field": "y2"},
            "color": {"field": "weight", "type": "quantitative", "scale": {"scheme": "viridis", "domain": [0, 1]},
                      "legend": {"title": value_label, "orient": "bottom", "gradientLength": 200}},
            "tooltip": [{"field": "name", "title": f"{layer_label} / {head_label}"},
                        {"field": "query", "title": query_label}, {"field": "key", "title": key_label},
                        {"field": "weight", "type": "quantitative", "title": value_label, "format": ".4f"}],
        },
    }
    layer, head = opened
    outline = {
        "data": {"values": [{"x": head * step - 0.5, "x2": head * step + n + 0.5,
                             "y": layer * step - 0.5, "y2": layer * step + n + 0.5}]},
        "mark": {"type": "rect", "fill": None, "stroke": ACCENT, "strokeWidth": 3},
        "encoding": {"x": {"field": "x", "type": "quantitative"}, "x2": {"field": "x2"},
                     "y": {"field": "y", "type": "quantitative"}, "y2": {"field": "y2"}},
    }
    # canvas, not SVG: one SVG element per cell made the first draw take seconds (docs/pretrained-page.md)
    spec = {"width": round(width, 2), "height": round(height, 2), "autosize": {"type": "pad", "contains": "padding"},
            "padding": dict.fromkeys(("left", "right", "top", "bottom"), PADDING),
            "layer": [cells, outline],
            "config": {"view": {"stroke": None}, "axis": {"labelFontSize": label_px},
                       "legend": {"labelFontSize": label_px, "titleFontSize": label_px}, "mark": {"aria": False}},
            "usermeta": {"embedOptions": {"renderer": "canvas"}}}
    if title:
        spec["title"] = title
    return spec

