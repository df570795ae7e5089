"""Lesson 8's model view: the hand-written Vega-Lite dict (charts.model_view.model_view) is the view Altair writes
(bench/model_view_altair.py builds it with Altair 6; the page keeps the dict, docs/performance.md says why), and its
geometry holds: square cells, a map of the same size whatever the sentence's length, labels in the asked font. Its
table (one fixed-point weight per cell) decodes back to the weights, and lesson 9's 270 maps fit in 200 kB."""

from __future__ import annotations

import copy
import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.model_view_altair import LABELS, TOKENS, model_view_chart, streamlit_spec
from charts.model_view import GAP, MAP_PX, WEIGHT_COLUMN, model_view, model_view_table
from tests.hypothesis_budget import examples


def comparable(spec: dict) -> dict:
    """A spec without what only says where it came from: Altair's $schema and view names, data references; the
    selection kept where the dict writes it (on the cells' layer); tooltips' types (Vega-Lite's default: nominal)."""
    spec = copy.deepcopy(spec)
    for key in ("$schema", "datasets"):
        spec.pop(key, None)
    params = spec.pop("params", None)
    for layer in spec["layer"]:
        layer.pop("name", None)
        if layer.get("data", {}).get("values") is None:
            layer.pop("data", None)
        for tip in layer["encoding"].get("tooltip", []):
            if tip.get("type") == "nominal":
                del tip["type"]
    if params:
        for param in params:
            param.pop("views", None)
        spec["layer"][0]["params"] = params
    return spec


@pytest.mark.parametrize("opened, label_px", [((3, 1), 13), ((0, 11), 18)])
def test_altair_writes_the_same_view(opened, label_px):
    weights = np.random.default_rng(0).dirichlet(np.ones(len(TOKENS)), size=(6, 12, len(TOKENS)))
    by_hand = model_view(TOKENS, 6, 12, opened, label_px=label_px, **LABELS)
    by_altair = streamlit_spec(model_view_chart(model_view_table(weights), TOKENS, 6, 12, opened, label_px=label_px,
                                                **LABELS))
    assert comparable(by_altair) == comparable(by_hand)


@pytest.mark.parametrize("n", [3, 14, 42])
def test_cells_are_square_and_a_map_keeps_its_size(n):
    spec = model_view([f"t{i}" for i in range(n)], 6, 12, (0, 0), **LABELS)
    step = n + GAP
    x_cells = spec["layer"][0]["encoding"]["x"]["scale"]["domain"][1]
    y_cells = spec["layer"][0]["encoding"]["y"]["scale"]["domain"][1]
    assert (x_cells, y_cells) == (12 * step - GAP, 6 * step - GAP)
    assert spec["width"] / x_cells == pytest.approx(spec["height"] / y_cells, rel=1e-3)  # square cells
    assert n * spec["width"] / x_cells == pytest.approx(MAP_PX, rel=1e-3)
    assert spec["autosize"]["type"] == "pad"  # the plot is width x height: Streamlit's "fit" would squeeze it


def test_upright_keys_turns_only_the_key_labels():
    from charts.matrix import attention_heatmap
    from charts.model_view import upright_keys

    heat = attention_heatmap(np.eye(3), ["a", "it", "c"], label_every_column=True)
    before = copy.deepcopy(heat)
    turned = upright_keys(heat)
    assert heat == before  # the input is not changed
    assert turned["layout"]["xaxis"]["tickangle"] == -90
    assert turned["layout"]["xaxis"]["ticktext"] == ["a", "it", "c"]  # every key keeps its label
    assert {k: v for k, v in turned["layout"]["xaxis"].items() if k != "tickangle"} == \
        {k: v for k, v in heat["layout"]["xaxis"].items() if k != "tickangle"}


# The table holds one fixed-point uint16 per cell in C order of (layer, head, q, k); the spec derives the rest.

def decode(column: np.ndarray, layers: int, heads: int, n: int) -> dict:
    """The table's column -> every cell's fields, decoded here with NumPy (not with the spec's expressions)."""
    index = np.arange(column.size)
    per_map = n * n
    layer, head = index // (heads * per_map), (index // per_map) % heads
    q, k = (index % per_map) // n, index % n
    return {"layer": layer, "head": head, "q": q, "k": k, "x": head * (n + GAP) + k, "y": layer * (n + GAP) + q,
            "weight": column.astype(np.float64) / 65535}


