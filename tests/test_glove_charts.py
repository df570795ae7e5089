"""charts.glove.rank_histogram is a plain dict: the JSON sent must equal the graph_objects version's."""

from __future__ import annotations

import numpy as np
import pytest
import streamlit  # noqa: F401 - Streamlit's default template, as in the app

from charts.glove import rank_histogram
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
