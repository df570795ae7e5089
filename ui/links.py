"""Shareable links: which query parameters of a link were not usable (pure; no Streamlit)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

FRAME_PARAMS = {"lang", "presenter"}  # handled by the frame itself


def _as_url_text(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def ignored_link_params(before: Mapping[str, str], after: Mapping[str, str], state: Mapping[str, object],
                        held: Collection[str] = ()) -> list[tuple[str, str]]:
    """(param, value) pairs a link carried that the page dropped as invalid.

    Only a value the page read from the URL in this run can be a bad link: ``held`` names the parameters whose
    widget already had a value when the run began (set by a person, or by the app: a preset that resets its
    token), so a drop of theirs is a return to a default, never a link. Streamlit also removes a bound parameter
    when its value equals the widget's default; that is not worth a notice either, so a dropped parameter whose
    value the widget now holds is not reported.
    """
    ignored = []
    for name, value in before.items():
        if name in FRAME_PARAMS or name in after or name in held:
            continue
        if name in state and _as_url_text(state[name]).lower() == str(value).lower():
            continue
        ignored.append((name, str(value)))
    return ignored


def unusable_link_params(params: Mapping[str, str], max_chars: int) -> list[str]:
    """Names of the page's link parameters no widget can take: longer than ``max_chars``, or an infinite number.

    The frame drops them before the page runs: Streamlit 1.67 raises OverflowError when it reads an infinite
    value into an integer number_input, and no widget of the app holds more than ``max_chars`` characters
    (a bound text_input does not apply its max_chars to the value it reads from the URL).
    """
    unusable = []
    for name, value in params.items():
        if name in FRAME_PARAMS:
            continue  # the frame reads these itself and falls back on anything it does not know
        text = str(value)
        try:
            infinite = math.isinf(float(text))
        except (ValueError, OverflowError):
            infinite = False
        if len(text) > max_chars or len(name) > max_chars or infinite:
            unusable.append(name)
    return unusable
