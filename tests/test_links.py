"""Shareable links: which parameters of a link were dropped as invalid."""

from ui.shared.links import ignored_link_params


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


# --- follow_history: Back onto the entry Streamlit 1.67 adds when a sidebar link leaves a page ---------------------

class _Rerun(Exception):
    pass


class _Params(dict):
    def to_dict(self):
        return dict(self)

    def from_dict(self, values):
        self.clear()
        self.update(values)


def _frame(monkeypatch, *, history: bool, sent: dict, now: dict, state: dict):
    """One frame run of ui.shared.links.follow_history with a fake Streamlit: -> (rerun asked, the URL after)."""
    import types

    from ui.shared import links

    params = _Params(now)
    fake = types.SimpleNamespace(session_state=state, query_params=params, rerun=lambda: (_ for _ in ()).throw(_Rerun()))
    monkeypatch.setattr(links, "st", fake)
    monkeypatch.setattr(links, "history_navigation", lambda: history)
    monkeypatch.setattr(links, "sent_query_params", lambda: dict(sent))
    return fake, params


def run_frame(monkeypatch, page: str, **kwargs) -> tuple[bool, dict]:
    from ui.shared.links import follow_history

    _, params = _frame(monkeypatch, **kwargs)
    try:
        follow_history(page)
    except _Rerun:
        return True, params.to_dict()
    return False, params.to_dict()


def test_back_onto_the_entry_without_the_pages_parameters_writes_its_link_back(monkeypatch):
    state = {"_url_page": "trained-model", "_url_choices": {"trained-model": {"pretrained_preset": "1"}}}
    # the link leaves lesson 8: the browser sent its bound switch, Streamlit dropped it (and pushed an entry without it)
    assert run_frame(monkeypatch, "scaling", history=False, sent={"pretrained_hide_special": "true", "lang": "ja"},
                     now={"lang": "ja"}, state=state) == (False, {"lang": "ja"})
    # Back lands on that entry: the link comes back (switch and choice), and the page runs again to read it
    assert run_frame(monkeypatch, "trained-model", history=True, sent={"lang": "ja"}, now={"lang": "ja"},
                     state=state) == (True, {"pretrained_hide_special": "true", "lang": "ja", "pretrained_preset": "1"})
    # the rerun, and a later Back within the page, change nothing
    assert run_frame(monkeypatch, "trained-model", history=False, sent={}, now={"lang": "ja"}, state=state)[0] is False
    assert run_frame(monkeypatch, "trained-model", history=True, sent={}, now={"lang": "ja"}, state=state)[0] is False


def test_nothing_is_restored_when_no_parameter_was_dropped_or_back_lands_elsewhere(monkeypatch):
    state = {"_url_page": "self-attention", "_url_choices": {"self-attention": {"sa_token": "1"}}}
    # a link that dropped nothing (the browser kept the page's own entry): Back there needs nothing
    assert run_frame(monkeypatch, "causal", history=False, sent={}, now={}, state=state)[0] is False
    assert run_frame(monkeypatch, "self-attention", history=True, sent={}, now={}, state=state) == (False, {})
    # dropped, but Back lands on an entry with other parameters (not the one Streamlit added): the URL decides
    state["_url_page"] = "self-attention"
    run_frame(monkeypatch, "causal", history=False, sent={"sa_cutoff": "0.7"}, now={}, state=state)
    assert run_frame(monkeypatch, "self-attention", history=True, sent={}, now={"sa_cutoff": "0.5"},
                     state=state) == (False, {"sa_cutoff": "0.5"})
