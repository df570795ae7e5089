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


def test_values_the_widgets_already_held_are_not_reported():
    """sa_token=1 was written by the app itself (a person picked 猫); going back to それ drops it: no link involved."""
    before = {"sa_token": "1", "scaling_d": "abc"}
    state = {"sa_token": 8, "scaling_d": 64}
    assert ignored_link_params(before, {}, state, held={"sa_token"}) == [("scaling_d", "abc")]
    assert ignored_link_params(before, {}, state) == [("sa_token", "1"), ("scaling_d", "abc")]


def test_a_retired_parameter_left_in_the_link_is_not_reported():
    """Lesson 3's old GloVe parameters (sa_text, sa_random, sa_seed) stay in the URL untouched: no bad-link notice
    (the page itself points to lesson 6, tests/test_self_attention_page.py)."""
    before = {"sa_text": "the animal was tired", "sa_random": "true", "sa_seed": "3", "sa_preset": "animal"}
    after = dict(before)
    assert ignored_link_params(before, after, {"sa_preset": "animal"}) == []
