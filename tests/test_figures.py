"""ui.figures (figure dicts built once, cached) and ui.display.show_plotly with a dict: the same chart reaches the browser."""

import json

import numpy as np
from _plotly_utils.utils import PlotlyJSONEncoder
from streamlit.testing.v1 import AppTest

from charts.matrix import attention_heatmap


def _two_ways_script():
    """Shows one figure twice: as a go.Figure, and as its cached dict (figure_spec)."""
    import numpy as np
    import streamlit as st

    from charts.causal import generation_animation
    from charts.matrix import attention_heatmap
    from tests.reference_charts import attention_heatmap as go_heatmap  # the go.Figure version of the same chart
    from ui.display import show_plotly
    from ui.figures import figure_spec

    weights = np.array([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.2, 0.3, 0.5]])
    frames = np.array([np.where(np.arange(3)[:, None] < k, weights, np.nan) for k in (1, 2, 3)])
    st.session_state.presenter = st.query_params.get("presenter") == "1"
    show_plotly(go_heatmap(weights, ["a", "b", "c"], title="t", highlight_row=1), key="as_figure")
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
        import streamlit as st

        from ui.figures import figure_spec

        builder = st.session_state["builder"]
        w = np.eye(2)
        first = figure_spec(builder, w, ["x", "y"], title="one")
        again = figure_spec(builder, w.copy(), ["x", "y"], title="one")  # equal values: a cache hit
        other = figure_spec(builder, w, ["x", "y"], title="two")
        st.session_state["same"] = first is again  # one shared dict (st.cache_resource), not a copy per call
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
    spec = figure_spec(attention_heatmap, w, ["p", "q"], title="x")  # outside a script run: the cache still works
    assert pio.to_json(spec) == pio.to_json(attention_heatmap(w, ["p", "q"], title="x").to_dict())


# --- the cache key: equal values, one key (issue 11) ---------------------------------------------------------------

def test_args_key_is_the_same_for_equal_data_shared_or_not():
    import pickle

    from ui.figures import args_key

    labels = ["the", "cat", "sat"]
    w = np.arange(9.0).reshape(3, 3)
    shared = (w, labels, labels, {"x": labels, "y": w})
    separate = (w.copy(), list(labels), ["the", "cat", "sat"], {"y": np.asfortranarray(w), "x": ["the", "cat", "sat"]})
    assert pickle.dumps(shared) != pickle.dumps(separate), "the pickle of shared data differs (why pickles were not used)"
    assert args_key(*shared, title="t") == args_key(*separate, title="t")
    nested_shared = [[labels, labels], (w, w)]
    nested_separate = [[list(labels), list(labels)], (w.copy(), w.copy())]
    assert args_key(nested_shared) == args_key(nested_separate)
    objects = np.array(labels, dtype=object)
    assert args_key(objects) == args_key(np.array(list(labels), dtype=object))


def test_args_key_tells_different_values_apart():
    from ui.figures import args_key

    w = np.arange(6.0).reshape(2, 3)
    keys = {
        args_key(w), args_key(w.reshape(3, 2)), args_key(w.astype(np.float32)), args_key(w + 1e-12),
        args_key(w, title="a"), args_key(w, title="b"), args_key(w, "a"), args_key([1, 2]), args_key((1, 2)),
        args_key(["1", "2"]), args_key([[1], 2]), args_key([1, [2]]), args_key({"a": 1}), args_key({"a": 2}),
        args_key(None), args_key(np.float64(1.0)), args_key(np.float32(1.0)),
    }
    assert len(keys) == 17


def test_equal_data_shared_or_not_builds_once():
    calls = []

    def builder(weights, rows, cols):
        calls.append(1)
        return attention_heatmap(weights, rows, cols)

    from ui.figures import figure_spec

    tokens = ["a", "b"]
    w = np.eye(2) * 0.5
    first = figure_spec(builder, w, tokens, tokens)  # the same list twice (a pickle memoizes it)
    second = figure_spec(builder, w.copy(), ["a", "b"], ["a", "b"])
    assert calls == [1] and json.dumps(first, default=str) == json.dumps(second, default=str)


# --- presenter mode as a dict transform (issue 11) ------------------------------------------------------------------

def _old_presenter_path(spec: dict) -> dict:
    """What show_plotly did in presenter mode before: rebuild the go.Figure, restyle it, send its dict."""
    from ui.display import PRESENTER_FONT_SIZE, presenter_fonts
    from ui.figures import as_figure

    fig = as_figure(spec)
    fig.update_layout(font=dict(size=PRESENTER_FONT_SIZE))
    if fig.layout.height:
        fig.update_layout(height=int(fig.layout.height * 1.2))
    presenter_fonts(fig)
    return fig.to_dict()


