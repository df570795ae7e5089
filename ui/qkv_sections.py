"""Lesson 2's cached computations, defined once per process (a cached function defined in the page script is
re-created, and its source hashed again, on every run)."""

from __future__ import annotations

import streamlit as st

from attention_core.library import (
    centroid, convex_hull, dot_product_expression, load_library, lookup, output_path, rgb_plane, temperature_sweep,
    zero_temperature_output,
)

TEMPERATURES = [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0]


@st.cache_data(show_spinner=False)
def library():
    return load_library()


@st.cache_data(show_spinner=False, max_entries=512)
def experiment(query: tuple, temperature: float) -> dict:
    """Everything the page shows for one query vector and temperature, computed by the core."""
    lib = library()
    keys, values = lib.keys, lib.values
    temps = temperature_sweep(TEMPERATURES[0], TEMPERATURES[-1])
    path = output_path(query, keys, values, temps)
    points = rgb_plane(values)
    return dict(
        found=lookup(query, keys, values, temperature),
        lines=[dot_product_expression(query, k) for k in keys],
        temps=temps, path=path, path_2d=rgb_plane(path), points=points, hull=convex_hull(points),
        cold=zero_temperature_output(query, keys, values), hot=centroid(values),
    )
