"""Every chart builder's figure dict is valid for Plotly (its own validator, ``go.Figure(spec)``, raises on a bad
property or value), in normal, presenter and phone variants; and the content of the shared builders (heat map,
bars, change bars, token lines, the heads' shortcuts, the transformer and RNN charts, the loss curve) is what was
asked for: values, labels, ranges, the highlighted row, hidden cells, titles."""

from __future__ import annotations

import json

import importlib
import inspect
import pkgutil

import numpy as np
import plotly.graph_objects as go
import pytest
import streamlit  # noqa: F401 - registers Streamlit's default template, as in the app

import charts
from charts.bars import change_bars, weight_bars
from charts.glove import loss_curve
from charts.self_attention import outline_row, swap_matrix
from charts.matrix import attention_heatmap, heatmap_height
from charts.modern import distance_lines
from charts.rnn import influence_chart, memory_probe_chart
from charts.style import ACCENT, MASKED_GREY, SECOND
from charts.tokens import LINE_TRACE_PREFIX, token_lines
from charts.model_view import model_view, upright_keys
from charts.transformer import feature_heatmap
from tests.apptest_utils import decode_array
from ui.shared.display import presenter_spec, touch_spec


def rows(n_q: int, n_k: int, seed: int = 0) -> np.ndarray:
    w = np.random.default_rng(seed).random((n_q, n_k))
    return w / w.sum(axis=1, keepdims=True)


def _cases() -> dict[str, tuple]:
    """One or more representative calls of every builder: {id: (builder, args, kwargs)}."""
    from tests.test_causal_charts import causal_figures
    from tests.test_glove_charts import glove_figures
    from tests.test_gpt_charts import gpt_figures
    from tests.test_heads_charts import heads_figures
    from tests.test_qkv_charts import calls as qkv_calls
    from tests.test_scaling_charts import calls as scaling_calls
    from tests.test_tiny_gpt_charts import tiny_gpt_figures

    W = rows(5, 5)
    tokens = ["the", "猫", "sat", "on", "<b>mat</b>"]
    lower = np.triu(np.ones((5, 5), dtype=bool), k=1)
    first = attention_heatmap(W, tokens, highlight_row=0, height=460, show_values=False)
    names = {"rnn": "RNN", "attention": "attention", "x": "position", "y": "norm", "steps": "steps"}
    probe = {"rnn": "RNN {hidden}", "best": "best {hidden}", "attention": "attention", "x": "length", "y": "R²"}
    cases = {
        "heatmap": (attention_heatmap, (W, tokens), {}),
        "heatmap_hidden_titled": (attention_heatmap, (W, tokens), dict(title="因果", hidden=lower, highlight_row=2,
                                                                        zmax=None, axis_titles=("キー", "クエリ"))),
        "heatmap_dense_rect": (attention_heatmap, (rows(40, 38), [f"t{i}" for i in range(40)],
                                                  [f"k{j}" for j in range(38)]), dict(colorscale="RdBu")),
        "heatmap_one": (attention_heatmap, (np.ones((1, 1)), ["a"]), dict(show_values=True)),
        "heatmap_every_label_ja": (attention_heatmap, (rows(14, 14), list("猫がマの上に座った。それは満")),
                                   dict(label_every_column=True, highlight_row=8)),
        "weight_bars": (weight_bars, (tokens, W[1]), dict(title="t", highlight=2)),
        "weight_bars_percent_sorted": (weight_bars, (tokens, W[1]), dict(as_percent=True, sort=True, value_label="重み")),
        "change_bars": (change_bars, (tokens, {"a": np.array([0.0, 1e-12, 0.5, 0.2, 0.0]), "b": W[0]}, {"a": "A", "b": "B"}),
                        dict(highlight=1, title="Δ")),
        "change_bars_no_highlight": (change_bars, (["x"], {"a": np.zeros(1)}, {"a": "A"}), {}),
        "token_lines": (token_lines, (tokens, W[2], 2), dict(keep=W[2] > 0.15, title="lines")),
        "token_lines_empty": (token_lines, ([], np.zeros(0), 0), {}),
        "outline_row": (outline_row, (first, 3), {}),
        "outline_row_none": (outline_row, (first, None), {}),
        "swap_matrix": (swap_matrix, (first, rows(5, 5, 1), "head 2"), {}),
        "upright_keys": (upright_keys, (first,), {}),
        "feature_heatmap": (feature_heatmap, (np.random.default_rng(0).normal(size=(5, 8)), tokens), dict(title="PE")),
        "feature_heatmap_zero": (feature_heatmap, (np.zeros((2, 3)), ["a", "b"]), {}),
        "loss_curve": (loss_curve, (np.array([2.0, 1.0, 0.5]),), dict(title="loss")),
        "loss_curve_zero": (loss_curve, (np.array([1.0, 0.0]),), {}),
        "influence_chart": (influence_chart, (tokens, np.geomspace(1e-6, 1, 5), np.ones(5), np.arange(4, -1, -1),
                                              np.ones(5, dtype=int), names), dict(title="influence")),
        "memory_probe_chart": (memory_probe_chart, (np.array([2, 4, 8]), rows(2, 3), [8, 16], np.ones(3), rows(2, 3, 1),
                                                    probe), dict(title="probe")),
        "distance_lines_log": (distance_lines, (np.arange(0, 600, 50), {"local": np.linspace(1, 0, 12),
                                                                         "グローバル": np.linspace(0.5, 0.4, 12)}),
                               dict(log_x=True, marker=512, marker_label="window 512", title="weight by distance")),
        "distance_lines_linear": (distance_lines, (np.arange(5), {"a": np.zeros(5)}), {}),
    }
    for source in (causal_figures(), glove_figures(), scaling_calls(), qkv_calls(CASE_QUERY, 1.0)[1], gpt_figures(),
                   heads_figures(), tiny_gpt_figures()):
        for name, (builder, args, kwargs) in source.items():
            cases[f"{builder.__name__}:{name}"] = (builder, args, kwargs)
    return cases


