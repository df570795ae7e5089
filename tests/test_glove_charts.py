"""charts.glove.rank_histogram is a plain dict: the JSON sent must equal the graph_objects version's."""

from __future__ import annotations

import numpy as np
import pytest
import streamlit  # noqa: F401 - Streamlit's default template, as in the app

from charts.glove import attention_cloud_3d, rank_histogram
from tests import reference_glove_charts as ref
from tests.test_causal_charts import as_json, first_difference, pruned, validated


@pytest.mark.parametrize("counts, highlight", [
    (np.array([340, 170, 125, 102, 109, 111, 106, 109, 111, 140, 214, 363]), 3),
    (np.array([5, 0]), None),
    (np.array([2000]), 1),
])
def test_rank_histogram_json_equals_graph_objects(counts, highlight):
    kwargs = dict(title="Rank", rank_label="r", share_label="s", observed_label="o", uniform_label="u")
    mine = rank_histogram(counts, highlight, **kwargs)
    assert first_difference(as_json(mine), as_json(ref.rank_histogram(counts, highlight, **kwargs))) is None
    assert first_difference(pruned(as_json(mine)), validated(mine)) is None
    assert first_difference(as_json(rank_histogram(counts)), as_json(ref.rank_histogram(counts))) is None


@pytest.mark.parametrize("n, query", [(12, 8), (2, 0), (5, 4)])
def test_attention_cloud_json_equals_graph_objects(n, query):
    rng = np.random.default_rng(n)
    coords, weights = rng.normal(size=(n, 3)), rng.dirichlet(np.ones(n))
    labels = [f"w{i}" for i in range(n)]
    for title in ("Row", None):
        kwargs = dict(title=title, weight_label="wt", query_label="q")
        mine = attention_cloud_3d(coords, labels, weights, query, **kwargs)
        theirs = ref.attention_cloud_3d(coords, labels, weights, query, **kwargs)
        assert first_difference(as_json(mine), as_json(theirs)) is None
        assert first_difference(pruned(as_json(mine)), validated(mine)) is None
