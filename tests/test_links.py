"""Shareable links: which parameters of a link were dropped as invalid."""

from ui.links import ignored_link_params


def test_valid_and_default_params_are_not_reported():
    before = {"scaling_d": "64", "scaling_scale": "false", "lang": "ja"}
    after = {"scaling_d": "64"}  # the scaling switch equalled its default, so Streamlit dropped it from the URL
    state = {"scaling_d": 64, "scaling_scale": False}
    assert ignored_link_params(before, after, state) == []


def test_invalid_params_are_reported():
    before = {"scaling_d": "abc", "scaling_seed": "-1", "presenter": "maybe"}
    after = {}
    state = {"scaling_d": 64, "scaling_seed": 0}
    assert ignored_link_params(before, after, state) == [("scaling_d", "abc"), ("scaling_seed", "-1")]


def test_unknown_param_is_reported():
    assert ignored_link_params({"token": "999"}, {}, {}) == [("token", "999")]
