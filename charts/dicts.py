"""The one way a chart is built: a plain Plotly figure dict ({"data": [...], "layout": {...}}), written directly.

A dict is cheap to build; a plotly.graph_objects figure validates every property on every build, many times the
cost (docs/performance.md). Each builder's dict is checked by Plotly's own validator in the tests (``go.Figure(spec)``
raises on a bad property: tests/test_all_charts.py). Public Plotly APIs only; no Streamlit here.
"""

from __future__ import annotations

import base64
import functools

import numpy as np
import plotly.colors
import plotly.io as pio

from charts.style import base_layout


@functools.lru_cache(maxsize=4)
def _template(name: str) -> dict:
    return pio.templates[name].to_plotly_json()


def figure(data: list, layout: dict, frames: list | None = None) -> dict:
    """Traces and layout -> a figure dict with the current default template (Streamlit's, once streamlit is imported).

    The template is one shared, read-only dict: nothing edits a template, and copying it would cost more than the
    rest of the figure.
    """
    fig = {"data": data, "layout": {**layout, "template": _template(str(pio.templates.default))}}
    if frames is not None:
        fig["frames"] = frames
    return fig


@functools.lru_cache(maxsize=16)
def _colorscale(name: str) -> tuple:
    return tuple(tuple(stop) for stop in plotly.colors.get_colorscale(name))


def colorscale(name: str) -> list:
    """A named Plotly colour scale ("Viridis", "RdBu") as its [[position, colour], ...] list."""
    return [list(stop) for stop in _colorscale(name)]


def layout(title: str | None, height: int, /, **extra) -> dict:
    """charts.style.base_layout without an empty title, with ``extra`` on top; a title broken into lines (so a phone
    shows it whole) gets room for each line."""
    out = base_layout(title, height)
    if not out["title"]:
        del out["title"]
    elif "<br>" in title:
        out["margin"] = {**out["margin"], "t": out["margin"]["t"] + 20 * title.count("<br>")}
    return {**out, **extra}


def title(text: str | None) -> dict:
    """An axis title: {"text": ...}, or {} for none."""
    return {} if text is None else {"text": text}


def arr(x, dtype=np.float64) -> dict:
    """Numbers -> Plotly's typed-array spec (base64 little-endian bytes, as plotly.js reads them): a fraction of the
    bytes and of the JSON encoding time of a list of numbers."""
    v = np.ascontiguousarray(x, dtype=np.dtype(dtype).newbyteorder("<"))
    spec = {"dtype": v.dtype.str[1:], "bdata": base64.b64encode(v).decode("ascii")}
    if v.ndim > 1:
        spec["shape"] = ", ".join(str(s) for s in v.shape)
    return spec
