"""Shareable links: which query parameters of a link were not usable (pure; no Streamlit)."""

from __future__ import annotations

from collections.abc import Mapping

FRAME_PARAMS = {"lang", "presenter"}  # handled by the frame itself


def _as_url_text(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def ignored_link_params(before: Mapping[str, str], after: Mapping[str, str], state: Mapping[str, object]) -> list[tuple[str, str]]:
    """(param, value) pairs a link carried that the page dropped as invalid.

    Streamlit removes a bound parameter from the URL both when its value is invalid and when it equals the
    widget's default; only the first is worth a notice, so a dropped parameter whose value the widget now
    holds is not reported.
    """
    ignored = []
    for name, value in before.items():
        if name in FRAME_PARAMS or name in after:
            continue
        if name in state and _as_url_text(state[name]).lower() == str(value).lower():
            continue
        ignored.append((name, str(value)))
    return ignored
