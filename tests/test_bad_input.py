"""Every page against bad input: each text box with hostile text, each slider and number at both ends.

Text boxes that a page shows only in some mode ("Type my own", GloVe on/off, after the prediction, after
training) are reached through SETUPS: a declared list of page states, each a few widget steps from the page's
default state. A static test checks that the setups reach every text box the code defines.

A case passes when the page shows no exception, no error box, no NaN or inf in its text, figures or tables,
no blank figure, and, where the text's own figure is missing, a warning that says why.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.apptest_utils import decode_array, open_page
from tests.hypothesis_budget import examples
from ui.shared.common import md_escape

ROOT = Path(__file__).resolve().parent.parent
CODE_FILES = sorted(ROOT.glob("lessons/*.py")) + sorted(ROOT.glob("ui/**/*.py")) + [ROOT / "streamlit_app.py"]

BAD_TEXTS = {
    "empty": "",
    "spaces": "     ",
    "one_token": "it",
    "forty_tokens": " ".join(["cat", "dog"] * 20),  # exactly the token limit (ui.shared.common.MAX_TOKENS)
    "too_many_tokens": " ".join(["word"] * 60),
    "ten_thousand_chars": "the cat sat on the mat " * 435,
    "one_500_char_word": "a" * 500,  # exactly ui.shared.common.MAX_CHARS, as one token
    "unknown_only": "xqzzyv blorptang fnordle",
    "emoji": "😀 🙃 🐱",
    "japanese": "猫がマットの上に座った。それは満足そうだった。",
    "rtl": "שלום עולם مرحبا بالعالم \u202egnp.exe",
    "control_chars": "the\x00cat\x07sat\x1b[31m on",
    "nul_only": "\x00\x00\x00",
    "script": "<script>alert(1)</script>",
    "img_onerror": "<img src=x onerror=alert(1)>",
    "markdown": "**bold** [x](javascript:alert(1)) # heading",
    "latex": "$\\ $$ \\frac{1}{0} $",
}


@dataclass(frozen=True)
class Setup:
    """A page state: the steps that lead there from the default state, the text boxes it shows, and the figures
    that show what those boxes hold (each present, or replaced by a warning that says why)."""

    name: str
    section: str
    steps: tuple = ()  # (kind, key, value); kind is an AppTest widget accessor, or "click" for a button
    boxes: tuple = ()
    figures: tuple = ()

    def open(self):
        at = open_page(self.section)
        for kind, key, value in self.steps:
            widget = at.button(key=key) if kind == "click" else getattr(at, kind)(key=key)
            (widget.click() if kind == "click" else widget.set_value(value)).run()
            assert not at.exception, (self.name, key, [e.message for e in at.exception])
        return at


RNN, QKV, SA = "rnn", "qkv", "self_attention"
SCALING, CAUSAL, GLOVE = "scaling", "causal", "glove"
CAUSAL_CUSTOM = (("selectbox", "causal_preset", "custom"), ("radio", "causal_predict", 1))
GLOVE_REVEALED = (("radio", "glove_predict", 1),)
SETUPS = [
    Setup("home", "home"),
    Setup("rnn_custom", RNN, (("selectbox", "rnn_preset", "custom"), ("radio", "rnn_predict", 1)),
          ("rnn_text",), ("rnn_influence",)),
    Setup("qkv_blend", QKV, (("button_group", "qkv_step", 3), ("radio", "qkv_predict", 1))),
    Setup("self_attention", SA),
    Setup("scaling_table", SCALING, (("radio", "scaling_predict", 1),)),
    Setup("causal_custom_glove", CAUSAL, CAUSAL_CUSTOM, ("causal_text", "causal_leak_word"),
          ("causal_scores_fig", "causal_leak_fig")),
    Setup("causal_custom_random", CAUSAL, CAUSAL_CUSTOM + (("toggle", "causal_glove", False),),
          ("causal_text", "causal_leak_word"), ("causal_scores_fig", "causal_leak_fig")),
    Setup("glove", GLOVE, GLOVE_REVEALED, ("glove_sentence",), ("glove_raw_bars", "glove_projected_bars", "glove_cloud_fig")),
    Setup("glove_trained", GLOVE, GLOVE_REVEALED + (("slider", "glove_train_steps", 20), ("click", "glove_train", None)),
          ("glove_sentence",), ("glove_raw_bars", "glove_after_bars")),
    Setup("transformer", "transformer", (("radio", "transformer_predict", 1),), ("transformer_text",),
          ("transformer_out_fig", "transformer_local_fig")),
    Setup("pretrained_custom", "pretrained", (("selectbox", "pretrained_preset", "custom"),
          ("radio", "pretrained_predict", 1), ("radio", "pretrained_switch_predict", 1)), ("pretrained_text",),
          ("pretrained_sink_map", "pretrained_lines", "pretrained_heat")),
    Setup("gpt_custom", "gpt", (("selectbox", "gpt_preset", "custom"),) + tuple(
        ("radio", key, 1) for key in ("gpt_next_predict", "gpt_leak_predict", "gpt_it_predict", "gpt_sink_predict",
                                      "gpt_induction_predict", "gpt_cache_predict")), ("gpt_text", "gpt_name"),
          ("gpt_next_bars", "gpt_sink_chart")),
    Setup("heads_custom", "heads", (("selectbox", "heads_lens_preset", "custom"),) + tuple(
        ("radio", key, 1) for key in ("heads_off_predict", "heads_comp_predict", "heads_lens_predict",
                                      "heads_sink_predict")), ("heads_lens_text", "heads_name"),
          ("heads_lens_chart", "heads_off_chart")),
    Setup("heads_ordinary_custom", "heads", (("selectbox", "heads_text_preset", "custom"),
          ("text_input", "heads_text_text", "Zorblat Quimbley met Zorblat Quimbley."),
          ("text_input", "heads_text_name", "Zorblat Quimbley"), ("radio", "heads_text_predict", 2),
          ("radio", "heads_off_predict", 1)),  # (the page's sliders: the learner's own heads, after this question)
          ("heads_text_text", "heads_text_name"), ("heads_text_arrows",)),
    Setup("modern", "modern", tuple(("radio", key, 1) for key in ("modern_gqa_predict", "modern_window_predict",
                                                                   "modern_rope_predict", "modern_ja_predict")),
          ("modern_text", "modern_ja_text"), ("modern_gqa_map_0", "modern_ja_map")),
    Setup("summary", "summary"),
]
TEXT_SETUPS = [s for s in SETUPS if s.boxes]

# --- what the page shows -------------------------------------------------------------------------------------

NUMBER_WORD = re.compile(r"(?<![A-Za-z])(nan|inf|-inf)(?![A-Za-z])", re.IGNORECASE)
MARKDOWN_KINDS = ("markdown", "caption", "text", "info", "warning", "success", "error", "toast", "metric", "latex",
                  "subheader", "header", "title")


def shown_text(at) -> str:
    parts = []
    for kind in MARKDOWN_KINDS:
        for el in at.get(kind):
            parts.append(str(getattr(el, "value", "")))
            parts.append(str(getattr(el, "label", "") or ""))
    return "\n".join(parts)


def figure_key(el) -> str:
    """The key= a page gave st.plotly_chart (its element id is "$$ID-<hash>-<key>")."""
    return el.proto.id.split("-", 2)[-1]


def _numbers(value) -> np.ndarray | None:
    try:
        arr = decode_array(value)
    except (ValueError, TypeError):
        return None  # category labels
    return arr if arr.dtype.kind in "fc" else None


def _size(value) -> int:
    if value is None:
        return 0
    if isinstance(value, dict) and "bdata" in value:
        return decode_array(value).size
    return len(value) if isinstance(value, (list, tuple)) else 1


def assert_figure_sound(fig: dict, where: str) -> None:
    """Some data drawn (not a blank figure), and no NaN or inf except the grey masked cells of a heat map."""
    traces = fig.get("data", [])
    assert any(_size(t.get(axis)) for t in traces for axis in ("x", "y", "z", "values")), f"blank figure {where}"
    for trace in traces:
        for axis in ("x", "y", "z"):
            arr = _numbers(trace.get(axis)) if trace.get(axis) is not None else None
            if arr is None:
                continue
            if trace.get("type") == "heatmap":  # NaN cells are the grey masked/hidden cells by design
                assert np.isfinite(arr).any() and not np.isinf(arr).any(), f"heat map without numbers {where}"
            else:
                assert np.isfinite(arr).all(), (where, trace.get("type"), axis)


def assert_nothing_broken(at, allowed_words: tuple = ()) -> None:
    """No exception, no error box, no NaN/inf in text, figures or tables, no blank figure."""
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    text = shown_text(at).replace("-∞", "")
    for word in allowed_words:  # a word the user typed, shown back to them
        text = text.replace(word, "")
    assert not NUMBER_WORD.search(text), NUMBER_WORD.search(text)
    for el in at.get("plotly_chart"):
        assert_figure_sound(json.loads(el.proto.spec), figure_key(el))
    for el in at.get("dataframe"):
        frame = el.value
        numeric = frame.select_dtypes("number").to_numpy(dtype=float)
        assert not np.isinf(numeric).any(), f"inf in a table: {list(frame.columns)}"


def assert_figures_or_message(at, setup: Setup, case: str) -> None:
    shown = {figure_key(el) for el in at.get("plotly_chart")}
    missing = [f for f in setup.figures if f not in shown]
    if missing:
        assert at.warning, f"{setup.name}/{case}: {missing} missing and no message says why"


# --- the text matrix -------------------------------------------------------------------------------------------


def text_box(at, key: str):
    """The st.text_input or st.text_area with this key."""
    boxes = [b for b in list(at.text_input) + list(at.text_area) if b.key == key]
    assert boxes, f"no text box {key!r} at this state"
    return boxes[0]


@pytest.mark.matrix
@pytest.mark.parametrize("case", list(BAD_TEXTS), ids=list(BAD_TEXTS))
@pytest.mark.parametrize("setup", TEXT_SETUPS, ids=[s.name for s in TEXT_SETUPS])
def test_every_text_box_survives_bad_text(setup, case):
    at = setup.open()
    for key in setup.boxes:
        box = text_box(at, key)
        original = box.value
        box.input(BAD_TEXTS[case]).run()
        assert_nothing_broken(at)
        assert_figures_or_message(at, setup, case)
        if key != setup.boxes[-1]:
            text_box(at, key).input(original).run()  # the next box may only show for a usable sentence
            assert_nothing_broken(at)


SHARED_TEXT_BOX = "preset_or_own_text"  # ui.shared.common's preset-or-own picker: its box is "<key>_text"


def text_box_keys_in_code() -> set[str]:
    """The key= of every st.text_input / st.text_area call in the pages, ui/ and the frame, and "<key>_text" of every
    call of the shared picker (whose own text box takes its key from the caller)."""
    keys = set()
    for path in CODE_FILES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        inside_picker = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == SHARED_TEXT_BOX
                         for n in ast.walk(f)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            if getattr(node.func, "id", getattr(node.func, "attr", "")) == SHARED_TEXT_BOX:
                key = node.args[2] if len(node.args) > 2 else next(k.value for k in node.keywords if k.arg == "key")
                assert isinstance(key, ast.Constant), f"{path.name}:{node.lineno}: the picker needs a literal key"
                keys.add(f"{key.value}_text")
            elif getattr(node.func, "attr", "") in ("text_input", "text_area") and id(node) not in inside_picker:
                key = next((k.value for k in node.keywords if k.arg == "key"), None)
                assert isinstance(key, ast.Constant), f"{path.name}:{node.lineno}: a text box needs a literal key"
                keys.add(key.value)
    return keys


FRAME_URL_BOXES = {"lang"}  # the frame's hidden box that holds ?lang=; bad values are tests/test_bad_links.py's
# a class's hidden link boxes (?class=, ?seat=, ?teacher=: bad codes, seats and keys are tests/test_classroom_*.py's)
# and the teacher's two read-only boxes that show the class's links
FRAME_URL_BOXES |= {"class", "seat", "teacher", "class_join_link", "class_teacher_link"}


def test_setups_reach_every_text_box():
    declared = {key for s in SETUPS for key in s.boxes}
    assert text_box_keys_in_code() - FRAME_URL_BOXES == declared


# --- user words reach Markdown only escaped ------------------------------------------------------------------------

# Every word of this sentence changes under md_escape ("-" and "." are escaped), so a word that reaches a
# Markdown element without md_escape shows up verbatim. GloVe knows the first three; the fourth it does not.
CANARY_WORDS = ("so-called", "well-known", "x-ray", "zq.zq-zq")
CANARY = " ".join(CANARY_WORDS)
MARKDOWN_FIELDS = ("body", "label", "help", "caption", "placeholder")


def markdown_texts(at) -> list[str]:
    """Every string on the page that Streamlit renders as Markdown (bodies, labels, help), from the protos."""
    out = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            proto = getattr(child, "proto", None)
            if proto is not None and getattr(child, "type", "") not in ("plotly_chart", "dataframe", "latex"):
                for field in MARKDOWN_FIELDS:
                    value = getattr(proto, field, None)
                    if isinstance(value, str):
                        out.append(value)
            walk(child)

    walk(at._tree)
    return out


@pytest.mark.matrix
@pytest.mark.parametrize("setup", TEXT_SETUPS, ids=[s.name for s in TEXT_SETUPS])
def test_user_words_reach_markdown_only_escaped(setup):
    at = setup.open()
    for key in setup.boxes:
        text_box(at, key).input("x-ray" if key == "causal_leak_word" else CANARY).run()
    assert_nothing_broken(at)
    assert at.get("plotly_chart"), "the canary sentence should give figures"
    texts = markdown_texts(at)
    raw = [(word, text) for text in texts for word in CANARY_WORDS if word in text]
    assert raw == [], "user words shown as Markdown without md_escape"
    assert any(md_escape(word) in text for text in texts for word in CANARY_WORDS), "no user word on the page"


def test_raw_html_never_carries_user_text():
    """st.html and st.components render raw HTML: only fixed markup (a literal, or a function without arguments
    such as presenter_style()) may go there. unsafe_allow_html is banned outright (tests/test_structure.py)."""
    offenders = []
    for path in CODE_FILES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = getattr(node.func, "attr", "") if isinstance(node, ast.Call) else ""
            if name in ("html", "iframe") or (name == "declare_component"):
                args = list(node.args) + [k.value for k in node.keywords]
                fixed = all(isinstance(a, ast.Constant) or (isinstance(a, ast.Call) and not a.args and not a.keywords)
                            for a in args)
                if not fixed:
                    offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


MARKDOWN_SPECIAL = set("\\`*_{}[]()#+-.!|$<>~:^&")


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(st.text())
def test_md_escape_leaves_no_markdown_character_unescaped(text):
    escaped = md_escape(text)
    bare = re.sub(r"\\.", "", escaped, flags=re.S)  # drop every escaped pair, left to right
    assert not set(bare) & MARKDOWN_SPECIAL
    assert re.sub(r"\\(.)", r"\1", escaped, flags=re.S) == text  # and nothing else changed


# --- sliders, numbers and switches --------------------------------------------------------------------------------

RANGE_KINDS = ("slider", "select_slider", "number_input")


def _ends(widget, kind: str) -> list:
    if kind == "select_slider":
        return [widget.options[0], widget.options[-1]]
    ends = [widget.min, widget.max]
    return [v for v in ends if v is not None and not (isinstance(v, float) and math.isinf(v))]


def _keyed(at, kind: str) -> list[str]:
    return [w.key for w in getattr(at, kind) if w.key and not w.disabled]


# Lesson 8 has no slider or number (its layer, head and word pickers are selectboxes: the link matrix covers them);
# the summary has no control at all.
WITHOUT_RANGES = {"pretrained_custom", "summary"}
RANGED = [s for s in SETUPS if s.name not in WITHOUT_RANGES]


@pytest.mark.matrix
@pytest.mark.parametrize("setup", [s for s in SETUPS if s.name in WITHOUT_RANGES], ids=sorted(WITHOUT_RANGES))
def test_a_page_said_to_have_no_ranges_has_none(setup):
    at = setup.open()
    assert [key for kind in RANGE_KINDS for key in _keyed(at, kind)] == []


@pytest.mark.matrix
@pytest.mark.parametrize("setup", RANGED, ids=[s.name for s in RANGED])
def test_sliders_and_numbers_at_both_ends(setup):
    at = setup.open()
    moved = 0
    for kind in RANGE_KINDS:
        for key in _keyed(at, kind):
            for end in (0, -1):
                widgets = [w for w in getattr(at, kind) if w.key == key and not w.disabled]
                if not widgets:
                    continue  # hidden by the other end of a control moved before it
                ends = _ends(widgets[0], kind)
                widgets[0].set_value(ends[end]).run()
                assert_nothing_broken(at)
                moved += 1
    assert moved, f"{setup.name}: no slider or number to move"


@pytest.mark.matrix
@pytest.mark.parametrize("flip", [False, True], ids=["switches_default", "switches_flipped"])
@pytest.mark.parametrize("end", [0, -1], ids=["all_min", "all_max"])
@pytest.mark.parametrize("setup", RANGED, ids=[s.name for s in RANGED])
def test_every_control_at_one_end_together(setup, end, flip):
    """All sliders and numbers at their minimum (or maximum) at once, switches as they are or flipped.

    This reaches the corners a single slider never does, e.g. d = 1024 unscaled with temperature 0.05."""
    at = setup.open()
    moved = 0
    for kind in RANGE_KINDS:
        for widget in getattr(at, kind):
            if widget.key and not widget.disabled and widget.key != "presenter":
                ends = _ends(widget, kind)
                if ends:
                    widget.set_value(ends[end])
                    moved += 1
    assert moved, f"{setup.name}: no slider or number to move"
    if flip:
        for toggle in at.toggle:
            if toggle.key and not toggle.disabled and toggle.key != "presenter":
                toggle.set_value(not toggle.value)
    at.run()
    assert_nothing_broken(at)
