"""charts.scaling: the score histogram, the weights on a fixed axis, the stacked panels, the d animation and the
temperature slider show what they are given (validity for Plotly: tests/test_all_charts.py)."""

import numpy as np
import plotly.io as pio
import streamlit  # noqa: F401 - registers the "streamlit" template the app's figures carry

from attention_core.scaling import (
    DIM_CHOICES, NEXT_WORD_SCORES, SAMPLE_COUNT, TEMPERATURE_CHOICES, density_histogram, normal_curve,
    prefix_weights, random_query_keys, sampling_sweep, score_sample, sweep_table,
)
from charts.scaling import score_histogram, sweep_figure, temperature_sampling, weights_animation, weights_on_unit_axis
from charts.style import ACCENT, SECOND
from tests.apptest_utils import decode_array


def small_table():
    return sweep_table(0, n_draws=8, chunk=4)


def calls() -> dict[str, tuple]:
    """Representative calls of every charts.scaling builder: {name: (builder, args, kwargs)} (tests/test_all_charts.py)."""
    z = score_sample(64, 8, 0, True)
    edges, density, counts = density_histogram(z)
    cx, cy = normal_curve(edges[0], edges[-1], 1.0)
    q, K = random_query_keys(8, 0)
    labels = {k: k.upper() for k in ("var", "max", "entropy", "jacobian", "unscaled", "scaled", "line_d", "line_1",
                                     "uniform", "d")}
    run = sampling_sweep(NEXT_WORD_SCORES, TEMPERATURE_CHOICES, SAMPLE_COUNT, 0)
    words = ["mat", "sofa", "floor", "roof", "moon", "piano"]
    keys = [f"k{i}" for i in range(8)]
    return {
        "histogram": (score_histogram, (edges, density, counts, cx, cy, "z", "density", "bars", "curve"), dict(title="T")),
        "histogram_untitled": (score_histogram, (edges, density, counts, cx, cy, "z", "density", "bars", "curve"), {}),
        "weights": (weights_on_unit_axis, (keys, prefix_weights(q, K, [64], True)[0], "W", "w"), {}),
        "sweep": (sweep_figure, (small_table(), labels, 16), {}),
        "animation": (weights_animation, (DIM_CHOICES, prefix_weights(q, K, DIM_CHOICES, False),
                                          prefix_weights(q, K, DIM_CHOICES, True), keys, ("left", "right"), "w",
                                          "Play", "Pause"), {}),
        "sampling": (temperature_sampling, (words, run["probs"], TEMPERATURE_CHOICES, run["samples"], run["entropy"], 8,
                                            {"title": "τ = {tau}, H = {h}<br>{samples}", "y": "p", "slider": "τ = "}),
                     {}),
    }


def builders() -> dict[str, dict]:
    return {name: builder(*args, **kwargs) for name, (builder, args, kwargs) in calls().items()}


def test_the_figures_carry_the_app_template_and_base64_arrays():
    spec = builders()["histogram"]
    assert spec["layout"]["template"] == pio.templates["streamlit"].to_plotly_json()
    assert "bdata" in spec["data"][0]["y"]


def test_the_histogram_bars_span_their_bins_under_the_normal_curve():
    _, args, _ = calls()["histogram"]
    edges, density, counts, cx, cy = args[:5]
    bars, curve = builders()["histogram"]["data"]
    assert np.allclose(decode_array(bars["x"]), (edges[:-1] + edges[1:]) / 2)
    assert np.allclose(decode_array(bars["width"]), np.diff(edges)) and np.allclose(decode_array(bars["y"]), density)
    assert np.allclose(decode_array(bars["customdata"]).reshape(-1, 3)[:, 2], counts)
    assert np.allclose(decode_array(curve["y"]), cy)
    assert "title" not in builders()["histogram_untitled"]["layout"]


def test_the_weights_stand_on_a_fixed_axis_with_the_largest_highlighted():
    _, (keys, w, title, label), _ = calls()["weights"]
    spec = builders()["weights"]
    (bar,) = spec["data"]
    assert np.allclose(decode_array(bar["y"]), w) and spec["layout"]["yaxis"]["range"] == [0, 1.1]
    assert bar["marker"]["color"] == [ACCENT if i == int(np.argmax(w)) else SECOND for i in range(len(w))]
    assert spec["layout"]["xaxis"]["ticktext"] == keys and spec["layout"]["title"]["text"] == title


def test_the_d_animation_has_a_frame_per_d_on_both_panels():
    spec = builders()["animation"]
    assert [f["name"] for f in spec["frames"]] == [f"d = {d}" for d in DIM_CHOICES]
    assert all([tr["yaxis"] for tr in f["data"]] == ["y", "y2"] for f in spec["frames"])
    assert [s["label"] for s in spec["layout"]["sliders"][0]["steps"]] == [f"d = {d}" for d in DIM_CHOICES]


def test_the_stacked_panels_never_overlap():
    for name, n in (("sweep", 4), ("animation", 2)):
        layout = builders()[name]["layout"]
        domains = [layout["yaxis" + ("" if i == 0 else str(i + 1))]["domain"] for i in range(n)]
        for upper, lower in zip(domains, domains[1:]):
            assert lower[1] < upper[0], (name, domains)
        assert all(0 <= lo < hi <= 1 for lo, hi in domains)
        notes = layout["annotations"]
        assert [a["y"] for a in notes] == [d[1] for d in domains] and all(a["xanchor"] == "left" for a in notes)


def test_the_sampling_slider_starts_at_the_frame_it_shows():
    spec = builders()["sampling"]
    slider = spec["layout"]["sliders"][0]
    assert slider["active"] == 8 and slider["steps"][8]["label"] == "1"
    assert spec["data"][0]["y"] == spec["frames"][8]["data"][0]["y"]
    assert len(spec["frames"]) == len(TEMPERATURE_CHOICES)
