"""Plotly figures built once per distinct input and kept as plain dicts, so a rerun does not rebuild them.

``figure_spec(builder, *args, **kwargs)`` calls a chart builder (arrays in, figure dict out) once per distinct
arguments and keeps its dict in a shared, bounded cache (st.cache_resource: never copied, never written to);
``ui.shared.display.show_plotly`` shows it. The translated titles are arguments, so each language has its own entry.
"""

from __future__ import annotations

import hashlib
import pickle

import streamlit as st

FIGURE_CACHE_ENTRIES = 128  # a few KB to ~100 KB each: bounded so a class of 40 with random settings stays small


# st.cache_resource, not st.cache_data: one shared dict per figure instead of an unpickled copy on every rerun. Nothing
# writes into a figure dict: presenter_spec, touch_spec, outline_row and swap_matrix copy what they change
# (tests/test_figures.py holds that), and st.plotly_chart only reads it.
@st.cache_resource(show_spinner=False, max_entries=FIGURE_CACHE_ENTRIES)
def _figure_dict(builder_name: str, builder_version: int, args_key: str, _builder, _args: tuple, _kwargs: dict) -> dict:
    return _builder(*_args, **_kwargs)


def figure_spec(builder, *args, **kwargs) -> dict:
    """builder(*args, **kwargs) -> its figure dict, built once per distinct arguments and shared read-only.

    ``builder`` is a chart function (e.g. charts.matrix.attention_heatmap); its name and code are part of the cache
    key, so two builders never share an entry and an edited builder is rebuilt after a reload in development. The
    arguments (arrays, token lists, titles) are keyed by a hash of their pickle: an order of magnitude faster than
    st.cache_resource hashing each of them, and a builder's inputs are small. Equal data that shares objects
    differently pickles differently: that costs one more build of an equal dict, never a wrong figure.
    """
    args_key = hashlib.blake2b(pickle.dumps((args, kwargs), protocol=pickle.HIGHEST_PROTOCOL), digest_size=20)
    return _figure_dict(builder_name=f"{builder.__module__}.{builder.__qualname__}",
                        builder_version=hash(builder.__code__), args_key=args_key.hexdigest(),
                        _builder=builder, _args=args, _kwargs=kwargs)
