"""Widgets as the browser sees them: read from the element protos in the deltas, never from page code.

A `Widget` wraps one element proto (slider, number_input, selectbox, ...). It knows the value the
browser would report for it before anyone touches it (`initial_state`) and how to pick a new valid
value the way a student would (`propose`), both as `WidgetState` protos, the exact type Streamlit's
frontend sends in `ClientState.widget_states`. Wire formats follow the serdes in
streamlit/elements/widgets/*.py (1.67): sliders send `double_array_value`, select sliders and
pills send `string_array_value` of the formatted options, selectbox and radio send the formatted
option as `string_value`, number inputs send `double_value`, buttons a `trigger_value`.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field

from streamlit.proto.WidgetStates_pb2 import WidgetState

# A student of the class being measured does not start a class of their own (that is the teacher's, in
# bench/class_replicas.py): the class of 40 is measured out of class mode.
NOT_A_STUDENTS = {"class_start"}
# Element types that take part in a rerun when changed, and how we drive them.
SUPPORTED_KINDS = (
    "slider", "number_input", "selectbox", "radio", "checkbox", "text_input", "text_area",
    "multiselect", "button_group", "color_picker", "button", "pagination",
)
# Elements that are widgets we deliberately leave alone: chart selections and data editors need a
# pointer on a real canvas, uploads need files, and a download button does not change the page.
UNDRIVEN_KINDS = (
    "plotly_chart", "vega_lite_chart", "arrow_vega_lite_chart", "deck_gl_json_chart", "dataframe",
    "download_button", "file_uploader", "camera_input", "audio_input", "chat_input", "date_input",
    "time_input", "date_time_input", "feedback", "component_instance", "bidi_component", "menu_button",
    "echarts_chart", "link_button",
)
SIDEBAR_CONTAINER = 1  # delta_path[0]: 0 = main area, 1 = sidebar
MAX_TRIES = 12


@dataclass
class Widget:
    """One widget element of the last script run: its element type, proto and place on screen."""

    kind: str
    proto: object
    delta_path: tuple[int, ...] = field(default=())
    fragment_id: str = ""  # the @st.fragment it was drawn in ("" = the page itself): a change reruns only that

    @property
    def id(self) -> str:
        return self.proto.id

    @property
    def user_key(self) -> str:
        """The `key=` the page gave the widget (the part after the hash in its id), or ''."""
        parts = self.id.split("-", 2)  # "$$ID-<hash>-<user key>", the key is "None" when there is none
        return parts[2] if self.id.startswith("$$ID-") and len(parts) == 3 and parts[2] != "None" else ""

    @property
    def form_id(self) -> str:
        return getattr(self.proto, "form_id", "")

    @property
    def in_sidebar(self) -> bool:
        return bool(self.delta_path) and self.delta_path[0] == SIDEBAR_CONTAINER

    @property
    def drivable(self) -> bool:
        """True when a student can change it and the change reruns the script."""
        if self.kind not in SUPPORTED_KINDS or not self.id:
            return False
        if getattr(self.proto, "disabled", False) or getattr(self.proto, "ignore_rerun", False):
            return False
        if self.user_key in NOT_A_STUDENTS:
            return False
        if self.kind in ("text_input", "text_area"):  # a proposal reorders the words there: an empty box has none
            return self.proto.HasField("default") and bool(self.proto.default)
        return bool(_options(self)) if self.kind in ("selectbox", "radio", "multiselect", "button_group") else True

    @property
    def is_form_submitter(self) -> bool:
        return self.kind == "button" and self.proto.is_form_submitter

    def initial_state(self) -> WidgetState | None:
        """The WidgetState the browser reports for this widget before it is touched (None: reports nothing)."""
        init = _INITIAL.get(self.kind)
        return init(self) if init else None

    def propose(self, current: WidgetState | None, rng: random.Random) -> WidgetState | None:
        """A new valid value, different from `current` when the widget allows it (None: nothing to change)."""
        make = _PROPOSE.get(self.kind)
        if make is None:
            return None
        for _ in range(MAX_TRIES):
            new = make(self, current, rng)
            if new is None or current is None or new.SerializeToString() != current.SerializeToString():
                return new
        return new


def _state(widget: Widget, **value) -> WidgetState:
    return WidgetState(id=widget.id, **value)


def _options(widget: Widget) -> list[str]:
    if widget.kind == "button_group":
        return [opt.content for opt in widget.proto.options]
    return list(getattr(widget.proto, "options", []))


# --- initial states --------------------------------------------------------------------------------

def _init_slider(w: Widget) -> WidgetState:
    p = w.proto
    values = list(p.value) if p.set_value else list(p.default)
    if p.options:  # select_slider: formatted options, by index
        return _state(w, string_array_value={"data": [p.options[int(i)] for i in values]})
    return _state(w, double_array_value={"data": values})


def _empty(w: Widget) -> WidgetState:
    """A WidgetState with no value: what the frontend sends for a widget whose value is None (cleared).

    The frontend's widget manager sets e.g. ``stringValue = null``, which protobuf leaves out, so the
    server deserialises None. Sending the last value instead would be a change the user never made.
    """
    return WidgetState(id=w.id)


def _init_number(w: Widget) -> WidgetState | None:
    p = w.proto
    if p.set_value:  # the script set the value (session state): None arrives as a proto without `value`
        return _state(w, double_value=p.value) if p.HasField("value") else _empty(w)
    return _state(w, double_value=p.default) if p.HasField("default") else None


def _init_choice(w: Widget) -> WidgetState | None:
    p = w.proto
    if p.set_value:  # e.g. a callback set st.session_state[key] = None: no raw_value, and no default either
        return _state(w, string_value=p.raw_value) if p.HasField("raw_value") else _empty(w)
    if p.HasField("default") and 0 <= p.default < len(p.options):
        return _state(w, string_value=p.options[p.default])
    return None


def _init_checkbox(w: Widget) -> WidgetState:
    p = w.proto
    return _state(w, bool_value=p.value if p.set_value else p.default)


def _init_text(w: Widget) -> WidgetState | None:
    p = w.proto
    if p.set_value:
        return _state(w, string_value=p.value) if p.HasField("value") else _empty(w)
    return _state(w, string_value=p.default) if p.HasField("default") else None


def _init_multi(w: Widget) -> WidgetState:
    p, options = w.proto, _options(w)
    if p.set_value:
        return _state(w, string_array_value={"data": list(p.raw_values)})
    return _state(w, string_array_value={"data": [options[i] for i in p.default if i < len(options)]})


def _init_color(w: Widget) -> WidgetState:
    return _state(w, string_value=w.proto.value if w.proto.set_value else w.proto.default)


def _init_pagination(w: Widget) -> WidgetState:
    return _state(w, int_value=w.proto.value if w.proto.set_value else w.proto.default)


_INITIAL = {
    "slider": _init_slider, "number_input": _init_number, "selectbox": _init_choice, "radio": _init_choice,
    "checkbox": _init_checkbox, "text_input": _init_text, "text_area": _init_text, "multiselect": _init_multi,
    "button_group": _init_multi, "color_picker": _init_color, "pagination": _init_pagination,
}


# --- new values --------------------------------------------------------------------------------------

def _grid_value(lo: float, hi: float, step: float, is_int: bool, rng: random.Random) -> float:
    """A random point of the widget's grid lo, lo+step, ..., hi."""
    if step <= 0 or hi <= lo:
        return lo
    n_steps = int(round((hi - lo) / step))
    value = lo + rng.randint(0, max(n_steps, 0)) * step
    value = min(max(value, lo), hi)
    return float(round(value)) if is_int else round(value, 12)


