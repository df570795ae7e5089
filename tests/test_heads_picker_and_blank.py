"""Issue 40 items 15 and 22 on lesson 10: the prompt picker stands in the section that reads it ("Reading the layers",
not three sections above it), and a text of only whitespace is empty there as on lesson 9 (one rule for both)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from tests.apptest_utils import assert_clean, open_page
from tests.seam import strings


def _blank_app():
    import streamlit as st

    from ui.heads.results import readable_ids

    st.session_state["ids"] = readable_ids(lambda key, **_: key, st.session_state.get("text", ""), 64, "empty", "long")


@pytest.mark.parametrize("text", ["   ", "\n\t ", "\u3000"])  # spaces, a newline and a tab, a Japanese space
def test_whitespace_is_empty_on_lesson_10_as_on_lesson_9(text):
    at = AppTest.from_function(_blank_app, default_timeout=60)
    at.session_state["text"] = text
    at.run()
    assert not at.exception and at.session_state["ids"] is None
    assert [w.value for w in at.warning] == ["empty"]
    assert not text.strip()  # (lesson 9's prompt_picker calls exactly this text empty: `if not text.strip()`)


def _page_order(node, out: list) -> None:
    """Depth-first, in page order: ("subheader", text) and ("widget", key) entries."""
    if isinstance(node, Block):
        for child in node.children.values():
            _page_order(child, out)
    elif node.type == "subheader":
        out.append(("subheader", node.value))
    elif getattr(node, "key", None):
        out.append(("widget", node.key))


@pytest.mark.pages
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_prompt_picker_stands_in_the_lens_section(lang):
    at = open_page("heads", lang)
    assert_clean(at)
    order: list = []
    _page_order(at.main, order)
    picker = order.index(("widget", "heads_lens_preset"))
    above = [text for kind, text in order[:picker] if kind == "subheader"]
    assert above[-1] == strings(lang)["heads.lens_title"]  # the section that reads it, right above it
    lens_question = order.index(("widget", "heads_lens_predict"))
    assert picker < lens_question
    assert not [text for kind, text in order[picker:lens_question] if kind == "subheader"]
