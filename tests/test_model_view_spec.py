"""Lesson 8's model view: the hand-written Vega-Lite dict (charts.pretrained.model_view) is the view Altair writes
(bench/model_view_altair.py builds it with Altair 6; the page keeps the dict, docs/performance.md says why), and its
geometry holds: square cells, a map of the same size whatever the sentence's length, labels in the asked font."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from bench.model_view_altair import LABELS, TOKENS, model_view_chart, streamlit_spec
from charts.pretrained import GAP, MAP_PX, model_view, model_view_table


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
    from charts.pretrained import upright_keys

    heat = attention_heatmap(np.eye(3), ["a", "it", "c"], label_every_column=True)
    before = copy.deepcopy(heat)
    turned = upright_keys(heat)
    assert heat == before  # the input is not changed
    assert turned["layout"]["xaxis"]["tickangle"] == -90
    assert turned["layout"]["xaxis"]["ticktext"] == ["a", "it", "c"]  # every key keeps its label
    assert {k: v for k, v in turned["layout"]["xaxis"].items() if k != "tickangle"} == \
        {k: v for k, v in heat["layout"]["xaxis"].items() if k != "tickangle"}
