"""ui.shared.figures (figure dicts built once, cached) and ui.shared.display.show_plotly: the builder's dict reaches the browser as it
is, presenter mode and a phone get their variant of it, and no page writes into a shared dict."""

import copy
import json

import numpy as np
from plotly.utils import PlotlyJSONEncoder
from streamlit.testing.v1 import AppTest

from charts.matrix import attention_heatmap


def _sent_script():
    """Shows a heat map and an animation from the figure cache."""
    import numpy as np
    import streamlit as st

    from charts.causal import generation_animation
    from charts.matrix import attention_heatmap
    from ui.shared.display import show_plotly
    from ui.shared.figures import figure_spec

    weights = np.array([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.2, 0.3, 0.5]])
    frames = np.array([np.where(np.arange(3)[:, None] < k, weights, np.nan) for k in (1, 2, 3)])
    st.session_state.presenter = st.query_params.get("presenter") == "1"
    show_plotly(figure_spec(attention_heatmap, weights, ["a", "b", "c"], title="t", highlight_row=1), key="heat")
    show_plotly(figure_spec(generation_animation, frames, ["a", "b", "c"], 2, title="g"), key="anim")


def _sent(presenter: bool) -> list[dict]:
    at = AppTest.from_function(_sent_script, default_timeout=60)
    if presenter:
        at.query_params["presenter"] = "1"
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _as_json(spec: dict) -> dict:
    return json.loads(json.dumps(spec, cls=PlotlyJSONEncoder))


def _built():
    import streamlit  # noqa: F401 - the app's default template

    from charts.causal import generation_animation

    weights = np.array([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.2, 0.3, 0.5]])
    frames = np.array([np.where(np.arange(3)[:, None] < k, weights, np.nan) for k in (1, 2, 3)])
    return (attention_heatmap(weights, ["a", "b", "c"], title="t", highlight_row=1),
            generation_animation(frames, ["a", "b", "c"], 2, title="g"))


def test_the_browser_gets_the_builders_dict_as_it_is():
    heat, anim = _sent(presenter=False)
    built_heat, built_anim = _built()
    assert heat == _as_json(built_heat) and anim == _as_json(built_anim) and len(anim["frames"]) == 3
    assert heat["layout"]["template"]["layout"], "the Streamlit theme template is there (the frontend fills it in)"


def test_presenter_mode_sends_the_presenter_variant():
    from ui.shared.display import presenter_spec

    heat, anim = _sent(presenter=True)
    built_heat, built_anim = _built()
    assert heat == _as_json(presenter_spec(built_heat)) and anim == _as_json(presenter_spec(built_anim))
    assert heat["layout"]["font"]["size"] == 20
    assert heat["layout"]["height"] == int(built_heat["layout"]["height"] * 1.2)


def test_figure_spec_builds_once_per_distinct_arguments():
    calls = []

    def counting_builder(weights, labels, title=None):
        calls.append(title)
        return attention_heatmap(weights, labels, title=title)

    def script():
        import numpy as np
        import streamlit as st

        from ui.shared.figures import figure_spec

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


def test_figure_spec_is_the_builders_dict():
    from ui.shared.figures import _figure_dict, figure_spec

    _figure_dict.clear()
    w = np.array([[0.5, 0.5], [0.1, 0.9]])
    spec = figure_spec(attention_heatmap, w, ["p", "q"], title="x")  # outside a script run: the cache still works
    assert spec == attention_heatmap(w, ["p", "q"], title="x")


def test_equal_values_build_once_and_different_values_again():
    calls = []

    def builder(weights, rows, cols, title=None):
        calls.append(title)
        return attention_heatmap(weights, rows, cols, title=title)

    from ui.shared.figures import figure_spec

    w = np.arange(4.0).reshape(2, 2) / 6
    first = figure_spec(builder, w, ["a", "b"], ["c", "d"], title="t")
    again = figure_spec(builder, w.copy(), list(("a", "b")), ["c", "d"], title="t")  # equal copies: a cache hit
    assert calls == ["t"] and again is first
    for changed in ((w + 1e-12, ["a", "b"], ["c", "d"]), (w.astype(np.float32), ["a", "b"], ["c", "d"]),
                    (w, ["a", "b"], ["c", "e"]), (w.T, ["a", "b"], ["c", "d"])):
        figure_spec(builder, *changed, title="t")
    figure_spec(builder, w, ["a", "b"], ["c", "d"], title="u")
    assert calls == ["t"] * 5 + ["u"]


# --- presenter mode and a phone: transforms of the shared dict ------------------------------------------------------

