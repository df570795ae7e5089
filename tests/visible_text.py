"""Every text a person can see on an AppTest page: headings, Markdown, widget labels/options/help, metrics,
table headers, and the titles, axis titles, legend names, annotations and hover texts inside Plotly figures."""

from __future__ import annotations

import io
import json

from google.protobuf.message import Message

# Proto fields that hold text shown on screen (ids, keys, form ids and the like are left out).
TEXT_FIELDS = {"body", "label", "help", "placeholder", "options", "caption", "delta", "value", "default_value",
               "icon_text", "title", "text", "tooltip", "format"}
SKIP_TYPES = {"latex", "plotly_chart", "arrow_data_frame", "dataframe", "html", "code", "empty", "exception"}


def _proto_texts(msg: Message, out: list[str]) -> None:
    for field, value in msg.ListFields():
        if field.message_type is not None:
            items = value if field.is_repeated else [value]
            for item in items:
                if isinstance(item, Message):
                    _proto_texts(item, out)
        elif field.name in TEXT_FIELDS:
            items = value if field.is_repeated else [value]
            out.extend(str(v) for v in items if isinstance(v, str) and v.strip())


def _figure_texts(fig: dict, out: list[str]) -> None:
    """Titles, axis titles, colour-bar titles, legend names, annotations, button/slider labels, hover templates."""
    layout = fig.get("layout", {})

    def title_of(obj):
        title = (obj or {}).get("title")
        if isinstance(title, dict):
            title = title.get("text")
        if isinstance(title, str) and title.strip():
            out.append(title)

    def walk_layout(obj):
        if isinstance(obj, dict):
            title_of(obj)
            for key, value in obj.items():
                if key in ("text", "label", "prefix", "suffix", "ticktext") and isinstance(value, str):
                    out.append(value)
                elif key == "ticktext" and isinstance(value, list):
                    out.extend(str(v) for v in value)
                elif key != "template":
                    walk_layout(value)
        elif isinstance(obj, list):
            for item in obj:
                walk_layout(item)

    walk_layout(layout)
    for frame in fig.get("frames", []) or []:
        walk_layout(frame.get("layout", {}))
    for trace in fig.get("data", []):
        if trace.get("showlegend") is not False and trace.get("name"):
            out.append(str(trace["name"]))
        for key in ("hovertemplate", "texttemplate"):
            if isinstance(trace.get(key), str):
                out.append(trace[key])
        title_of(trace.get("colorbar"))
        title_of((trace.get("marker") or {}).get("colorbar"))


def visible_texts(at) -> list[str]:
    """All visible texts of the page (main area and sidebar) after the last run."""
    out: list[str] = []
    for node in at._tree:
        kind = getattr(node, "type", "")
        proto = getattr(node, "proto", None)
        if kind == "plotly_chart":
            _figure_texts(json.loads(proto.spec), out)
        elif kind in ("arrow_data_frame", "dataframe"):
            try:
                out.extend(str(c) for c in node.value.columns)
            except Exception:  # an unreadable table only loses its headers here
                pass
        elif kind == "latex" or kind in SKIP_TYPES:
            continue
        elif isinstance(proto, Message):
            _proto_texts(proto, out)
    return out
