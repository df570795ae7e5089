"""Plain Plotly figure dicts, written out as ``go.Figure(...).to_dict()`` gives them, without building a go.Figure.

Building and validating a go.Figure costs 10-40 ms per figure on every cache miss; the same dict costs ~1 ms.
Builders that use these helpers are checked against Plotly's validation (the dict must come back unchanged from
``go.Figure(spec)``), e.g. tests/test_scaling_charts.py and tests/test_qkv_charts.py. No Streamlit here.
"""

from __future__ import annotations

import base64
import functools

import numpy as np
import plotly.io as pio

from charts.style import base_layout


class PlainFigure(dict):
    """A figure as the dict fig.to_dict() would give; ``to_dict()`` returns it (ui.figures.figure_spec calls it)."""

    def to_dict(self) -> dict:
        return self


@functools.lru_cache(maxsize=4)
def _template_json(name: str) -> dict:
    import plotly.graph_objects as go  # only once per template: what a go.Figure puts in layout.template

    return go.Figure().to_dict()["layout"]["template"]


@functools.lru_cache(maxsize=16)
def colorscale(name: str) -> tuple:
    """A named Plotly colour scale as the [[position, colour], ...] list validation expands it to."""
    from _plotly_utils.basevalidators import ColorscaleValidator

    return tuple(tuple(stop) for stop in ColorscaleValidator("colorscale", "heatmap").validate_coerce(name))


def scale_list(name: str) -> list:
    return [list(stop) for stop in colorscale(name)]


def figure(data: list, layout: dict, frames: list | None = None) -> dict:
    """Traces and layout -> a figure dict as go.Figure.to_dict() gives it (the current default template filled in).

    The template (a few hundred nested entries) is one shared, read-only dict: nothing edits a template, and
    copying it would cost more than the rest of the figure. Arrays are encoded where they are put (``arr``).
    """
    fig = PlainFigure(data=data, layout=layout)
    if frames is not None:
        fig["frames"] = frames
    layout["template"] = _template_json(str(pio.templates.default))
    return fig


def layout(title: str | None, height: int, /, **extra) -> dict:
    """charts.style.base_layout as validation leaves it (no empty title), with ``extra`` on top."""
    out = base_layout(title, height)
    if not out["title"]:
        del out["title"]
    elif "<br>" in title:  # a title broken into lines (so a phone shows it whole) gets room for each line
        out["margin"] = {**out["margin"], "t": out["margin"]["t"] + 20 * title.count("<br>")}
    return {**out, **extra}


def title(text: str | None) -> dict:
    """An axis title as validation writes it: {"text": ...}, or {} for none."""
    return {} if text is None else {"text": text}


def arr(x) -> dict:
    """Numbers -> Plotly's typed-array spec of float64, as go.Figure.to_dict() encodes a float64 NumPy array."""
    v = np.ascontiguousarray(x, dtype=np.float64)
    spec = {"dtype": "f8", "bdata": base64.b64encode(v).decode("ascii")}
    if v.ndim > 1:
        spec["shape"] = str(v.shape)[1:-1]
    return spec
