"""Lesson 3's multi-head grid: a heat-map dict whose outlined row moves without building the figure again.

charts.matrix.attention_heatmap builds the whole map. The heads' maps outline the selected
token's row; a token click would rebuild every map. ``outline_row`` takes the dict of a map built once with
``highlight_row=0`` (ui.shared.figures.figure_spec) and moves that outline to another row by copying the few containers on
the way; the result is the dict the builder gives for that row (tests/test_self_attention_claims.py).
The three heads of a preset share tokens and layout: ``swap_matrix`` turns the first head's map into another's.
"""

from __future__ import annotations

import numpy as np

from charts.dicts import arr


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


def swap_matrix(spec: dict, weights, title: str | None) -> dict:
    """A heat-map dict of charts.matrix.attention_heatmap (no hidden cells) -> the same map of other ``weights`` of the
    same shape and labels, titled ``title``: the dict the builder gives for these weights, sharing the rest.
    """
    W = np.array(weights, dtype=np.float64)
    trace = spec["data"][0]
    if W.shape != _shape(trace["z"]):
        raise ValueError(f"swap_matrix needs weights of the template's shape {_shape(trace['z'])}, got {W.shape}")
    layout = dict(spec.get("layout") or {})
    if title is not None or "title" in layout:
        layout["title"] = {**(layout.get("title") or {}), "text": title}
    return {**spec, "data": [{**trace, "z": arr(W)}, *spec["data"][1:]], "layout": layout}


def _shape(z) -> tuple[int, ...]:
    if isinstance(z, dict):  # Plotly's typed-array spec
        return tuple(int(s) for s in str(z.get("shape", "")).split(",") if s.strip())
    return np.shape(z)
