"""How a figure and the page's style reach the screen: st.plotly_chart of a figure dict, presenter mode (its CSS, and
projector-sized figures as a pure transform of the cached dict) and a phone's touch variant.
"""

from __future__ import annotations

import re

import streamlit as st

from ui.shared.streamlit_compat import SentAsIs

from charts.style import narrow_titles, upright_y_titles

PLOTLY_CONFIG = {
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


PRESENTER_FONT_SIZE = 20


PAGE_STYLE = """
    .stApp .katex-display { overflow-x: auto; overflow-y: hidden; max-width: 100%; }
    @media (max-width: 640px) { .stApp .katex-display .katex { font-size: 1em; } }
    @media (max-width: 640px) { .stApp .js-plotly-plot .heatmaplayer text { font-size: 10px !important; } }
"""


def page_style() -> str:
    """CSS for every page: a formula wider than a phone's screen scrolls sideways instead of being cut at the edge, and
    on a phone the numbers in a heat map's cells are smaller (lesson 9's 9-column induction map: "0.04" ran into the
    next cell's number at 13 px in 30 px cells)."""
    return f"<style>{PAGE_STYLE}</style>"


def presenter_style() -> str:
    """CSS for presenter mode: everything a class reads is larger than in normal mode, and no label is cut short.

    Streamlit truncates labels with an ellipsis (widget labels, metrics, toggles, buttons, sidebar links): here they
    wrap instead. Rules name the innermost element that carries the font size, because Streamlit writes a metric's
    value and a widget's label as a Markdown paragraph (a general paragraph rule would otherwise win). Canvas tables
    (st.dataframe) are zoomed, inside a frame of 1 / 1.25 of the column: Streamlit sizes the grid to that frame, so
    the zoomed grid fills the column instead of running past its right edge. Theme colours are untouched.
    tests/browser/test_projector.py measures the computed sizes and looks for clipped labels on every page.
    """
    return "<style>" + PAGE_STYLE + """
    .stApp { font-size: 1.3rem; }
    .stApp [data-testid="stMarkdownContainer"] p, .stApp [data-testid="stMarkdownContainer"] li { font-size: 1.3rem; }
    .stApp h1 { font-size: 3.6rem; }
    .stApp h2, .stApp h3 { font-size: 2rem; }
    .stApp .katex { font-size: 1.35em; }
    .stApp .katex-display { overflow-x: auto; overflow-y: hidden; }
    .stApp [data-testid="stWidgetLabel"] p, .stApp [data-testid="stWidgetLabel"] [data-testid="stMarkdownContainer"] p,
    .stApp [data-testid="stCheckbox"] [data-testid="stMarkdownContainer"] p,
    .stApp [data-testid="stRadio"] [data-testid="stMarkdownContainer"] p,
    .stApp button [data-testid="stMarkdownContainer"] p, .stApp button p { font-size: 1.2rem; }
    .stApp [data-testid="stCaptionContainer"], .stApp [data-testid="stCaptionContainer"] p { font-size: 1.15rem; }
    .stApp [data-testid="stMetricLabel"], .stApp [data-testid="stMetricLabel"] p,
    .stApp [data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"] p { font-size: 1.2rem; }
    .stApp [data-testid="stMetricValue"], .stApp [data-testid="stMetricValue"] *,
    .stApp [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p { font-size: 2.8rem; line-height: 1.2; }
    .stApp [data-testid="stMetricDelta"], .stApp [data-testid="stMetricDelta"] * { font-size: 1.2rem; }
    .stApp [data-testid="stSelectbox"] input, .stApp [data-testid="stMultiSelect"] input,
    .stApp [data-testid="stTextInput"] input, .stApp [data-testid="stTextArea"] textarea,
    .stApp [data-testid="stNumberInput"] input, [role="listbox"] [role="option"],
    [role="listbox"] [role="option"] * { font-size: 1.2rem; }
    .stApp [data-testid="stSliderThumbValue"], .stApp [data-testid="stSliderTickBarMin"],
    .stApp [data-testid="stSliderTickBarMax"] { font-size: 1.1rem; }
    .stApp [data-testid="stTable"] th, .stApp [data-testid="stTable"] td { font-size: 1.2rem; }
    .stApp [data-testid="stDataFrame"] { zoom: 1.25; }
    .stApp [data-testid="stElementContainer"]:has(> [data-testid="stFullScreenFrame"] > [data-testid="stDataFrame"]) {
      width: 80% !important; }
    .stApp [data-testid="stAlertContainer"] p { font-size: 1.3rem; }
    [data-testid="stSidebarNavLink"] span, [data-testid="stSidebar"] [data-testid="stMarkdownContainer"] p { font-size: 1.15rem; }
    /* wrap, never "...": widget and metric labels, metric values, toggles, buttons, tabs, sidebar links */
    .stApp [data-testid="stWidgetLabel"], .stApp [data-testid="stWidgetLabel"] div,
    .stApp [data-testid="stWidgetLabel"] p, .stApp [data-testid="stWidgetLabel"] span:not([data-testid]),
    .stApp [data-testid="stMetricLabel"], .stApp [data-testid="stMetricLabel"] div, .stApp [data-testid="stMetricLabel"] p,
    .stApp [data-testid="stMetricValue"], .stApp [data-testid="stMetricValue"] div, .stApp [data-testid="stMetricValue"] p,
    .stApp button [data-testid="stMarkdownContainer"], .stApp button p, .stApp [data-testid="stTab"] p,
    [data-testid="stSidebarNavLink"] span {
      white-space: normal !important; text-overflow: clip !important; overflow: visible !important;
      overflow-wrap: anywhere;
    }
    /* a sidebar link's label sits in a one-line Markdown box inside a flex item that would not shrink below it: the
       Japanese "8 · 学習済みモデルの中をのぞく" ran past the sidebar's edge and was cut there */
    [data-testid="stSidebarNavLink"] span, [data-testid="stSidebarNavLink"] [data-testid="stMarkdownContainer"] {
      min-width: 0 !important; }
    [data-testid="stSidebarNavLink"] [data-testid="stMarkdownContainer"], [data-testid="stSidebarNavLink"] p {
      white-space: normal !important; text-overflow: clip !important; overflow: visible !important;
      overflow-wrap: anywhere; }
    [data-testid="stSidebarNavLink"] { height: auto !important; min-height: 2rem; }
    </style>"""


# The trace types the charts draw, all of which have a textfont (a colour bar is sized where a trace has one).
_TEXT_TRACES = frozenset({"bar", "heatmap", "scatter", "scatter3d"})
_AXIS_KEY = re.compile(r"^(xaxis|yaxis|scene)\d*$")


def _sized(holder: dict, name: str, size: int) -> dict:
    """holder[name] (a dict, copied) with font.size = size, stored back into holder; returns it."""
    part = dict(holder.get(name) or {})
    part["size"] = size
    holder[name] = part
    return part


def _with_title_font(holder: dict, size: int) -> None:
    """holder["title"]["font"]["size"] = size (copies on the way; a bare string title stays its text)."""
    title = holder.get("title")
    title = {"text": title} if isinstance(title, str) else dict(title or {})
    _sized(title, "font", size)
    holder["title"] = title


def presenter_spec(spec: dict, size: int = PRESENTER_FONT_SIZE) -> dict:
    """A figure dict -> its presenter variant: projector-sized text everywhere (layout, title, legend, hover, axes and
    3-D scenes, annotations, menus, colour bars, trace text) and 1.2x the height. Streamlit's theme sets tick, legend
    and colour-bar fonts of its own, so the layout's font size alone would leave them small.

    The input is not changed: every container on the way to a changed value is copied (arrays are shared).
    """
    tick = size - 2  # 1.2x a normal 14 px tick; tokens along an axis need the room
    layout = dict(spec.get("layout") or {})
    _sized(layout, "font", size)
    if layout.get("height"):
        layout["height"] = int(layout["height"] * 1.2)
    _with_title_font(layout, size - 2)
    legend = layout["legend"] = dict(layout.get("legend") or {})
    _sized(legend, "font", size)
    hover = layout["hoverlabel"] = dict(layout.get("hoverlabel") or {})
    _sized(hover, "font", size)
    if layout["title"].get("text"):
        margin = layout["margin"] = dict(layout.get("margin") or {})
        margin["t"] = (margin.get("t") or 50) + 16
    axes = {"xaxis", "yaxis", "scene"} | {k for k in layout if _AXIS_KEY.match(k) and layout[k] is not None}
    for name in sorted(axes):
        if name.startswith("scene"):
            scene = layout[name] = dict(layout.get(name) or {})
            for axis_name in ("xaxis", "yaxis", "zaxis"):
                axis = scene[axis_name] = dict(scene.get(axis_name) or {})
                _sized(axis, "tickfont", tick)
                _with_title_font(axis, size)
        else:
            axis = layout[name] = dict(layout.get(name) or {})
            _sized(axis, "tickfont", tick)
            _with_title_font(axis, size)
    for group in ("annotations", "updatemenus", "sliders"):
        if layout.get(group):
            items = layout[group] = [dict(item) for item in layout[group]]
            for item in items:
                _sized(item, "font", size)
    data = []
    for trace in spec.get("data") or ():
        trace = dict(trace)
        for holder in (trace, trace.get("marker")):
            if holder and holder.get("colorbar"):
                if holder is not trace:
                    holder = trace["marker"] = dict(holder)
                bar = holder["colorbar"] = dict(holder["colorbar"])
                _sized(bar, "tickfont", size)
                _with_title_font(bar, size)
        if trace.get("type", "scatter") in _TEXT_TRACES:  # numbers in heat-map cells keep their size: cells do not grow
            _sized(trace, "textfont", 14 if trace.get("type") == "heatmap" else tick)
        data.append(trace)
    return {**spec, "data": data, "layout": layout}


def show_plotly(fig: dict, key: str, **kwargs):
    """st.plotly_chart of a figure dict (a chart builder's, e.g. from ui.shared.figures.figure_spec) with the app's export
    config (PNG/SVG); presenter mode and a phone get their variant of the dict (``presenter_spec``, ``touch_spec``:
    no figure is rebuilt); kwargs pass through."""
    spec = upright_y_titles(fig)  # (Japanese y-axis titles, turned 90° by Plotly, read sideways)
    if st.session_state.get("presenter", False):
        spec = presenter_spec(spec)
    image_format = st.session_state.get("export_format", "png")
    config = {**PLOTLY_CONFIG, "toImageButtonOptions": {"format": image_format, "filename": key, "scale": 2}}
    if on_touch_device():
        spec = touch_spec(spec)
        config["displayModeBar"] = False  # on a phone the toolbar covered the chart titles
        # Streamlit 1.67 gives a selectable chart without a drag mode the drag mode "pan", and Plotly.js cancels the
        # touch of any drag mode but none, so a chart that takes taps keeps every swipe over it from scrolling the
        # page: on a phone the chart is shown without selection, with a line above it that the picker is the way.
        if kwargs.pop("on_select", None) is not None:  # (a tap cannot select without a drag mode: say so, here)
            from ui.shared.common import translator

            st.caption(translator()("common.tap_picker"))
        kwargs.pop("selection_mode", None)
    return st.plotly_chart(SentAsIs(spec), key=key, config=config, **kwargs)


def model_view_px(heads: int, tokens: int) -> dict[str, int]:
    """The model view's sizes on this screen -> charts.model_view.model_view's ``map_px`` and ``label_px``: a phone's
    maps fit its width (no sideways scroll of the page), presenter mode's labels are projector-sized (those of its
    Plotly ticks)."""
    from charts.model_view import LABEL_PX, MAP_PX, fitting_map_px

    label_px = PRESENTER_FONT_SIZE - 2 if st.session_state.get("presenter", False) else LABEL_PX
    return {"map_px": fitting_map_px(heads, tokens, label_px) if on_touch_device() else MAP_PX, "label_px": label_px}


_TOUCH_AGENTS = ("Mobi", "Android", "iPhone", "iPad")
TOUCH_PROBE = "touch_probe"  # the session-state key of what the browser reported (touch_probe)
# What the browser can do, not what it calls itself: a primary pointer that is a finger. (iPad Safari sends a Mac's
# User-Agent, so the agent alone took an iPad for a computer and a swipe over a chart zoomed it.) The browser reports
# only when the page's belief (data.touch) is wrong: a computer and a phone cost no extra run, an iPad one.
_TOUCH_JS = """export default function(component) {
  const { setStateValue, data } = component;
  const touch = window.matchMedia('(pointer: coarse)').matches;
  if (touch !== data.touch) setStateValue('touch', touch);
}"""
_touch_component = None


def touch_probe() -> None:
    """Mount the invisible probe through which the browser reports whether its pointer is a finger (CSS media query
    ``(pointer: coarse)``); the frame calls it on every run, before the page. A report reruns the app once, and from
    then on ``on_touch_device`` answers with it."""
    global _touch_component
    if _touch_component is None:
        from streamlit.components.v2 import component

        _touch_component = component(TOUCH_PROBE, js=_TOUCH_JS)
    _touch_component(key=TOUCH_PROBE, data={"touch": on_touch_device()}, on_touch_change=lambda: None,
                     width=1, height=1)


def _reported_touch() -> bool | None:
    try:
        state = st.session_state.get(TOUCH_PROBE)
    except Exception:  # noqa: BLE001 - no session (bare mode)
        return None
    touch = state.get("touch") if hasattr(state, "get") else None
    return touch if isinstance(touch, bool) else None


def on_touch_device() -> bool:
    """True for a phone or tablet, where a swipe over a chart must scroll the page: what the browser reported
    (``touch_probe``: a coarse pointer, so also an iPad that calls itself a Mac), else, before it has (the session's
    first run; AppTests, which run no browser code), its User-Agent."""
    reported = _reported_touch()
    if reported is not None:
        return reported
    try:
        agent = st.context.headers.get("User-Agent", "") or ""
    except Exception:  # noqa: BLE001 - no request (bare mode, tests): not a phone
        return False
    return any(mark in agent for mark in _TOUCH_AGENTS)


def touch_spec(spec: dict) -> dict:
    """A figure dict -> the same figure with no drag action and fixed axes: a swipe scrolls the page, never zooms.

    Plotly.js turns a one-finger drag over a chart into a zoom box or a pan (and stops the page from scrolling); with
    ``dragmode=False`` and every cartesian axis ``fixedrange``, taps still hover and select. The input is not changed.
    """
    layout = dict(spec.get("layout") or {})
    layout["dragmode"] = False
    for name in {"xaxis", "yaxis"} | {k for k in layout if _AXIS_KEY.match(k) and not k.startswith("scene")}:
        axis = layout[name] = dict(layout.get(name) or {})
        axis["fixedrange"] = True
    for name in [k for k in layout if k.startswith("scene") and _AXIS_KEY.match(k)]:  # a 3-D cloud: no rotating
        layout[name] = {**(layout[name] or {}), "dragmode": False}
    return narrow_titles({**spec, "layout": layout})  # (a long title wraps: Plotly cut it at a phone's edge)
