"""charts.scaling builds plain figure dicts: each must be exactly what Plotly's validated go.Figure sends."""

import json

import plotly.graph_objects as go
import plotly.io as pio
import pytest
import streamlit  # noqa: F401 - registers the "streamlit" template the app's figures carry

from attention_core.scaling import (
    DIM_CHOICES, NEXT_WORD_SCORES, SAMPLE_COUNT, TEMPERATURE_CHOICES, density_histogram, normal_curve,
    prefix_weights, random_query_keys, sampling_sweep, score_sample, sweep_table,
)
from charts.scaling import score_histogram, sweep_figure, temperature_sampling, weights_animation, weights_on_unit_axis


def as_sent(spec: dict) -> dict:
    return json.loads(pio.to_json(spec, validate=False))


def validated(spec: dict) -> dict:
    """The same dict through go.Figure with full validation (raises on any invalid property), as JSON."""
    return json.loads(pio.to_json(go.Figure(spec).to_dict(), validate=False))


def small_table():
    return sweep_table(0, n_draws=8, chunk=4)


def builders():
    z = score_sample(64, 8, 0, True)
    edges, density, counts = density_histogram(z)
    cx, cy = normal_curve(edges[0], edges[-1], 1.0)
    q, K = random_query_keys(8, 0)
    labels = {k: k.upper() for k in ("var", "max", "entropy", "jacobian", "unscaled", "scaled", "line_d", "line_1",
                                     "uniform", "d")}
    run = sampling_sweep(NEXT_WORD_SCORES, TEMPERATURE_CHOICES, SAMPLE_COUNT, 0)
    words = ["mat", "sofa", "floor", "roof", "moon", "piano"]
    return {
        "histogram": score_histogram(edges, density, counts, cx, cy, "z", "density", "bars", "curve", title="T"),
        "histogram_untitled": score_histogram(edges, density, counts, cx, cy, "z", "density", "bars", "curve"),
        "weights": weights_on_unit_axis([f"k{i}" for i in range(8)], prefix_weights(q, K, [64], True)[0], "W", "w"),
        "sweep": sweep_figure(small_table(), labels, 16),
        "animation": weights_animation(DIM_CHOICES, prefix_weights(q, K, DIM_CHOICES, False),
                                       prefix_weights(q, K, DIM_CHOICES, True), [f"k{i}" for i in range(8)],
                                       ("left", "right"), "w", "Play", "Pause"),
        "sampling": temperature_sampling(words, run["probs"], TEMPERATURE_CHOICES, run["samples"], run["entropy"], 8,
                                         {"title": "τ = {tau}, H = {h}<br>{samples}", "y": "p", "slider": "τ = "}),
    }


@pytest.mark.parametrize("name", list(builders()))
def test_a_dict_figure_is_what_the_validated_go_figure_sends(name):
    spec = builders()[name]
    assert isinstance(spec, dict)
    assert as_sent(spec) == validated(spec)


def test_the_figures_carry_the_app_template_and_base64_arrays():
    spec = builders()["histogram"]
    assert spec["layout"]["template"] == go.Figure().to_dict()["layout"]["template"]
    assert "bdata" in spec["data"][0]["y"]


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