CASE_QUERY = (1.0, -2.0, 0.5, 0.0)
CASES = _cases()


def _chart_builders() -> set:
    """Every public function of a chart module that returns a figure dict (charts.dicts and style are helpers)."""
    found = set()
    for info in pkgutil.iter_modules(charts.__path__):
        if info.name in ("dicts", "style"):
            continue
        module = importlib.import_module(f"charts.{info.name}")
        found |= {f for name, f in vars(module).items() if inspect.isfunction(f) and not name.startswith("_")
                  and f.__module__ == module.__name__ and inspect.signature(f).return_annotation in ("dict", dict)}
    return found


def test_the_cases_cover_every_chart_builder():
    assert {builder for builder, _, _ in CASES.values()} | set(VEGA_LITE) == _chart_builders()


# Builders of Vega-Lite specs (st.vega_lite_chart): validated by Altair against the Vega-Lite schema instead.
VEGA_LITE = {
    model_view: (["[CLS]", "the", "animal", "it", "[SEP]"], 6, 12, (3, 1)),
}


@pytest.mark.parametrize("builder", list(VEGA_LITE), ids=lambda b: b.__name__)
def test_vega_lite_specs_pass_the_schema(builder):
    import altair as alt

    spec = builder(*VEGA_LITE[builder], layer_label="L", head_label="H", query_label="query", key_label="key",
                   value_label="weight", title="t")
    (alt.LayerChart if "layer" in spec else alt.Chart).from_dict(spec)  # raises on a property the schema lacks
    broken = json.loads(json.dumps(spec))
    (broken["layer"][0] if "layer" in broken else broken)["mark"] = {"type": "rectangle"}
    with pytest.raises(Exception):
        (alt.LayerChart if "layer" in broken else alt.Chart).from_dict(broken)


@pytest.mark.parametrize("case", list(CASES))
def test_every_figure_is_valid_for_plotly_in_every_variant(case):
    builder, args, kwargs = CASES[case]
    spec = builder(*args, **kwargs)
    assert type(spec) is dict and spec["data"]
    for variant in (spec, presenter_spec(spec), touch_spec(spec), touch_spec(presenter_spec(spec))):
        go.Figure(variant)  # raises ValueError on any property Plotly does not know or a value it does not accept


# --- content ---------------------------------------------------------------------------------------------------------

JA_TOKENS = ["猫", "が", "マット", "の", "上", "に", "座った", "。", "それ", "は", "満足", "そう", "だった", "。"]
EN_TOKENS = ["The", "animal", "did", "not", "cross", "the", "street", "because", "it", "was", "too", "tired", "x", "y"]


