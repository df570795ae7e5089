"""AppTest: on a phone or tablet (ui.shared.display.on_touch_device, simulated as tests/test_pretrained_view.py does) no text
tells the learner to hover; each caption that does on a desktop has a touch variant (``<key>_touch``: "tap", or the
instruction dropped) written with the same numbers, and a desktop still gets the original. (Lesson 8's model view is
held in tests/test_pretrained_view.py. Whether a tap on a real phone opens Plotly's label is not held here.)"""

from __future__ import annotations

import importlib
import sys
import tomllib

import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.seam import find_sentence, find_sentences, texts
from tests.visible_text import visible_texts
from ui.shared import display
from ui.shared.i18n import LOCALES_DIR

pytestmark = pytest.mark.pages

# section -> (the locale key of the caption that says "hover", the questions answered before it is shown)
CASES = {
    "home": ("home.demo_note", ()),
    "rnn": ("rnn.fig1_note", ("rnn_predict",)),
    "self_attention": ("self_attention.lines_caption", ()),
    "causal": ("causal.scores_caption", ()),
    "glove": ("glove.c_explain", ()),
    "transformer": ("transformer.pe_caption", ("transformer_predict",)),
    "gpt": ("gpt.maps_caption", ("gpt_leak_predict",)),
}
UI_MODULES = ("ui.home", "ui.rnn", "ui.self_attention", "ui.causal", "ui.glove.page", "ui.transformer", "ui.gpt.mask")
GLOSSARY = tomllib.loads((LOCALES_DIR / "glossary.toml").read_text(encoding="utf-8"))
HOVER = {"en": "hover", "ja": next(term["ja"] for term in GLOSSARY["term"] if term["en"].startswith("hover"))}


def opened(section: str, lang: str):
    """The page at its defaults, with the questions above the caption answered."""
    at = open_page(section, lang, timeout=600)
    for question in CASES[section][1]:
        at.radio(key=question).set_value(1).run()
    assert_clean(at)
    return at


def as_a_phone(monkeypatch) -> None:
    """on_touch_device() is True in ui.shared.display and in every ui module that imported it by name."""
    for name in UI_MODULES:
        importlib.import_module(name)
    original = display.on_touch_device
    for module in [m for name, m in list(sys.modules.items()) if name == "ui" or name.startswith("ui.")]:
        if getattr(module, "on_touch_device", None) is original:
            monkeypatch.setattr(module, "on_touch_device", lambda: True)


def hover_texts(at, lang: str) -> list[str]:
    return [text for text in visible_texts(at) if HOVER[lang] in text.lower()]


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("section", list(CASES))
def test_a_phone_gets_the_touch_caption_and_a_desktop_the_original(section, lang, monkeypatch):
    key = CASES[section][0]
    desktop = opened(section, lang)
    fields = find_sentence(texts(desktop), key, lang)
    assert find_sentences(texts(desktop), f"{key}_touch", lang) == []
    assert hover_texts(desktop, lang)  # the desktop caption says hover: the check below can fail

    as_a_phone(monkeypatch)
    phone = opened(section, lang)
    assert find_sentence(texts(phone), f"{key}_touch", lang) == fields  # the same numbers, only the instruction differs
    assert find_sentences(texts(phone), key, lang) == []
    assert hover_texts(phone, lang) == []


def test_what_the_browser_reports_decides_touch_and_the_user_agent_only_before(monkeypatch):
    """Issue 33: iPad Safari sends a Mac's User-Agent. The frame's probe (display.touch_probe) stores what the browser
    reports about its pointer; that decides, and the User-Agent only before a report (the session's first run,
    AppTests). The browser side is held by tests/browser/test_class_edges.py (an emulated iPad)."""
    class Context:
        def __init__(self, agent):
            self.headers = {"User-Agent": agent}

    mac = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15"
    iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148"
    state: dict = {}
    monkeypatch.setattr(display.st, "session_state", state)
    for agent, reported, expected in ((mac, None, False), (iphone, None, True), (mac, True, True),
                                      (iphone, False, False), (mac, False, False)):
        monkeypatch.setattr(display.st, "context", Context(agent))
        state.clear()
        if reported is not None:
            state[display.TOUCH_PROBE] = {"touch": reported}
        assert display.on_touch_device() is expected, (agent[:30], reported)
