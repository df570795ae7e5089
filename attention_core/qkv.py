"""Lesson 2, the QKV library: attention as a soft, differentiable lookup over a few hand-designed books.

A query (what the reader wants to know) is matched against every book's key (its spine) by a dot
product; softmax(q . k / temperature) turns the matches into shares that sum to 1; the answer is the
share-weighted sum of the books' values (their contents, drawn as RGB colours). The library uses no
1/sqrt(d) factor so that the arithmetic stays readable (lesson 4 is about that factor).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_core.attention import softmax
from attention_core.presets import Checker, PresetError, bilingual, read_preset

__all__ = [
    "Book",
    "Feature",
    "Library",
    "LibraryQuery",
    "Lookup",
    "PresetError",
    "centroid",
    "convex_hull",
    "dot_product_expression",
    "dot_products",
    "load_library",
    "lookup",
    "matching_query",
    "output_path",
    "rgb_hex",
    "rgb_plane",
    "temperature_sweep",
    "validate_library",
    "weighted_sum",
    "weighted_sum_expression",
    "zero_temperature_output",
]


@dataclass(frozen=True, eq=False)
class Feature:
    """One named direction of the key/query space, e.g. "cats"."""

    id: str
    name: dict[str, str]


@dataclass(frozen=True, eq=False)
class Book:
    """A book: key (d,) = what it is matched on, value (3,) = its contents as an RGB colour 0..255."""

    id: str
    title: dict[str, str]
    key: np.ndarray
    value: np.ndarray


@dataclass(frozen=True, eq=False)
class LibraryQuery:
    """A preset question: its text in both languages and its query vector (d,)."""

    id: str
    text: dict[str, str]
    vector: np.ndarray


@dataclass(frozen=True, eq=False)
class Library:
    """The whole preset: features, books, queries (the first is the default) and the default temperature."""

    features: tuple[Feature, ...]
    books: tuple[Book, ...]
    queries: tuple[LibraryQuery, ...]
    default_temperature: float

    @property
    def keys(self) -> np.ndarray:
        """-> (n_books, d) the keys stacked."""
        return np.stack([b.key for b in self.books])

    @property
    def values(self) -> np.ndarray:
        """-> (n_books, 3) the values (RGB 0..255) stacked."""
        return np.stack([b.value for b in self.books])


@dataclass(frozen=True, eq=False)
class Lookup:
    """One soft lookup: dots (n,) = q . k_i, scores (n,) = dots / temperature, weights (n,) summing to 1,
    contributions (n, d_v) = w_i v_i, output (d_v,) = their sum."""

    dots: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    contributions: np.ndarray
    output: np.ndarray

    @property
    def best(self) -> int:
        """Index of the book with the largest weight (the first one on a tie)."""
        return int(np.argmax(self.weights))

    @property
    def all_tied(self) -> bool:
        """True when every book scores the same: then every temperature gives the plain average."""
        return bool(np.ptp(self.dots) <= 1e-12)

    @property
    def total(self) -> float:
        """The sum of the weights (1 up to rounding): what the percentages add up to."""
        return float(self.weights.sum())


def _unique_ids(check: Checker, items, field: str) -> None:
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        check.fail(f"{field}[].id", f"ids must be unique, got {ids}")


def validate_library(parsed: dict, check: Checker) -> Library:
    """A parsed data/qkv.toml -> Library; any problem raises PresetError naming the file and field."""
    temperature = check.get(parsed, "default_temperature", float)
    if not (np.isfinite(temperature) and temperature > 0):
        check.fail("default_temperature", f"must be a positive number, got {temperature!r}")
    features = []
    for i, item in enumerate(check.table_list(parsed, "features")):
        path = f"features[{i}]"
        features.append(Feature(check.text(item, "id", path), bilingual(check, item, "name", path)))
    _unique_ids(check, features, "features")
    d = len(features)
    books = []
    for i, item in enumerate(check.table_list(parsed, "books", min_len=2)):
        path = f"books[{i}]"
        value = check.vector(item, "value", path, length=3)
        if ((value < 0) | (value > 255)).any():
            check.fail(f"{path}.value", f"must be an RGB colour with numbers in 0..255, got {value.tolist()}")
        key = check.vector(item, "key", path, length=d)
        books.append(Book(check.text(item, "id", path), bilingual(check, item, "title", path), key, value))
    _unique_ids(check, books, "books")
    queries = []
    for i, item in enumerate(check.table_list(parsed, "queries")):
        path = f"queries[{i}]"
        vector = check.vector(item, "vector", path, length=d)
        queries.append(LibraryQuery(check.text(item, "id", path), bilingual(check, item, "text", path), vector))
    _unique_ids(check, queries, "queries")
    return Library(tuple(features), tuple(books), tuple(queries), float(temperature))


def load_library(data_dir=None) -> Library:
    """-> the hand-designed library of data/qkv.toml (or <data_dir>/qkv.toml), validated."""
    return read_preset("qkv", validate_library, data_dir)


def dot_products(query, keys) -> np.ndarray:
    """query: (d,), keys: (n, d) -> (n,) the match q . k_i of the query with every key."""
    q = np.asarray(query, dtype=np.float64)
    K = np.asarray(keys, dtype=np.float64)
    if K.ndim != 2 or q.shape != (K.shape[1],):
        raise ValueError(f"query (d,) and keys (n, d) must agree, got {q.shape} and {K.shape}")
    return K @ q


def weighted_sum(weights, values) -> np.ndarray:
    """weights: (..., n), values: (n, d_v) -> (..., d_v) sum_i w_i v_i."""
    return np.asarray(weights, dtype=np.float64) @ np.asarray(values, dtype=np.float64)


def lookup(query, keys, values, temperature: float = 1.0) -> Lookup:
    """query: (d,), keys: (n, d), values: (n, d_v) -> Lookup(dots (n,), scores (n,), weights (n,), output (d_v,)).

    scores = q . k_i / temperature (no 1/sqrt(d)); weights = softmax(scores); output = sum_i w_i v_i.
    """
    dots = dot_products(query, keys)
    weights = softmax(dots, temperature=temperature)
    V = np.asarray(values, dtype=np.float64)
    if V.ndim != 2 or V.shape[0] != dots.shape[0]:
        raise ValueError(f"values must have shape (n, d_v) with n = {dots.shape[0]}, got {V.shape}")
    return Lookup(dots, dots / temperature, weights, weights[:, None] * V, weighted_sum(weights, V))


def output_path(query, keys, values, temperatures) -> np.ndarray:
    """query: (d,), keys: (n, d), values: (n, d_v), temperatures: (t,) -> (t, d_v) the output at each temperature."""
    dots = dot_products(query, keys)
    temps = np.asarray(temperatures, dtype=np.float64)
    if temps.ndim != 1 or not (np.isfinite(temps).all() and (temps > 0).all()):
        raise ValueError("temperatures must be a 1-d array of positive finite numbers")
    weights = softmax(dots[None, :] / temps[:, None], axis=-1)
    return weighted_sum(weights, values)


def zero_temperature_output(query, keys, values) -> np.ndarray:
    """query: (d,), keys: (n, d), values: (n, d_v) -> (d_v,) the limit for temperature -> 0.

    That is the value of the best-matching book (a hard lookup, argmax); books tied for the best
    match share equally, so the limit is the mean of their values.
    """
    dots = dot_products(query, keys)
    best = np.isclose(dots, dots.max(), rtol=0.0, atol=1e-9)
    return np.asarray(values, dtype=np.float64)[best].mean(axis=0)


def centroid(values) -> np.ndarray:
    """values: (n, d_v) -> (d_v,) their mean: the output for temperature -> infinity (uniform weights)."""
    return np.asarray(values, dtype=np.float64).mean(axis=0)


def temperature_sweep(low: float, high: float, n: int = 121) -> np.ndarray:
    """-> (n,) temperatures spaced evenly on a log scale from ``low`` to ``high`` (both > 0)."""
    if not (0 < low < high) or n < 2:
        raise ValueError(f"need 0 < low < high and n >= 2, got {low}, {high}, {n}")
    return np.geomspace(low, high, n)


def rgb_plane(rgb) -> np.ndarray:
    """rgb: (..., 3) -> (..., 2) the colour's position on the plane across the grey axis.

    x = R - (G + B) / 2, y = sqrt(3) / 2 (G - B): the angle is the hue, the distance from the
    origin the colourfulness (chroma); lightness is dropped. The map is linear, so a blend of
    colours lands at the same blend of their points.
    """
    rgb = np.asarray(rgb, dtype=np.float64)
    if rgb.shape[-1] != 3:
        raise ValueError(f"rgb needs a last axis of 3, got shape {rgb.shape}")
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    return np.stack([r - (g + b) / 2.0, np.sqrt(3.0) / 2.0 * (g - b)], axis=-1)


def convex_hull(points) -> np.ndarray:
    """points: (n, 2) -> (h,) indices of the convex hull's corners, counter-clockwise (Andrew's monotone chain).

    Collinear and repeated points are left out; one point gives (1,), collinear points the two ends.
    """
    P = np.asarray(points, dtype=np.float64)
    if P.ndim != 2 or P.shape[1] != 2 or len(P) == 0:
        raise ValueError(f"points must have shape (n, 2) with n >= 1, got {P.shape}")
    order: list[int] = []
    for i in sorted(range(len(P)), key=lambda i: (P[i, 0], P[i, 1])):
        if not order or (P[i] != P[order[-1]]).any():  # a repeated point is kept once
            order.append(i)

    def cross(o: int, a: int, b: int) -> float:
        return (P[a, 0] - P[o, 0]) * (P[b, 1] - P[o, 1]) - (P[a, 1] - P[o, 1]) * (P[b, 0] - P[o, 0])

    def half(indices) -> list[int]:
        chain: list[int] = []
        for i in indices:
            while len(chain) >= 2 and cross(chain[-2], chain[-1], i) <= 0:
                chain.pop()
            chain.append(i)
        return chain

    if len(order) == 1:
        return np.asarray(order, dtype=int)
    lower, upper = half(order), half(order[::-1])
    return np.asarray(lower[:-1] + upper[:-1], dtype=int)


def dot_product_expression(query, key, decimals: int = 1) -> str:
    """query: (d,), key: (d,) -> the dot product written out, e.g. "1.0×2.0 + 1.0×2.0 + 0.0×0.0 = 4.00"."""
    q = np.asarray(query, dtype=np.float64)
    k = np.asarray(key, dtype=np.float64)
    if q.shape != k.shape or q.ndim != 1:
        raise ValueError(f"query and key must be vectors of the same length, got {q.shape} and {k.shape}")

    def number(x: float, places: int) -> str:
        x = 0.0 if round(float(x), places) == 0 else float(x)  # no "-0.0"
        return f"{x:.{places}f}".replace("-", "−")

    def factor(x: float) -> str:
        text = number(x, decimals)
        return f"({text})" if text.startswith("−") else text

    terms = " + ".join(f"{factor(a)}×{factor(b)}" for a, b in zip(q, k))
    return f"{terms} = {number(dot_products(q, k[None, :])[0], 2)}"


def weighted_sum_expression(weights, values, decimals: int = 3) -> str:
    """weights: (n,), values: (n, d_v) -> the sum written out, e.g. "0.789×(230, 159, 0) + ... = (203.3, 153.1, 32.3)"."""
    w = np.asarray(weights, dtype=np.float64)
    V = np.asarray(values, dtype=np.float64)
    if V.ndim != 2 or w.shape != (V.shape[0],):
        raise ValueError(f"weights (n,) and values (n, d_v) must agree, got {w.shape} and {V.shape}")

    def vector(v, places: int) -> str:
        return "(" + ", ".join(f"{x:.{places}f}" for x in v) + ")"

    terms = " + ".join(f"{x:.{decimals}f}×{vector(v, 0)}" for x, v in zip(w, V))
    return f"{terms} = {vector(weighted_sum(w, V), 1)}"


def matching_query(queries, vector, atol: float = 1e-6) -> LibraryQuery | None:
    """queries: LibraryQuery list, vector: (d,) -> the first preset whose vector equals ``vector``, else None."""
    v = np.asarray(vector, dtype=np.float64)
    for query in queries:
        if query.vector.shape == v.shape and np.allclose(query.vector, v, rtol=0.0, atol=atol):
            return query
    return None


def rgb_hex(rgb) -> str:
    """rgb: (3,) numbers 0..255 -> "#rrggbb" (rounded, clipped to 0..255)."""
    channels = np.clip(np.rint(np.asarray(rgb, dtype=np.float64)), 0, 255).astype(int)
    if channels.shape != (3,):
        raise ValueError(f"rgb must have 3 numbers, got shape {channels.shape}")
    return "#{:02x}{:02x}{:02x}".format(*channels)
