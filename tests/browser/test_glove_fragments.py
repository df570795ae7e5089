"""Lesson 6 through Streamlit's own protocol on a real server: section (b) is a fragment, and the 3-D view (c) never
shows the projection of another setting than (b).

A new seed reruns (b) only while (c) shows the raw or trained row; while (c) shows the projection, the page reruns
and (c) draws the new setting's row. Checked against a fresh tab opened with that setting in its link.
"""

from __future__ import annotations

import json

import pytest

from bench.guided import Step, state_for
from bench.protocol import StreamlitTab
from tests.browser.conftest import run_in_own_loop

pytestmark = pytest.mark.browser


def cloud_figure(tab: StreamlitTab) -> dict:
    """The 3-D view's figure (the one scatter3d chart on the page) as the tab last received it."""
    for kind, proto in tab.elements:
        if kind == "plotly_chart":
            spec = json.loads(proto.spec)
            if any(trace.get("type") == "scatter3d" for trace in spec.get("data", [])):
                return spec
    raise AssertionError("no 3-D view on the page")


async def set_widget(tab: StreamlitTab, key: str, value=None, click: bool = False):
    widget = next(w for w in tab.drivable_widgets() if w.user_key == key)
    state = state_for(widget, Step(key, value, click))
    if widget.kind != "button":
        tab.states[widget.id] = state
    result = await tab._run("widget", triggers=[state] if widget.kind == "button" else [], widget=key,
                            fragment_id=widget.fragment_id)
    assert not result.errors, result.errors
    return widget, result


async def scenario(url: str) -> tuple[dict, dict, str, str]:
    tab = StreamlitTab(url, timeout=60)
    await tab.connect()
    try:
        await tab.open_page("glove")
        await set_widget(tab, "glove_predict", "Below the middle of the row")
        raw_before = json.dumps(cloud_figure(tab)["data"])
        seed, _ = await set_widget(tab, "glove_seed", 7)
        assert seed.fragment_id, "the seed is drawn inside a fragment: a new seed reruns section (b) only"
        raw_after = json.dumps(cloud_figure(tab)["data"])
        await set_widget(tab, "glove_cloud", "random projections (b)")  # the label (locales/en/glove.toml)
        await set_widget(tab, "glove_seed", 8)  # (c) shows seed 7's projection: the page must follow
        followed = cloud_figure(tab)
    finally:
        await tab.close()
    fresh = StreamlitTab(url, timeout=60)
    await fresh.connect()
    try:
        await fresh.open_page("glove", "glove_seed=8&glove_cloud=projected")
        await set_widget(fresh, "glove_predict", "Below the middle of the row")
        expected = cloud_figure(fresh)
    finally:
        await fresh.close()
    return followed, expected, raw_before, raw_after


def test_a_new_seed_reruns_b_and_the_3d_view_follows_only_when_it_shows_the_projection(app_url):
    followed, expected, raw_before, raw_after = run_in_own_loop(lambda: scenario(app_url))
    assert raw_after == raw_before  # (c) showed the raw row, which no seed changes
    assert followed == expected  # seed 8's projection, exactly as a tab opened on seed 8 shows it