def _propose_slider(w: Widget, current: WidgetState | None, rng: random.Random) -> WidgetState:
    p = w.proto
    n_values = max(len(p.default), 1)
    if p.options:
        picks = sorted(rng.randrange(len(p.options)) for _ in range(n_values))
        return _state(w, string_array_value={"data": [p.options[i] for i in picks]})
    is_int = p.data_type != p.FLOAT
    values = sorted(_grid_value(p.min, p.max, p.step or 1.0, is_int, rng) for _ in range(n_values))
    return _state(w, double_array_value={"data": values})


def _propose_number(w: Widget, current: WidgetState | None, rng: random.Random) -> WidgetState:
    p = w.proto
    is_int = p.data_type == p.INT
    step = p.step or (1.0 if is_int else 0.01)
    now = current.double_value if current is not None and current.HasField("double_value") else p.default
    if p.has_min and p.has_max:
        # Wide ranges (a seed up to 2**31) are explored near the current value, as a person would.
        lo, hi = max(p.min, now - 20 * step), min(p.max, now + 20 * step)
        value = _grid_value(lo, hi, step, is_int, rng)
    else:
        value = now + rng.choice([-1, 1]) * rng.randint(1, 5) * step
        value = max(value, p.min) if p.has_min else value
        value = min(value, p.max) if p.has_max else value
    return _state(w, double_value=float(round(value)) if is_int else value)


