"""Shared look: colour-blind-safe scales readable on light and dark themes, fonts, margins, upright Japanese titles."""

import re

SEQUENTIAL = "Viridis"  # perceptually uniform, colour-blind safe
DIVERGING = "RdBu"
MASKED_GREY = "rgba(128,128,128,0.35)"
ACCENT = "#E69F00"  # Okabe-Ito orange, for the selected/highlighted thing
SECOND = "#0072B2"  # Okabe-Ito blue
THIRD = "#009E73"  # Okabe-Ito green
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]


def base_layout(title: str | None = None, height: int = 420) -> dict:
    """The layout every figure starts from."""
    return dict(
        title=dict(text=title) if title else None,
        height=height,
        margin=dict(l=60, r=20, t=50 if title else 20, b=60),
        font=dict(size=14),
    )


def text_width_px(text: str, size: float = 14) -> float:
    """An upper estimate of the width in px of ``text`` at font ``size`` (wide East Asian characters count double)."""
    import unicodedata

    return sum(size * (1.0 if unicodedata.east_asian_width(ch) in "WF" else 0.62) for ch in str(text))


_JAPANESE = re.compile("[\u3040-\u30ff\u3400-\u9fff]")
_Y_AXIS = re.compile(r"yaxis(\d*)")


def upright_y_titles(spec: dict) -> dict:
    """A figure dict whose Japanese y-axis titles read upright: Plotly turns a y-axis title by 90°, and 「正答率」 turned
    sideways is read with a tilted head. Each such title becomes a horizontal label above its axis, starting at
    it (a long one never runs off the chart's left edge); other titles, and figures without one, stay as they are (the dict itself is returned, not a copy)."""
    layout = spec.get("layout") or {}
    labels, changed = [], {}
    for name, axis in layout.items():
        match = _Y_AXIS.fullmatch(name)
        title = axis.get("title") if match and isinstance(axis, dict) else None
        text = title.get("text") if isinstance(title, dict) else title
        if not isinstance(text, str) or not _JAPANESE.search(text):
            continue
        anchor = axis.get("anchor") or f"x{match.group(1)}"
        changed[name] = {**axis, "title": {"text": ""}}
        # right-aligned to the axis, in the left margin, when it fits there at a projector's 20 px (clear of a
        # panel title at the plot's top left); else starting at the axis, so it never runs off the chart's edge
        fits = text_width_px(text, 20) <= (layout.get("margin") or {}).get("l", 80) - 4
        labels.append(dict(text=text, showarrow=False, xref=f"{anchor} domain" if anchor != "free" else "paper",
                           yref=f"y{match.group(1)} domain", x=0, y=1, xanchor="right" if fits else "left",
                           yanchor="bottom", yshift=4,
                           font=(title.get("font") if isinstance(title, dict) else None) or {}))
    if not labels:
        return spec
    # The label gets a line of its own above the plot, under the chart's title. Plotly centres a title in the top
    # margin, so the margin grows by twice what the title and the label need, with room for a projector's 20-px fonts
    # (ui.shared.display.presenter_spec): neither covers the other there either.
    title = layout.get("title")
    text = title.get("text") if isinstance(title, dict) else title
    lines = str(text).count("<br>") + 1 if text else 0
    margin = dict(layout.get("margin") or {})
    before = margin.get("t", 80)
    margin["t"] = max(before, 2 * (TITLE_LINE * lines + LABEL_LINE) if lines else LABEL_LINE + 8)
    if layout.get("height"):  # the plot keeps its size (a token per row stays as tall as it was)
        changed["height"] = layout["height"] + margin["t"] - before
    return {**spec, "layout": {**layout, **changed, "margin": margin,
                               "annotations": [*layout.get("annotations", ()), *labels]}}


TITLE_LINE, LABEL_LINE = 26, 30  # px: a line of a 20-px title, the label's line


PHONE_TITLE_PX = 330  # a 390-px phone's chart is ~358 px wide and Plotly starts its title a few px in
PHONE_PLOT_PX = 290  # the plot area of that 358-px chart, less the axis labels and margins
TITLE_FONT_PX = 17  # Plotly's title font: 1.2x the layout's 14 px
TITLE_LINE_PX = 22  # the height of one more line of a 17-px title


def _title_width_px(text: str, size: float) -> float:
    """The width in px of a line of title text: a wide (Japanese) character is ``size`` wide, others about half of it
    (text_width_px's 0.62 is an upper bound, which broke most English titles into three lines where two fit)."""
    import unicodedata

    return sum(size * (1.0 if unicodedata.east_asian_width(ch) in "WF" else 0.52) for ch in text)


def wrap_text(text: str, width_px: float, size: float = TITLE_FONT_PX) -> str:
    """A title -> the same words with "<br>" where a line would pass ``width_px`` (estimated at font ``size``):
    breaks between words, or between any two characters of Japanese (which has no spaces); existing breaks are kept."""
    lines = []
    for part in str(text).split("<br>"):
        pieces = re.findall(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]|[^\s\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]+\s*|\s+",
                            part)
        line = ""
        for piece in pieces:
            if line.strip() and _title_width_px((line + piece).rstrip(), size) > width_px:
                lines.append(line.rstrip())
                line = piece.lstrip()
            else:
                line += piece
        lines.append(line.rstrip())
    return "<br>".join(lines)


def narrow_titles(spec: dict, width_px: float = PHONE_TITLE_PX) -> dict:
    """A figure dict -> the same figure whose title wraps into lines that fit ``width_px`` (a phone: Plotly never wraps a
    title, so a long one was cut mid-word at the chart's right edge); the top margin and the height grow by the added
    lines, so the plot keeps its size. The input is not changed; a figure whose title fits is returned as it is."""
    layout = spec.get("layout") or {}
    title = layout.get("title")
    text = title.get("text") if isinstance(title, dict) else title
    if not isinstance(text, str) or not text:
        return spec
    size = ((title.get("font") or {}).get("size") if isinstance(title, dict) else None) or TITLE_FONT_PX
    wrapped = wrap_text(text, width_px, size)
    added = wrapped.count("<br>") - text.count("<br>")
    if not added:
        return spec
    margin = dict(layout.get("margin") or {})
    margin["t"] = margin.get("t", 50) + TITLE_LINE_PX * added
    changed = {"title": {**(title if isinstance(title, dict) else {}), "text": wrapped}, "margin": margin}
    if layout.get("height"):
        changed["height"] = layout["height"] + TITLE_LINE_PX * added
    return {**spec, "layout": {**layout, **changed}}

# A legend under the plot hangs down from its top: Plotly anchors a legend below the plot by its bottom, so on a phone,
# where its items wrap into rows, the legend grew upwards over the x axis's title and tick labels.
LEGEND_BELOW = {"orientation": "h", "yanchor": "top", "y": -0.3, "x": 0}
UNIFORM_TEXT = {"minsize": 10, "mode": "hide"}  # a bar's value never shrinks below 10 px to fit: it is left out