def _every_page_figure() -> list[dict]:
    from tests.apptest_utils import plotly_figures, run_page
    from tests.pages import PAGES

    specs = []
    for page in PAGES:
        at = run_page(page.file, "ja" if page.section in ("self_attention", "causal") else "en", timeout=120)
        assert not at.exception, [e.message for e in at.exception]
        specs += plotly_figures(at)
    return specs


def test_presenter_spec_equals_the_old_go_figure_restyle_for_every_page_figure():
    import copy

    import plotly.io as pio

    from ui.display import presenter_spec

    specs = _every_page_figure()
    assert len(specs) >= 10
    for spec in specs:
        before = copy.deepcopy(spec)
        new = presenter_spec(spec)
        assert spec == before, "the cached dict is not changed"
        assert json.loads(pio.to_json(new)) == json.loads(pio.to_json(_old_presenter_path(spec)))
        assert new["layout"]["font"]["size"] == 20


def test_presenter_spec_covers_colour_bars_subplots_scenes_and_menus():
    import plotly.graph_objects as go
    import plotly.io as pio
    from plotly.subplots import make_subplots

    from ui.display import presenter_spec

    fig = make_subplots(rows=1, cols=2, subplot_titles=("a", "b"))
    fig.add_trace(go.Scatter(x=[1, 2], y=[1, 2], mode="markers", marker=dict(color=[1, 2], colorbar=dict(title="c"))),
                  1, 1)
    fig.add_trace(go.Heatmap(z=[[1, 2]], texttemplate="%{z}"), 1, 2)
    fig.add_trace(go.Bar(x=[1], y=[2]), 1, 1)
    fig.update_layout(title="t", height=300, updatemenus=[dict(buttons=[dict(label="x", method="skip")])],
                      sliders=[dict(steps=[dict(label="s", method="skip")])])
    spec = fig.to_dict()
    assert json.loads(pio.to_json(presenter_spec(spec))) == json.loads(pio.to_json(_old_presenter_path(spec)))
    scene = go.Figure(go.Scatter3d(x=[1], y=[2], z=[3], marker=dict(color=[1], colorbar=dict(title="v")))).to_dict()
    assert json.loads(pio.to_json(presenter_spec(scene))) == json.loads(pio.to_json(_old_presenter_path(scene)))


def test_show_plotly_in_presenter_mode_builds_no_figure():
    def script():
        import numpy as np
        import plotly.basedatatypes
        import streamlit as st

        from charts.matrix import attention_heatmap
        from ui.display import show_plotly
        from ui.figures import figure_spec

        st.session_state.presenter = True
        spec = figure_spec(attention_heatmap, np.eye(3), ["a", "b", "c"], title="t")
        built = []
        original = plotly.basedatatypes.BaseFigure.__init__

        def counting(self, *args, **kwargs):
            built.append(type(self).__name__)
            original(self, *args, **kwargs)

        plotly.basedatatypes.BaseFigure.__init__ = counting
        try:
            show_plotly(spec, key="p")
        finally:
            plotly.basedatatypes.BaseFigure.__init__ = original
        st.session_state["built"] = built

    at = AppTest.from_function(script, default_timeout=60)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state["built"] == []
    sent = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert sent["layout"]["font"]["size"] == 20 and sent["data"][0]["textfont"]["size"] == 14


def test_no_page_writes_into_a_shared_figure_dict(monkeypatch):
    """The figure cache hands every session the same dict (st.cache_resource): after every page ran in every mode
    (presenter on, a phone's touch variant), each dict any page got is still exactly what it was when built."""
    import ui.display
    import ui.figures as figures
    from tests.apptest_utils import run_page
    from tests.pages import PAGES

    handed_out = []
    original = figures._figure_dict

    def recording(*args, **kwargs):
        spec = original(*args, **kwargs)
        handed_out.append((spec, json.dumps(spec, sort_keys=True, cls=PlotlyJSONEncoder)))
        return spec

    monkeypatch.setattr(figures, "_figure_dict", recording)
    for page in PAGES:
        run_page(page.file)
    monkeypatch.setattr(ui.display, "on_touch_device", lambda: True)
    for page in PAGES:
        at = run_page(page.file, query={"presenter": "true"})
        at.run()
    assert len(handed_out) >= 30
    for spec, built in handed_out:
        assert json.dumps(spec, sort_keys=True, cls=PlotlyJSONEncoder) == built
