"""charts.causal builds plain dicts: the JSON sent to the browser must equal the graph_objects version's."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
import streamlit  # noqa: F401 - sets Streamlit's default template, as in the app

from attention_core.causal import (
    RANDOM_DIM, causal_vs_bidirectional, generation_frames, leak_test, random_word_vectors, replacement_vector,
)
from charts import causal as plain
from tests import reference_causal_charts as ref
from tests.apptest_utils import decode_array


def decoded(x):
    """JSON with Plotly's base64 arrays decoded to lists of numbers (graph_objects stores a 1 x 1 float32 z as f8)."""
    if isinstance(x, dict):
        if "bdata" in x and "dtype" in x:
            values = decode_array(x).astype(float)
            return np.where(np.isnan(values), None, values.astype(object)).tolist()  # NaN as null, comparable
        return {k: decoded(v) for k, v in x.items()}
    return [decoded(v) for v in x] if isinstance(x, list) else x


def as_json(fig) -> dict:
    """What st.plotly_chart sends: plotly.io.to_json of the figure (a dict as it is, a go.Figure via to_dict)."""
    return decoded(json.loads(pio.to_json(fig, validate=False)))


def pruned(x):
    """A JSON value without empty objects (graph_objects writes title=None as {} in one path and drops it in another)."""
    if isinstance(x, dict):
        return {k: pruned(v) for k, v in x.items() if v != {}}
    return [pruned(v) for v in x] if isinstance(x, list) else x


def validated(spec: dict) -> dict:
    """The same dict run through plotly.graph_objects validation: an invalid or un-normalised value would change."""
    return pruned(decoded(json.loads(pio.to_json(go.Figure(spec)))))


def first_difference(x, y, path="") -> str | None:
    """The first path where two JSON values differ (None when equal): a readable failure."""
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y)):
            if k not in x or k not in y:
                return f"{path}/{k} only in {'mine' if k in x else 'graph_objects'}"
            found = first_difference(x[k], y[k], f"{path}/{k}")
            if found:
                return found
        return None
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        return next((f for f in (first_difference(p, q, f"{path}[{i}]") for i, (p, q) in enumerate(zip(x, y))) if f), None)
    return None if x == y else f"{path}: {str(x)[:80]} != {str(y)[:80]}"


SENTENCES = [
    "the animal did n't cross the street because it was too tired".split(),
    ["hi"],
    ["a", "b"],
    [f"w{i}" for i in range(15)],  # over 144 cells: no "−∞" text, invisible markers instead
]


@pytest.mark.parametrize("words", SENTENCES, ids=lambda w: str(len(w)))
@pytest.mark.parametrize("seed", [0, 3])
def test_plain_dicts_equal_the_graph_objects_json(words, seed):
    X = random_word_vectors(words, RANDOM_DIM, seed)
    res = causal_vs_bidirectional(X, seed)
    n = len(words)
    titles = dict(title="t", value_label="v", axis_titles=("k", "q"))
    cases = [
        (plain.masked_scores_heatmap(res["causal"].scores, words, masked_note="m", **titles),
         ref.masked_scores_heatmap(res["causal"].scores, words, masked_note="m", **titles)),
    ]
    frames = generation_frames(res["causal"].weights)
    for generated in {1, n, (n + 1) // 2}:
        cases.append((plain.generation_animation(frames, words, generated, play_label="p", pause_label="s",
                                                 step_label="x: ", **titles),
                      ref.generation_animation(frames, words, generated, play_label="p", pause_label="s",
                                               step_label="x: ", **titles)))
    leak = leak_test(X, n - 1, replacement_vector(X, seed), seed)
    modes = {"causal": "c", "bidirectional": "b"}
    cases.append((plain.leak_bars(words, leak.row_change, n - 1, modes, title="l", value_label="d", exact_zero="0!"),
                  ref.leak_bars(words, leak.row_change, n - 1, modes, title="l", value_label="d", exact_zero="0!")))
    cases.append((plain.leak_bars(words, leak.row_change, 0, modes), ref.leak_bars(words, leak.row_change, 0, modes)))
    from tests.reference_charts import attention_heatmap

    hidden = ~res["causal"].mask
    cases.append((plain.weights_heatmap(res["causal"].weights, words, hidden=hidden, highlight_row=0, **titles),
                  attention_heatmap(res["causal"].weights, words, hidden=hidden, highlight_row=0, **titles)))
    cases.append((plain.weights_heatmap(res["bidirectional"].weights, words, **titles),
                  attention_heatmap(res["bidirectional"].weights, words, **titles)))
    for mine, theirs in cases:
        assert isinstance(mine, dict) and mine.to_dict() is mine
        assert first_difference(as_json(mine), as_json(theirs)) is None
        assert first_difference(pruned(as_json(mine)), validated(mine)) is None


def test_the_cached_layout_is_not_changed_by_a_figure():
    words = ["a", "b", "c"]
    frames = generation_frames(np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None])
    first = as_json(plain.generation_animation(frames, words, 2, title="g"))
    fig = plain.generation_animation(frames, words, 3, title="g")
    fig["layout"]["height"] = 1
    fig["data"][0]["z"] = None
    assert as_json(plain.generation_animation(frames, words, 2, title="g")) == first
