"""The plain-dict chart builders (charts.matrix, charts.bars, charts.tokens) give the JSON their plotly.graph_objects
versions give (tests/reference_charts.py), over the options the pages use: shapes, hidden cells, outlines, dense and
sparse maps, colour scales, sorting, percent bars, kept and dropped lines, Japanese labels, empty and one-token rows."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
import streamlit  # noqa: F401 - the pages' default template ("streamlit") is the one both versions must write

import tests.reference_charts as reference
from charts.bars import weight_bars
from charts.matrix import attention_heatmap
from charts.tokens import token_lines


def same_json(fig: dict, expected) -> None:
    assert json.loads(pio.to_json(fig, validate=False)) == json.loads(pio.to_json(expected.to_dict(), validate=False))
    go.Figure(fig)  # and Plotly's own validation accepts every property of the dict (it raises otherwise)


def weights(n_q: int, n_k: int, seed: int) -> np.ndarray:
    w = np.random.default_rng(seed).random((n_q, n_k))
    return w / w.sum(axis=1, keepdims=True)


HEATMAP_CASES = [
    dict(),
    dict(title="coreference", highlight_row=1),
    dict(title=None, highlight_row=99),
    dict(hidden="upper", zmax=None, value_label="score", axis_titles=("キー", "クエリ")),
    dict(colorscale="RdBu", show_values=False, height=460),
    dict(show_values=True, plot_width=900),
]


@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (5, 7), (14, 14), (40, 40)])
@pytest.mark.parametrize("case", range(len(HEATMAP_CASES)))
def test_attention_heatmap_json(shape, case):
    kwargs = dict(HEATMAP_CASES[case])
    n_q, n_k = shape
    if kwargs.get("hidden") == "upper":
        kwargs["hidden"] = np.triu(np.ones(shape, dtype=bool), k=1)
    rows = [f"t{i}" for i in range(n_q)]
    cols = None if n_q == n_k else [f"猫{j}" for j in range(n_k)]
    W = weights(n_q, n_k, case)
    same_json(attention_heatmap(W, rows, cols, **kwargs), reference.attention_heatmap(W, rows, cols, **kwargs))


@pytest.mark.parametrize("kwargs", [dict(), dict(title="raw", highlight=2), dict(as_percent=True, sort=True),
                                    dict(sort=True, highlight=0, value_label="重み", height=300)])
@pytest.mark.parametrize("n", [1, 4, 12])
def test_weight_bars_json(kwargs, n):
    labels = [f"w{i}" for i in range(n)]
    values = weights(1, n, n)[0]
    same_json(weight_bars(labels, values, **kwargs), reference.weight_bars(labels, values, **kwargs))


@pytest.mark.parametrize("n", [0, 1, 2, 12, 40])
@pytest.mark.parametrize("kwargs", [dict(), dict(keep="half", title="it", query_label="クエリ", key_label="キー"),
                                    dict(height=500, max_width=8.0, value_label="w")])
def test_token_lines_json(n, kwargs):
    kwargs = dict(kwargs)
    tokens = [f"tok{i}" for i in range(n)]
    row = weights(1, n, n)[0] if n else np.zeros(0)
    if kwargs.get("keep") == "half":
        kwargs["keep"] = row >= np.median(row) if n else np.zeros(0, dtype=bool)
    selected = n // 2 if n else 0
    same_json(token_lines(tokens, row, selected, **kwargs), reference.token_lines(tokens, row, selected, **kwargs))
