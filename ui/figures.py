"""Plotly figures built once per distinct input and kept as plain dicts, so a rerun does not rebuild them.

Building a figure with plotly.graph_objects validates every property (5-40 ms per figure here, most of a
page's rerun once the GC after each run is off); the figure's dict is what st.plotly_chart sends anyway.
``figure_spec(builder, *args, **kwargs)`` calls a chart builder (arrays in, go.Figure out) once per distinct
arguments and keeps ``fig.to_dict()`` in a shared, bounded cache (st.cache_resource: never copied, never written
to); ``ui.display.show_plotly`` shows such a dict without
validating it again (``prebuilt``). Arguments are keyed by their values (``args_key``: numbers, strings, tuples,
lists, dicts, NumPy arrays; anything else by its pickle); the translated titles are arguments, so each language has
its own entry.
"""

from __future__ import annotations

import hashlib
import pickle

import numpy as np
import streamlit as st
from plotly.basedatatypes import BaseFigure

FIGURE_CACHE_ENTRIES = 128  # a few KB to ~100 KB each: bounded so a class of 40 with random settings stays under 600 MB


# st.cache_resource, not st.cache_data: one shared dict per figure instead of an unpickled copy on every rerun (the
# copy was ~3 % of the server's CPU under a class's load, more for the animations). Nothing writes into a figure
# dict: presenter_spec, touch_spec, outline_row and swap_matrix copy what they change (tests/test_figures.py holds
# that), and st.plotly_chart only reads it.
@st.cache_resource(show_spinner=False, max_entries=FIGURE_CACHE_ENTRIES)
def _figure_dict(builder_name: str, builder_version: int, args_key: str, _builder, _args: tuple, _kwargs: dict) -> dict:
    fig = _builder(*_args, **_kwargs)
    return fig if isinstance(fig, dict) else fig.to_dict()  # builders may return a plain figure dict (no validation)


_SCALARS = (str, int, float, bool, type(None))


def _feed(h, obj) -> None:
    """Feed a canonical encoding of ``obj``'s value into the hash ``h``: equal values, equal bytes, whether or not
    parts of ``obj`` are shared (a pickle memoizes a list used twice, so its bytes differ from two equal lists)."""
    kind = type(obj)
    if kind in _SCALARS:
        h.update(b"S" + repr(obj).encode("utf-8", "surrogatepass") + b"\x00")
    elif kind in (list, tuple):
        h.update(b"L" if kind is list else b"T")
        h.update(len(obj).to_bytes(8, "little"))
        if all(type(x) in _SCALARS for x in obj):  # the common case (tokens, labels): one repr, fast
            h.update(repr(obj).encode("utf-8", "surrogatepass"))
        else:
            for item in obj:
                _feed(h, item)
        h.update(b"]")
    elif kind is dict:
        h.update(b"D" + len(obj).to_bytes(8, "little"))
        for key_hash, value in sorted(((args_key(k), v) for k, v in obj.items()), key=lambda pair: pair[0]):
            h.update(key_hash.encode())
            _feed(h, value)
        h.update(b"}")
    elif isinstance(obj, np.ndarray):
        h.update(b"A" + obj.dtype.str.encode() + repr(obj.shape).encode() + b"\x00")
        if obj.dtype.hasobject:
            for item in obj.ravel().tolist():
                _feed(h, item)
        else:
            h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, np.generic):
        h.update(b"N" + obj.dtype.str.encode() + b"\x00" + obj.tobytes())
    else:  # anything else (a dataclass, a DataFrame): its pickle, with a type tag
        h.update(b"P" + kind.__qualname__.encode() + b"\x00")
        h.update(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def args_key(*args, **kwargs) -> str:
    """A hash of the arguments' values: the same for equal values whether or not parts of them are shared.

    NumPy arrays are keyed by dtype, shape and bytes; lists, tuples and dicts (in any key order) by their items.
    """
    h = hashlib.blake2b(digest_size=20)
    _feed(h, args)
    if kwargs:
        _feed(h, kwargs)
    return h.hexdigest()


def figure_spec(builder, *args, **kwargs) -> dict:
    """builder(*args, **kwargs) -> that go.Figure as a dict (fig.to_dict(); a builder may return the dict itself), built
    once per distinct arguments.

    ``builder`` is a chart function (e.g. charts.matrix.attention_heatmap); its name and code are part of the cache
    key, so two builders never share an entry and an edited builder is rebuilt after a reload in development. The
    arguments are keyed by ``args_key`` (a hash of their values), which is several times faster than st.cache_data's
    own hashing of each list item and array on every rerun, and (unlike a hash of their pickle) the same for equal
    data whether or not it shares objects.
    """
    return _figure_dict(builder_name=f"{builder.__module__}.{builder.__qualname__}",
                        builder_version=hash(builder.__code__), args_key=args_key(*args, **kwargs),
                        _builder=builder, _args=args, _kwargs=kwargs)


class _Prebuilt(BaseFigure):
    """A figure dict that Plotly validated when the figure was built, for st.plotly_chart as it is.

    st.plotly_chart (1.67) turns a figure into JSON by ``fig.to_dict()`` for a BaseFigure, but rebuilds a plain dict
    as a go.Figure with full validation first (10-30 ms). This BaseFigure's to_dict() returns the dict itself; the
    figure API is not set up (BaseFigure.__init__ is skipped on purpose) and st.plotly_chart uses nothing else.
    tests/test_figures.py checks the JSON sent is the same as for the go.Figure.
    """

    def __init__(self, spec: dict):  # noqa: D107 - no super().__init__(): that would build an empty figure
        self._spec = spec

    def to_dict(self) -> dict:
        return self._spec


def prebuilt(spec: dict) -> BaseFigure:
    """A figure dict (fig.to_dict()) -> an object st.plotly_chart sends as it is, without validating it again."""
    return _Prebuilt(spec)


def as_figure(spec: dict):
    """A figure dict (fig.to_dict()) -> a go.Figure again, without validating it a second time (~1 ms, not 10-30)."""
    import plotly.graph_objects as go

    return go.Figure(spec, _validate=False)