def _propose_choice(w: Widget, current: WidgetState | None, rng: random.Random) -> WidgetState:
    options = _options(w)
    now = current.string_value if current is not None else None
    others = [o for o in options if o != now] or options
    return _state(w, string_value=rng.choice(others))


def _propose_checkbox(w: Widget, current: WidgetState | None, rng: random.Random) -> WidgetState:
    now = current.bool_value if current is not None else w.proto.default
    return _state(w, bool_value=not now)


def _propose_text(w: Widget, current: WidgetState | None, rng: random.Random) -> WidgetState | None:
    """Reorder the words already there (or the default's): stays in the page's own vocabulary."""
    now = current.string_value if current is not None else (w.proto.default if w.proto.HasField("default") else "")
    words = now.split()
    if len(words) < 2:
        if not words:
            return None
        words = words + [words[0]]
    i, j = rng.sample(range(len(words)), 2)
    words[i], words[j] = words[j], words[i]
    if words == now.split():
        words = words[1:] + words[:1]
    text = " ".join(words)
    if w.proto.max_chars:
        text = text[: w.proto.max_chars]
    return _state(w, string_value=text)


def _propose_multi(w: Widget, current: WidgetState | None, rng: random.Random) -> WidgetState:
    options = _options(w)
    chosen = list(current.string_array_value.data) if current is not None else []
    single = w.kind == "button_group" and w.proto.click_mode == w.proto.SINGLE_SELECT
    pick = rng.choice(options)
    if single:
        return _state(w, string_array_value={"data": [] if chosen == [pick] else [pick]})
    if pick in chosen:
        chosen.remove(pick)
    elif not (w.kind == "multiselect" and w.proto.max_selections and len(chosen) >= w.proto.max_selections):
        chosen.append(pick)
    return _state(w, string_array_value={"data": chosen})


def _propose_color(w: Widget, current: WidgetState | None, rng: random.Random) -> WidgetState:
    return _state(w, string_value="#" + "".join(rng.choice(string.hexdigits[:16]) for _ in range(6)))


def _propose_button(w: Widget, current: WidgetState | None, rng: random.Random) -> WidgetState:
    return _state(w, trigger_value=True)


def _propose_pagination(w: Widget, current: WidgetState | None, rng: random.Random) -> WidgetState:
    return _state(w, int_value=rng.randrange(max(w.proto.num_pages, 1)))


_PROPOSE = {
    "slider": _propose_slider, "number_input": _propose_number, "selectbox": _propose_choice,
    "radio": _propose_choice, "checkbox": _propose_checkbox, "text_input": _propose_text,
    "text_area": _propose_text, "multiselect": _propose_multi, "button_group": _propose_multi,
    "color_picker": _propose_color, "button": _propose_button, "pagination": _propose_pagination,
}


def is_widget_element(kind: str, proto: object) -> bool:
    """True for element protos that are widgets (they carry a non-empty widget id)."""
    return kind in SUPPORTED_KINDS + UNDRIVEN_KINDS and bool(getattr(proto, "id", ""))