def spec_fields(spec: dict, column: np.ndarray) -> dict:
    """The cells' fields as the spec's own decoding transforms compute them (row_number, then each calculate up to the
    weight, evaluated with NumPy: these expressions use only datum fields, numbers, + - * / %, floor and brackets)."""
    transforms = spec["layer"][0]["transform"]
    assert transforms[0] == {"window": [{"op": "row_number", "as": "index"}]}  # no sort: the rows' own order
    datum = {WEIGHT_COLUMN: column.astype(np.float64), "index": np.arange(1, column.size + 1, dtype=np.float64)}
    for step in transforms[1:]:
        if "weight" in datum:  # the decoding ends with the weight (the token names and labels follow)
            break
        expression = step["calculate"]
        assert set(expression) <= set("datum.floor()+-*/%_ 0123456789abcdefghijklmnopqrstuvwxyz"), expression
        datum[step["as"]] = eval(expression.replace("datum.", ""), {"__builtins__": {}, "floor": np.floor, **datum})
    return datum


weight_maps = st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 20), st.integers(0, 2**32 - 1))


@settings(max_examples=examples(100), deadline=None)
@given(weight_maps)
def test_the_table_decodes_back_to_the_weights(shape):
    layers, heads, n, seed = shape
    rng = np.random.default_rng(seed)
    scores = rng.normal(0, 3, (layers, heads, n, n))
    scores[..., np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] = -np.inf  # a causal mask: exact zeros
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)  # row 0 of every map is exactly [1, 0, ...]
    table = model_view_table(weights.astype(np.float32))
    assert table.column_names == [WEIGHT_COLUMN] and table.schema.field(WEIGHT_COLUMN).type == pa.uint16()
    column = table.column(WEIGHT_COLUMN).to_numpy()
    cells = decode(column, layers, heads, n)
    original = weights[cells["layer"], cells["head"], cells["q"], cells["k"]]
    assert np.abs(cells["weight"] - original).max() <= 1 / 131070 + 1e-7  # float32's rounding of the input
    assert np.all(cells["weight"][original == 0] == 0)  # an exact zero stays exactly zero (so does w < 1/131070)
    assert np.all(cells["weight"][original == 1] == 1)
    spec = model_view([f"t{i}" for i in range(n)], layers, heads, (0, 0), **LABELS)
    derived = spec_fields(spec, column)
    for field, values in cells.items():
        np.testing.assert_array_equal(derived[field], values, err_msg=field)
    grid = set(zip(cells["x"].tolist(), cells["y"].tolist()))
    assert len(grid) == column.size  # no two cells share a place in the grid
    x_cells = spec["layer"][0]["encoding"]["x"]["scale"]["domain"][1]
    y_cells = spec["layer"][0]["encoding"]["y"]["scale"]["domain"][1]
    assert cells["x"].max() + 1 == x_cells and cells["y"].max() + 1 == y_cells  # the grid fills its domain


def test_270_maps_of_16_tokens_travel_in_at_most_200_kb():
    """Lesson 9's model view (30 layers x 9 heads, 16 tokens): the Arrow bytes Streamlit sends, with the spec."""
    from streamlit.dataframe_util import convert_anything_to_arrow_bytes

    weights = np.random.default_rng(0).dirichlet(np.ones(16), size=(30, 9, 16))
    data = convert_anything_to_arrow_bytes(model_view_table(weights))
    spec = json.dumps(model_view([f"token{i}" for i in range(16)], 30, 9, (0, 0), **LABELS))
    assert len(data) + len(spec.encode()) <= 200_000, (len(data), len(spec))


@pytest.mark.parametrize("heads", [9, 12])
@pytest.mark.parametrize("label_px", [13, 18])
def test_a_phones_model_view_fits_its_width_for_every_prompt_length(heads, label_px):
    """Issue 33: lesson 9's 9 x 30 grid ran 729 px wide on a 390 px phone. The whole chart (plot, layer labels,
    padding) must fit PHONE_WIDTH_PX for a prompt of 1 to 40 tokens, with maps no larger than a phone's 20 px."""
    from charts.model_view import PADDING, PHONE_MAP_PX, PHONE_WIDTH_PX, axis_px, fitting_map_px, model_view

    assert PHONE_WIDTH_PX <= 390 - 2 * 16  # Streamlit pads a phone's main column by 1 rem a side
    for n in range(1, 41):
        map_px = fitting_map_px(heads, n, label_px)
        spec = model_view([f"t{i}" for i in range(n)], 2, heads, (0, 0), layer_label="L", head_label="H",
                          query_label="q", key_label="k", value_label="w", map_px=map_px, label_px=label_px)
        total = spec["width"] + (label_px * 1.6 + 10) + 2 * PADDING  # (the layer labels' room, counted here again)
        assert total <= PHONE_WIDTH_PX + 1, (n, map_px, total)
        assert map_px <= PHONE_MAP_PX and abs(axis_px(label_px)[0] - (label_px * 1.6 + 10)) <= 0.5
    assert fitting_map_px(heads, 20, label_px) == PHONE_MAP_PX  # an ordinary prompt keeps lesson 8's phone size
