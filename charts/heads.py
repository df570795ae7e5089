"""Lesson 3's multi-head grid: a heat-map dict whose outlined row moves without building the figure again.

charts.matrix.attention_heatmap builds a go.Figure (~25 ms with validation). The heads' maps outline the selected
token's row; a token click would rebuild every map. ``outline_row`` takes the dict of a map built once with
``highlight_row=0`` (ui.figures.figure_spec) and moves that outline to another row by copying the few containers on
the way (~0.01 ms); the result is the same JSON the builder gives for that row (tests/test_self_attention_claims.py).
"""

from __future__ import annotations


def _is_row0_outline(shape: dict) -> bool:
    return shape.get("type") == "rect" and shape.get("y0") == -0.5 and shape.get("y1") == 0.5


def outline_row(spec: dict, row: int | None) -> dict:
    """A heat-map dict built with highlight_row=0 -> the same dict with the outline on ``row`` (None: no outline).

    The input is not changed (the layout and its shapes are copied; arrays are shared).
    """
    layout = dict(spec.get("layout") or {})
    shapes = []
    for shape in layout.get("shapes") or ():
        if _is_row0_outline(shape):
            if row is None:
                continue
            shape = {**shape, "y0": row - 0.5, "y1": row + 0.5}
        shapes.append(shape)
    if shapes:
        layout["shapes"] = shapes
    else:
        layout.pop("shapes", None)
    return {**spec, "layout": layout}