def test_a_dense_heatmap_thins_its_column_labels_unless_asked_to_label_every_column():
    """Other lessons' maps keep their thinned, upright labels; lesson 3's (label_every_column) labels every column,
    Japanese written vertically (one upright character per line, the axis text not rotated)."""
    W = rows(14, 14)
    thinned = attention_heatmap(W, JA_TOKENS)["layout"]["xaxis"]
    assert thinned["tickvals"] == list(range(0, 14, 2)) and thinned["tickangle"] == -90
    every = attention_heatmap(W, JA_TOKENS, label_every_column=True)["layout"]["xaxis"]
    assert every["tickvals"] == list(range(14)) and every["tickangle"] == 0
    assert every["ticktext"][2] == "マ<br>ッ<br>ト" and [t.replace("<br>", "") for t in every["ticktext"]] == JA_TOKENS
    english = attention_heatmap(W, EN_TOKENS, label_every_column=True)["layout"]["xaxis"]
    assert english["tickvals"] == list(range(14)) and english["ticktext"] == EN_TOKENS
    assert english["tickangle"] == -90  # Latin letters stacked would not read: English turns upright as before
    assert attention_heatmap(W, JA_TOKENS, label_every_column=False) == attention_heatmap(W, JA_TOKENS)


def test_heatmap_holds_the_weights_labels_hidden_cells_and_outline():
    W = rows(4, 4)
    hidden = np.triu(np.ones((4, 4), dtype=bool), k=1)
    spec = attention_heatmap(W, ["a", "b", "c", "猫"], title="重み", hidden=hidden, highlight_row=2,
                             axis_titles=("キー", "クエリ"))
    heat, layout = spec["data"][0], spec["layout"]
    z = decode_array(heat["z"]).reshape(4, 4)
    assert np.array_equal(np.isnan(z), hidden) and np.allclose(z[~hidden], W[~hidden])
    assert (heat["zmin"], heat["zmax"]) == (0.0, 1.0) and heat["colorscale"][0] == [0.0, "#440154"]  # Viridis
    assert heat["customdata"][3][1] == ["猫", "b"]  # [query, key] per cell: rows are queries
    assert layout["yaxis"]["ticktext"] == ["a", "b", "c", "猫"] and layout["yaxis"]["autorange"] == "reversed"
    assert layout["xaxis"]["ticktext"] == ["a", "b", "c", "猫"]
    assert (layout["xaxis"]["title"]["text"], layout["yaxis"]["title"]["text"]) == ("キー", "クエリ")
    assert layout["title"]["text"] == "重み" and layout["plot_bgcolor"] == MASKED_GREY  # hidden cells show it
    (outline,) = layout["shapes"]
    assert (outline["y0"], outline["y1"], outline["x0"], outline["x1"]) == (1.5, 2.5, -0.5, 3.5)
    assert outline["line"]["color"] == ACCENT
    assert heat["texttemplate"] == "%{z:.2f}" and layout["height"] == heatmap_height(4)


def test_heatmap_without_outline_title_or_room_for_numbers():
    spec = attention_heatmap(rows(40, 40), [f"t{i}" for i in range(40)], highlight_row=40, zmax=None)
    heat, layout = spec["data"][0], spec["layout"]
    assert "shapes" not in layout and "title" not in layout  # row 40 of 0..39: no outline
    assert "texttemplate" not in heat and "zmax" not in heat  # 40 columns leave no room; zmax=None: autoscale
    ticks = layout["xaxis"]["tickvals"]
    assert ticks[0] == 0 and len(ticks) < 40 and layout["xaxis"]["tickangle"] == -90  # thinned, upright
    assert len(layout["yaxis"]["ticktext"]) == 40  # every row keeps its label


def test_weight_bars_sort_highlight_and_percent():
    spec = weight_bars(["a", "b", "c"], [0.2, 0.5, 0.3], title="raw", highlight=0, as_percent=True, sort=True)
    (bars,) = spec["data"]
    assert bars["customdata"] == ["b", "c", "a"] and spec["layout"]["xaxis"]["ticktext"] == ["b", "c", "a"]
    assert np.allclose(decode_array(bars["y"]), [50.0, 30.0, 20.0]) and bars["text"] == ["50.0%", "30.0%", "20.0%"]
    assert bars["marker"]["color"] == [SECOND, SECOND, ACCENT]  # bar 0 ("a") in the accent colour, wherever it went
    assert spec["layout"]["yaxis"]["title"]["text"] == "weight (%)" and spec["layout"]["title"]["text"] == "raw"


def test_change_bars_mark_exact_zeros_rounding_bars_and_the_changed_column():
    change = {"causal": np.array([0.0, 3e-12, 0.25]), "bidirectional": np.array([0.5, 0.5, 0.5])}
    spec = change_bars(["a", "b", "c"], change, {"causal": "因果", "bidirectional": "双方向"}, highlight=1,
                       title="漏れ", exact_zero="ちょうど 0", digits=6, colours=(ACCENT, SECOND))
    causal, both = spec["data"]
    assert (causal["name"], both["name"]) == ("因果", "双方向")
    assert (causal["marker"]["color"], both["marker"]["color"]) == (ACCENT, SECOND)
    assert np.array_equal(decode_array(causal["y"]), change["causal"])
    assert causal["text"] == ["0", "3e-12", ""] and both["text"] == ["", "", ""]
    assert causal["customdata"] == [["a", "ちょうど 0"], ["b", "3e-12"], ["c", "0.25"]]
    (shade,) = spec["layout"]["shapes"]
    assert (shade["x0"], shade["x1"]) == (0.5, 1.5)
    assert spec["layout"]["xaxis"]["ticktext"] == ["a", "b", "c"] and spec["layout"]["title"]["text"] == "漏れ"
    assert "shapes" not in change_bars(["a"], {"x": np.ones(1)}, {"x": "X"}, highlight=5)["layout"]


