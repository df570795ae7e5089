"""Lesson 8's model view written by Altair: the alternative measured against the hand-written Vega-Lite dict
(charts.model_view.model_view), which the page keeps (docs/performance.md, "The model view: Altair or the dict").

    .venv/bin/python -m bench.model_view_altair [--runs 20]

prints the server's CPU per drawing of the model view: the dict, and Altair's chart plus Streamlit's conversion of it
(what st.altair_chart does on every run), on the famous sentence's 14 tokens. The browser's side (bytes, draw and
redraw): bench/model_view_draw.py, run on a page that calls st.altair_chart(model_view_chart(...)).
tests/test_model_view_spec.py holds that both write the same view.
Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import altair as alt
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from charts.model_view import (  # noqa: E402
    GAP, LABEL_PX, MAP_PX, MODEL_VIEW_SELECTION, PADDING, WEIGHT_COLUMN, WEIGHT_SCALE, _label_expr, axis_px, model_view,
    model_view_table, unit_px,
)
from charts.style import ACCENT  # noqa: E402

TOKENS = "[CLS] the animal did not cross the street because it was too tired [SEP]".split()
LABELS = dict(layer_label="L", head_label="H", query_label="query", key_label="key", value_label="weight")
def model_view_chart(table, tokens, layers: int, heads: int, opened: tuple[int, int], *, layer_label: str,
                     head_label: str, query_label: str, key_label: str, value_label: str, map_px: int = MAP_PX,
                     label_px: int = LABEL_PX):
    """``model_view``'s chart written by Altair: ``table`` = model_view_table(weights) -> an alt.LayerChart."""
    n = len(tokens)
    step = n + GAP
    names = [str(tok) for tok in tokens]
    unit = unit_px(n, map_px)
    room = axis_px(label_px)
    layer_text, head_text = json.dumps(layer_label), json.dumps(head_label)
    ticks = lambda count: [i * step + (n - 1) / 2 for i in range(count)]  # noqa: E731 - the centre of each map
    plain = {"title": None, "grid": False, "ticks": False, "domain": False}
    x_axis = alt.Axis(values=ticks(heads), labelExpr=f"{head_text} + floor(datum.value / {step})", orient="top",
                      labelAngle=0, minExtent=room[1], maxExtent=room[1], **plain)
    y_axis = alt.Axis(values=ticks(layers), labelExpr=f"{layer_text} + floor(datum.value / {step})",
                      minExtent=room[0], maxExtent=room[0], **plain)
    grid = dict(nice=False, zero=False)
    # the table holds only the fixed-point weight (WEIGHT_COLUMN) in C order: the rest is derived from the row number
    cell = "(datum.index - 1)"
    cells = alt.Chart(table).mark_rect(cursor="pointer").transform_window(
        window=[alt.WindowFieldDef(op="row_number", **{"as": "index"})],
    ).transform_calculate(
        layer=f"floor({cell} / {heads * n * n})", head=f"floor({cell} / {n * n}) % {heads}",
        q=f"floor({cell} / {n}) % {n}", k=f"{cell} % {n}",
        x=f"datum.head * {step} + datum.k", y=f"datum.layer * {step} + datum.q",
        weight=f"datum.{WEIGHT_COLUMN} / {WEIGHT_SCALE}",
    ).transform_calculate(
        query=_label_expr(names, "q"), key=_label_expr(names, "k"),
        name=f"{layer_text} + datum.layer + {head_text} + datum.head", x2="datum.x + 1", y2="datum.y + 1",
    ).encode(
        x=alt.X("x:Q", scale=alt.Scale(domain=[0, heads * step - GAP], **grid), axis=x_axis), x2=alt.X2("x2:Q"),
        y=alt.Y("y:Q", scale=alt.Scale(domain=[0, layers * step - GAP], reverse=True, **grid), axis=y_axis),
        y2=alt.Y2("y2:Q"),
        color=alt.Color("weight:Q", scale=alt.Scale(scheme="viridis", domain=[0, 1]),
                        legend=alt.Legend(title=value_label, orient="bottom", gradientLength=200)),
        tooltip=[alt.Tooltip("name:N", title=f"{layer_label} / {head_label}"),
                 alt.Tooltip("query:N", title=query_label), alt.Tooltip("key:N", title=key_label),
                 alt.Tooltip("weight:Q", title=value_label, format=".4f")],
    ).add_params(alt.selection_point(name=MODEL_VIEW_SELECTION, fields=["layer", "head"], on="click", clear=False))
    layer, head = opened
    outline = alt.Chart(alt.Data(values=[{"x": head * step - 0.5, "x2": head * step + n + 0.5,
                                          "y": layer * step - 0.5, "y2": layer * step + n + 0.5}])).mark_rect(
        fill=None, stroke=ACCENT, strokeWidth=3).encode(x="x:Q", x2="x2:Q", y="y:Q", y2="y2:Q")
    # canvas, not SVG: one SVG element per cell made the first draw take seconds (docs/pretrained-page.md)
    return alt.layer(cells, outline).properties(
        width=round((heads * step - GAP) * unit, 2), height=round((layers * step - GAP) * unit, 2),
        autosize=alt.AutoSizeParams(type="pad", contains="padding"),
        padding=dict.fromkeys(("left", "right", "top", "bottom"), PADDING),
        usermeta={"embedOptions": {"renderer": "canvas"}},
    ).configure_view(stroke=None).configure_axis(labelFontSize=label_px).configure_legend(
        labelFontSize=label_px, titleFontSize=label_px).configure_mark(aria=False)



def streamlit_spec(chart) -> dict:
    """What st.altair_chart makes of ``chart`` (the spec, its data as named Arrow datasets)."""
    from streamlit.elements.vega_charts import _convert_altair_to_vega_lite_spec

    return _convert_altair_to_vega_lite_spec(chart)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    weights = np.random.default_rng(0).dirichlet(np.ones(len(TOKENS)), size=(6, 12, len(TOKENS)))
    table = model_view_table(weights)
    ways = {"dict (the page)": lambda: json.dumps(model_view(TOKENS, 6, 12, (3, 1), **LABELS)),
            "Altair + st.altair_chart's conversion": lambda: json.dumps(
                {k: v for k, v in streamlit_spec(model_view_chart(table, TOKENS, 6, 12, (3, 1), **LABELS)).items()
                 if k != "datasets"})}
    for name, way in ways.items():
        way()  # warm-up (imports, schema loading)
        times = []
        for _ in range(args.runs):
            start = time.process_time()
            way()
            times.append((time.process_time() - start) * 1e3)
        print(f"{name}: CPU median {statistics.median(times):.1f} ms, max {max(times):.1f} ms ({args.runs} runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