def _fonts(spec: dict) -> dict:
    """Every font size a presenter variant sets, by where it is."""
    layout = spec["layout"]
    found = {"layout": layout["font"]["size"], "legend": layout["legend"]["font"]["size"],
             "hover": layout["hoverlabel"]["font"]["size"]}
    for name, axis in layout.items():
        if name.startswith(("xaxis", "yaxis")):
            found[name] = (axis["tickfont"]["size"], axis["title"]["font"]["size"])
        if name.startswith("scene"):
            found[name] = [(axis["tickfont"]["size"], axis["title"]["font"]["size"]) for axis in
                           (layout[name]["xaxis"], layout[name]["yaxis"], layout[name]["zaxis"])]
    for group in ("annotations", "updatemenus", "sliders"):
        found[group] = [item["font"]["size"] for item in layout.get(group, ())]
    for i, trace in enumerate(spec["data"]):
        bar = trace.get("colorbar") or trace.get("marker", {}).get("colorbar")
        found[f"trace {i}"] = (trace["textfont"]["size"], bar and (bar["tickfont"]["size"], bar["title"]["font"]["size"]))
    return found


def test_presenter_spec_enlarges_every_text_of_subplots_scenes_menus_and_colour_bars():
    import streamlit  # noqa: F401

    from charts.glove import attention_cloud_3d
    from charts.scaling import weights_animation
    from ui.shared.display import presenter_spec

    heat, anim = _built()
    panels = weights_animation([8, 64], np.full((2, 3), 1 / 3), np.full((2, 3), 1 / 3), list("abc"), ("u", "s"), "w",
                               "▶", "❚❚")
    cloud = attention_cloud_3d(np.eye(3), list("abc"), [0.2, 0.3, 0.5], 1, title="c")
    for spec in (heat, anim, panels, cloud):
        before = copy.deepcopy(spec)
        big = presenter_spec(spec)
        assert spec == before, "the shared dict is not changed"
        assert big["layout"]["height"] == int(spec["layout"]["height"] * 1.2)
        assert big["data"][0].get("z") is spec["data"][0].get("z")  # arrays are shared, not copied
    fonts = _fonts(presenter_spec(heat))
    assert fonts["layout"] == fonts["legend"] == fonts["hover"] == 20
    assert fonts["xaxis"] == fonts["yaxis"] == (18, 20) and fonts["trace 0"] == (14, (20, 20))  # cells keep 14 px
    assert presenter_spec(heat)["layout"]["margin"]["t"] == heat["layout"]["margin"]["t"] + 16  # room for the title
    fonts = _fonts(presenter_spec(anim))
    assert fonts["updatemenus"] == fonts["sliders"] == [20] and fonts["trace 1"] == (18, None)
    fonts = _fonts(presenter_spec(panels))
    assert fonts["xaxis2"] == fonts["yaxis2"] == (18, 20) and fonts["annotations"] == [20, 20]
    fonts = _fonts(presenter_spec(cloud))
    assert fonts["scene"] == [(18, 20)] * 3 and fonts[f"trace {len(cloud['data']) - 2}"] == (18, (20, 20))


def test_touch_spec_fixes_every_axis_and_drag():
    from charts.glove import attention_cloud_3d
    from charts.scaling import weights_animation
    from ui.shared.display import touch_spec

    panels = weights_animation([8], np.full((1, 2), 0.5), np.full((1, 2), 0.5), list("ab"), ("u", "s"), "w", "▶", "❚❚")
    cloud = attention_cloud_3d(np.eye(3), list("abc"), [0.2, 0.3, 0.5], 1)
    touched = touch_spec(panels)
    assert touched["layout"]["dragmode"] is False and "dragmode" not in panels["layout"]
    assert all(touched["layout"][a]["fixedrange"] is True for a in ("xaxis", "yaxis", "xaxis2", "yaxis2"))
    assert touch_spec(cloud)["layout"]["scene"]["dragmode"] is False


def test_show_plotly_in_presenter_mode_builds_no_figure():
    def script():
        import numpy as np
        import plotly.basedatatypes
        import streamlit as st

        from charts.matrix import attention_heatmap
        from ui.shared.display import show_plotly
        from ui.shared.figures import figure_spec

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
    import ui.shared.display
    import ui.shared.figures as figures
    from tests.apptest_utils import open_page
    from tests.pages import PAGES

    handed_out = []
    original = figures._figure_dict

    def recording(*args, **kwargs):
        spec = original(*args, **kwargs)
        handed_out.append((spec, json.dumps(spec, sort_keys=True, cls=PlotlyJSONEncoder)))
        return spec

    monkeypatch.setattr(figures, "_figure_dict", recording)
    for page in PAGES:
        open_page(page.section)
    monkeypatch.setattr(ui.shared.display, "on_touch_device", lambda: True)
    for page in PAGES:
        at = open_page(page.section, query={"presenter": "true"})
        at.run()
    assert len(handed_out) >= 30
    for spec, built in handed_out:
        assert json.dumps(spec, sort_keys=True, cls=PlotlyJSONEncoder) == built