def test_token_lines_draw_the_kept_lines_from_the_selected_query():
    w = np.array([0.1, 0.6, 0.3])
    spec = token_lines(["I", "saw", "it"], w, 2, keep=np.array([False, True, True]), max_width=10.0)
    lines = [tr for tr in spec["data"] if tr.get("name", "").startswith(LINE_TRACE_PREFIX + " ")]
    assert [(tr["y"], tr["line"]["width"]) for tr in lines] == [([2, 1], 6.0), ([2, 2], 3.0)]
    queries, keys = spec["data"][-2:]
    assert queries["text"] == ["I", "saw", "it"] and queries["marker"]["color"] == [SECOND, SECOND, ACCENT]
    assert keys["text"] == ["I  10.0%", "saw  60.0%", "it  30.0%"]
    assert keys["marker"]["color"][0] == "rgba(128,128,128,0.6)"  # a dropped line's key is grey
    assert np.allclose(decode_array(keys["customdata"]).reshape(3, 2), np.column_stack([[0, 1, 2], w]))


def test_outline_row_and_swap_matrix_give_the_builders_figure():
    W, other = rows(4, 4), rows(4, 4, 1)
    first = attention_heatmap(W, list("abcd"), title="h0", highlight_row=0)
    moved = outline_row(swap_matrix(first, other, "h1"), 2)
    assert moved == attention_heatmap(other, list("abcd"), title="h1", highlight_row=2)
    assert outline_row(first, None) == attention_heatmap(W, list("abcd"), title="h0")
    with pytest.raises(ValueError):
        swap_matrix(first, np.eye(3), "wrong shape")


def test_feature_heatmap_is_centred_on_zero():
    values = np.array([[1.0, -3.0], [0.5, 2.0]])
    (heat,) = feature_heatmap(values, ["p0", "p1"], title="PE", value_label="PE")["data"]
    assert (heat["zmin"], heat["zmid"], heat["zmax"]) == (-3.0, 0.0, 3.0)
    assert heat["z"] == values.tolist() and heat["y"] == ["p0", "p1"] and heat["x"] == [0, 1]


def test_loss_curve_is_log_scaled_only_when_every_loss_is_positive():
    spec = loss_curve([2.0, 1.0, 0.25], title="損失", step_label="ステップ")
    assert np.array_equal(decode_array(spec["data"][0]["y"]), [2.0, 1.0, 0.25])
    assert np.array_equal(decode_array(spec["data"][0]["x"]), [0, 1, 2])
    assert spec["layout"]["yaxis"]["type"] == "log" and spec["layout"]["title"]["text"] == "損失"
    assert spec["layout"]["xaxis"]["title"]["text"] == "ステップ"
    assert loss_curve([1.0, 0.0])["layout"]["yaxis"]["type"] == "linear"


def test_rnn_charts_plot_every_series_against_position_and_length():
    names = {"rnn": "RNN", "attention": "注意", "x": "位置", "y": "ノルム", "steps": "歩数"}
    spec = influence_chart(["a", "b"], [1e-3, 1.0], [1.0, 1.0], [1, 0], [1, 1], names, title="影響")
    assert [tr["name"] for tr in spec["data"]] == ["RNN", "注意"] and spec["data"][0]["y"] == [1e-3, 1.0]
    assert spec["layout"]["yaxis"]["type"] == "log" and spec["layout"]["xaxis"]["ticktext"] == ["a", "b"]
    probe = {"rnn": "RNN {hidden}", "best": "best {hidden}", "attention": "attention", "x": "L", "y": "R²"}
    spec = memory_probe_chart([2, 4], [[0.9, -0.3]], [8], [1.0, 1.0], [[1.0, 0.5]], probe)
    assert [tr["name"] for tr in spec["data"]] == ["RNN 8", "best 8", "attention"]
    assert spec["layout"]["yaxis"]["range"] == pytest.approx([-0.35, 1.08]) and spec["layout"]["xaxis"]["range"] == [0, 5]
