"""The tiny GPT lesson's chart builder draws what it is given: one line per series over the steps (dashed where
asked), the dotted reference level with its label, the vertical line at a step with its label, the y range.
(Plotly's own validator checks every case in tests/test_all_charts.py.)"""

from __future__ import annotations

import numpy as np

from charts.style import OKABE_ITO
from charts.tiny_gpt import step_lines
from tests.apptest_utils import decode_array

STEPS = np.arange(0, 101, 25)


def tiny_gpt_figures() -> dict:
    """{name: (builder, args, kwargs)}: representative calls of every builder in charts/tiny_gpt.py."""
    return {
        "step_lines": (step_lines, (STEPS, {"repeated": [3.5, 2.8, 2.7, 1.0, 0.3], "unrepeated": [3.5] * 5}),
                       dict(title="loss", step_label="step", value_label="nats", reference=2.57,
                            reference_label="plateau 2.57", marker=75, marker_label="formed")),
        "step_lines_scores_ja": (step_lines, (STEPS, {"L1·H1 直前トークン": np.linspace(0.1, 0.8, 5),
                                                      "L2·H1 インダクション": np.linspace(0.05, 0.9, 5)}),
                                 dict(y_range=(0, 1), dashed=["L1·H1 直前トークン"], value_label="スコア")),
        "step_lines_plain": (step_lines, ([0], {"a": [1.0]}), {}),
    }


def _build(name: str) -> dict:
    builder, args, kwargs = tiny_gpt_figures()[name]
    return builder(*args, **kwargs)


def test_step_lines_draw_each_series_over_the_steps_with_the_plateau_and_the_formed_step():
    fig = _build("step_lines")
    repeated, unrepeated = fig["data"]
    assert (repeated["name"], unrepeated["name"]) == ("repeated", "unrepeated")
    assert decode_array(repeated["x"]).tolist() == [0, 25, 50, 75, 100]
    np.testing.assert_allclose(decode_array(repeated["y"]), [3.5, 2.8, 2.7, 1.0, 0.3])
    assert repeated["line"]["color"] == OKABE_ITO[0] and unrepeated["line"]["color"] == OKABE_ITO[1]
    assert repeated["line"]["dash"] == "solid"
    level, step = fig["layout"]["shapes"]
    assert (level["xref"], level["y0"], level["y1"], level["line"]["dash"]) == ("paper", 2.57, 2.57, "dot")
    assert (step["yref"], step["x0"], step["x1"]) == ("paper", 75, 75)
    assert [a["text"] for a in fig["layout"]["annotations"]] == ["plateau 2.57", "formed"]
    assert fig["layout"]["title"]["text"] == "loss" and fig["layout"]["yaxis"]["title"]["text"] == "nats"


def test_step_lines_dash_what_is_asked_and_keep_the_range():
    fig = _build("step_lines_scores_ja")
    assert [tr["line"]["dash"] for tr in fig["data"]] == ["dash", "solid"]
    assert fig["layout"]["yaxis"]["range"] == [0, 1]
    assert fig["layout"]["shapes"] == [] and fig["layout"]["annotations"] == []
    assert "title" not in fig["layout"]


def test_the_formula_is_three_short_lines_that_fit_a_phone():
    """On a 390 px phone the one-line formula was cut at the right edge: each line now holds at most 32 characters of
    shown text."""
    import re

    from ui.tiny_gpt.runs import formula

    body = formula().removeprefix(r"\begin{gathered}").removesuffix(r"\end{gathered}")
    rows = body.split(r"\\")
    assert len(rows) == 3
    for row in rows:
        shown = re.sub(r"\\text\{([^}]*)\}", r"\1", row)
        shown = re.sub(r"\\[a-zA-Z]+|[{}_;\\ ]", "", shown)
        assert len(shown) <= 32, row
