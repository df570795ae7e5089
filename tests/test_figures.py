"""ui.figures (figure dicts built once, cached) and ui.common.show_plotly with a dict: the same chart reaches the browser."""

import json

import numpy as np
from streamlit.testing.v1 import AppTest

from charts.matrix import attention_heatmap


def _two_ways_script():
    """Shows one figure twice: as a go.Figure, and as its cached dict (figure_spec)."""
    import numpy as np
    import streamlit as st

    from charts.causal import generation_animation
    from charts.matrix import attention_heatmap
    from ui.common import show_plotly
    from ui.figures import figure_spec

    weights = np.array([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.2, 0.3, 0.5]])
    frames = np.array([np.where(np.arange(3)[:, None] < k, weights, np.nan) for k in (1, 2, 3)])
    st.session_state.presenter = st.query_params.get("presenter") == "1"
    show_plotly(attention_heatmap(weights, ["a", "b", "c"], title="t", highlight_row=1), key="as_figure")
    show_plotly(figure_spec(attention_heatmap, weights, ["a", "b", "c"], title="t", highlight_row=1), key="as_dict")
    show_plotly(generation_animation(frames, ["a", "b", "c"], 2, title="g"), key="anim_figure")
    show_plotly(figure_spec(generation_animation, frames, ["a", "b", "c"], 2, title="g"), key="anim_dict")


def _specs(presenter: bool) -> list[dict]:
    at = AppTest.from_function(_two_ways_script, default_timeout=60)
    if presenter:
        at.query_params["presenter"] = "1"
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def test_a_cached_dict_sends_the_same_figure_as_the_go_figure():
    as_figure, as_dict, anim_figure, anim_dict = _specs(presenter=False)
    assert as_dict == as_figure
    assert anim_dict == anim_figure and len(anim_dict["frames"]) == 3
    assert as_dict["layout"]["template"], "the Streamlit theme template is still there (the frontend fills it in)"


def test_presenter_mode_enlarges_a_dict_figure_like_a_go_figure():
    as_figure, as_dict, anim_figure, anim_dict = _specs(presenter=True)
    assert as_dict == as_figure and anim_dict == anim_figure
    assert as_dict["layout"]["font"]["size"] == 20
    normal = _specs(presenter=False)[0]
    assert as_dict["layout"]["height"] == int(normal["layout"]["height"] * 1.2)


def test_figure_spec_builds_once_per_distinct_arguments():
    calls = []

    def counting_builder(weights, labels, title=None):
        calls.append(title)
        return attention_heatmap(weights, labels, title=title)

    def script():
        import numpy as np
        import plotly.io as pio
        import streamlit as st

        from ui.figures import figure_spec

        builder = st.session_state["builder"]
        w = np.eye(2)
        first = figure_spec(builder, w, ["x", "y"], title="one")
        again = figure_spec(builder, w.copy(), ["x", "y"], title="one")  # equal values: a cache hit
        other = figure_spec(builder, w, ["x", "y"], title="two")
        st.session_state["same"] = pio.to_json(first) == pio.to_json(again) and first is not again  # own copies
        st.session_state["titles"] = (first["layout"]["title"]["text"], other["layout"]["title"]["text"])

    at = AppTest.from_function(script, default_timeout=60)
    at.session_state["builder"] = counting_builder
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert calls == ["one", "two"]
    assert at.session_state["same"] is True
    assert at.session_state["titles"] == ("one", "two")
    at.run()  # a rerun builds nothing
    assert calls == ["one", "two"]


def test_figure_spec_is_the_figures_dict():
    import plotly.io as pio

    from ui.figures import _figure_dict, figure_spec

    _figure_dict.clear()
    w = np.array([[0.5, 0.5], [0.1, 0.9]])
    spec = figure_spec(attention_heatmap, w, ["p", "q"], title="x")  # outside a script run: cache_data still works
    assert pio.to_json(spec) == pio.to_json(attention_heatmap(w, ["p", "q"], title="x").to_dict())
