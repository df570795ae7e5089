"""How a figure and the page's style reach the screen: st.plotly_chart without validating a figure again, presenter
mode (its CSS, and projector-sized figures as a pure transform of the cached dict) and a phone's touch variant.
"""

from __future__ import annotations

import re

import streamlit as st

PLOTLY_CONFIG = {
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


PRESENTER_FONT_SIZE = 20


PAGE_STYLE = """
    .stApp .katex-display { overflow-x: auto; overflow-y: hidden; max-width: 100%; }
    @media (max-width: 640px) { .stApp .katex-display .katex { font-size: 1em; } }
"""


def page_style() -> str:
    """CSS for every page: a formula wider than a phone's screen scrolls sideways instead of being cut at the edge."""
    return f"<style>{PAGE_STYLE}</style>"


def presenter_style() -> str:
    """CSS for presenter mode: everything a class reads is larger than in normal mode, and no label is cut short.

    Streamlit truncates labels with an ellipsis (widget labels, metrics, toggles, buttons, sidebar links): here they
    wrap instead. Rules name the innermost element that carries the font size, because Streamlit writes a metric's
    value and a widget's label as a Markdown paragraph (a general paragraph rule would otherwise win: issue 13 saw
    metric values drop from 36 px to 20.8 px). Canvas tables (st.dataframe) are zoomed. Theme colours are untouched.
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
    </style>"""


def presenter_fonts(fig, size: int = PRESENTER_FONT_SIZE) -> None:
    """Projector-sized text everywhere in a figure: Streamlit's theme sets tick, legend and colour-bar fonts
    of its own, so the layout's font size alone leaves them small."""
    tick = size - 2  # 1.2x a normal 14 px tick; tokens along an axis need the room
    fig.update_layout(title_font_size=size - 2, legend_font_size=size, hoverlabel_font_size=size)
    if fig.layout.title.text:
        fig.update_layout(margin_t=(fig.layout.margin.t or 50) + 16)
    fig.update_xaxes(tickfont_size=tick, title_font_size=size)
    fig.update_yaxes(tickfont_size=tick, title_font_size=size)
    fig.update_scenes(**{f"{axis}_{part}_size": font for axis in ("xaxis", "yaxis", "zaxis")
                         for part, font in (("tickfont", tick), ("title_font", size))})
    fig.update_annotations(font_size=size)
    for menu in (*fig.layout.updatemenus, *fig.layout.sliders):
        menu.font.size = size
    for trace in fig.data:
        for holder in (trace, getattr(trace, "marker", None)):
            if holder is not None and "colorbar" in holder and holder.to_plotly_json().get("colorbar"):
                holder.colorbar.tickfont.size = size
                holder.colorbar.title.font.size = size
        if "textfont" in trace:  # numbers written in heat-map cells keep their size: the cells do not grow
            trace.textfont.size = 14 if trace.type == "heatmap" else tick


def _trace_props(trace_type: str) -> tuple[bool, bool, bool]:
    """(has textfont, has colorbar, its marker has colorbar) for a trace type, from Plotly's class tables (no figure)."""
    return _TRACE_PROPS.get(trace_type) or _TRACE_PROPS.setdefault(trace_type, _read_trace_props(trace_type))


def _read_trace_props(trace_type: str) -> tuple[bool, bool, bool]:
    import importlib

    import plotly.graph_objects as go

    cls = getattr(go, trace_type[:1].upper() + trace_type[1:], None)
    if cls is None:
        cls = next((c for name, c in vars(go).items() if name.lower() == trace_type.lower() and hasattr(c, "_valid_props")),
                   None)
    props = getattr(cls, "_valid_props", set())
    marker = getattr(importlib.import_module(f"plotly.graph_objs.{trace_type}"), "Marker", None) if "marker" in props else None
    return "textfont" in props, "colorbar" in props, "colorbar" in getattr(marker, "_valid_props", set())


_TRACE_PROPS: dict[str, tuple[bool, bool, bool]] = {}
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
    """A figure dict (fig.to_dict()) -> its presenter variant: the same dict transform presenter mode did on a go.Figure
    (layout font ``size``, 1.2x height, then ``presenter_fonts``), without building one (~0.1 ms instead of ~20 ms).

    The input is not changed: every container on the way to a changed value is copied (arrays are shared).
    tests/test_figures.py checks the result equals the go.Figure path's for every figure of every page.
    """
    tick = size - 2  # as presenter_fonts
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
        has_text, has_bar, marker_bar = _trace_props(trace.get("type", "scatter"))
        for holder, ok in ((trace, has_bar), (trace.get("marker"), marker_bar)):
            if ok and holder and holder.get("colorbar"):
                if holder is not trace:
                    holder = trace["marker"] = dict(holder)
                bar = holder["colorbar"] = dict(holder["colorbar"])
                _sized(bar, "tickfont", size)
                _with_title_font(bar, size)
        if has_text:
            _sized(trace, "textfont", 14 if trace.get("type") == "heatmap" else tick)
        data.append(trace)
    return {**spec, "data": data, "layout": layout}


def show_plotly(fig, key: str, **kwargs):
    """st.plotly_chart with the app's export config (PNG/SVG); bigger fonts in presenter mode; kwargs pass through.

    ``fig`` is a go.Figure or its dict (``fig.to_dict()``, e.g. from ui.figures.figure_spec). A dict was validated
    when its figure was built, so it is sent as it is (st.plotly_chart would rebuild it as a go.Figure with full
    validation: 10-30 ms per figure instead of ~0.5). Presenter mode is a pure transform of the dict
    (``presenter_spec``): no figure is rebuilt, so a presenter rerun costs about what a normal one does.
    """
    from ui.figures import prebuilt

    spec = fig if isinstance(fig, dict) else fig.to_dict()
    if st.session_state.get("presenter", False):
        spec = presenter_spec(spec)
    image_format = st.session_state.get("export_format", "png")
    config = {**PLOTLY_CONFIG, "toImageButtonOptions": {"format": image_format, "filename": key, "scale": 2}}
    if on_touch_device():
        spec = touch_spec(spec)
        config["displayModeBar"] = False  # on a phone the toolbar covered the chart titles
        # Streamlit turns a selectable chart's drag mode back to "pan", and Plotly.js then keeps every swipe over it
        # from scrolling the page: on a phone the chart is shown without selection (the page's own picker remains).
        kwargs.pop("on_select", None)
        kwargs.pop("selection_mode", None)
    return st.plotly_chart(prebuilt(spec), key=key, config=config, **kwargs)


_TOUCH_AGENTS = ("Mobi", "Android", "iPhone", "iPad")


def on_touch_device() -> bool:
    """True for a phone or tablet browser (its User-Agent), where a swipe over a chart must scroll the page."""
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
    return {**spec, "layout": layout}
