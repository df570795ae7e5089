"""Every link parameter of every page, malformed or out of range: no exception, and the widget falls back to its
default (or takes the value, when the value happens to be valid for it). Values no widget can take (longer than
MAX_CHARS, or an infinite number) are dropped by the frame and reported in a toast.

Each case opens the page the way a shared link does: the page's own script is the first run of the session.
"""

from __future__ import annotations

import ast

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest_utils import APP
from tests.test_bad_input import CODE_FILES, ROOT, SETUPS, assert_nothing_broken
from ui.common import MAX_CHARS
from ui.links import unusable_link_params

LINK_KEYS = {  # every query parameter a page reads: widgets with bind="query-params" and url_selectbox choices
    "lessons/home.py": ("home_seed", "presenter", "lang"),
    "lessons/rnn.py": ("rnn_preset", "rnn_text", "rnn_hidden", "rnn_radius", "rnn_seed"),
    "lessons/qkv.py": ("qkv_query", "qkv_q_cats", "qkv_q_feelings", "qkv_q_dogs", "qkv_q_cooking", "qkv_temp",
                               "qkv_step"),
    "lessons/self_attention.py": ("sa_preset", "sa_token", "sa_cutoff", "sa_text", "sa_random", "sa_seed"),
    "lessons/scaling.py": ("scaling_d", "scaling_scale", "scaling_tau", "scaling_keys", "scaling_seed"),
    "lessons/causal.py": ("causal_preset", "causal_text", "causal_glove", "causal_seed", "causal_generated",
                               "causal_leak_pos", "causal_leak_how", "causal_leak_word"),
    "lessons/glove.py": ("glove_sentence", "glove_query", "glove_target", "glove_dk", "glove_seed",
                                    "glove_cloud"),
    "lessons/transformer.py": ("transformer_text", "transformer_glove", "transformer_seed", "transformer_perm",
                                     "transformer_pos", "transformer_act"),
    "lessons/pretrained.py": ("pretrained_preset", "pretrained_text", "pretrained_hide_special", "pretrained_layer",
                              "pretrained_head", "pretrained_token", "pretrained_from", "pretrained_to"),
}
BAD_VALUES = {
    "abc": "abc",
    "minus_one": "-1",
    "huge": "999999",
    "empty": "",
    "five_thousand_chars": "x" * 5000,
    "unicode": "猫😀\u202eabc",
    "inf": "inf",
    "nan": "nan",
    "overflow": "1e999",
}
WIDGET_KINDS = ("slider", "select_slider", "number_input", "text_input", "text_area", "selectbox", "radio", "checkbox",
                "toggle", "multiselect", "button_group")
CASES = [(file, key, name) for file, keys in LINK_KEYS.items() for key in keys for name in BAD_VALUES]


def open_link(file: str, query: dict) -> AppTest:
    """As a browser opening /<page>?<query>: the page's script is the session's first run."""
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    at.switch_page(file)
    return at.run()


def widget_values(at) -> dict:
    """key -> value of every keyed widget on the page."""
    return {w.key: w.value for kind in WIDGET_KINDS for w in at.get(kind) if getattr(w, "key", None)}


def takes(value, text: str) -> bool:
    """True when ``value`` is what a widget holds after reading ``text`` from a link."""
    if isinstance(value, bool):
        return str(value).lower() == text.lower()
    if isinstance(value, (int, float)):
        try:
            return float(text) == value
        except ValueError:
            return False
    return str(value) == text


_defaults: dict[str, dict] = {}


def defaults(file: str) -> dict:
    if file not in _defaults:
        _defaults[file] = widget_values(open_link(file, {}))
    return _defaults[file]


@pytest.mark.parametrize(("file", "key", "case"), CASES, ids=[f"{k}-{c}" for _, k, c in CASES])
def test_malformed_link_parameter_falls_back(file, key, case):
    value = BAD_VALUES[case]
    at = open_link(file, {key: value})
    assert_nothing_broken(at, allowed_words=(value,) if value.isalpha() else ())
    shown = widget_values(at).get(key)
    default = defaults(file).get(key)
    if key in widget_values(at) and key in defaults(file):
        assert shown == default or takes(shown, value), (key, value[:40], shown, default)
    if unusable_link_params({key: value}, MAX_CHARS):
        assert shown == default
        assert any(key.replace("_", "\\_") in toast.value for toast in at.toast), f"no notice about {key}"


def test_every_link_parameter_of_a_page_at_once():
    """A link carrying every parameter of a page, all malformed, still opens the page."""
    for file, keys in LINK_KEYS.items():
        for value in ("abc", "inf", "x" * 5000):
            assert_nothing_broken(open_link(file, {k: value for k in keys if k != "lang"}), allowed_words=(value,))


SECTION_FILES = {f"{stem}.py": f"lessons/{stem}.py" for stem in ("home", "rnn", "qkv", "self_attention", "scaling",
                                                                  "causal", "glove", "transformer", "pretrained")}  # ui/<stem>.py


def url_selectbox_keys() -> dict[str, set[str]]:
    """page file -> the keys of its ui.common.url_selectbox calls (ui/glove.py belongs to lesson 6)."""
    found: dict[str, set[str]] = {}
    for path in CODE_FILES:
        page = SECTION_FILES.get(path.name, str(path.relative_to(ROOT)))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "url_selectbox":
                key = next((k.value for k in node.keywords if k.arg == "key"), node.args[2] if len(node.args) > 2 else None)
                if isinstance(key, ast.Constant):
                    found.setdefault(page, set()).add(key.value)
    return found


def test_link_keys_list_every_parameter_the_pages_read():
    found = {file: set() for file in LINK_KEYS}
    for setup in SETUPS:  # bound widgets, in every declared page state (some show only after a choice)
        at = setup.open()
        for kind in WIDGET_KINDS:
            found[setup.file] |= {w.proto.query_param_key for w in at.get(kind) if getattr(w.proto, "query_param_key", "")}
    for file, keys in url_selectbox_keys().items():
        found.setdefault(file, set()).update(keys)
    for file, keys in found.items():
        keys -= {"presenter", "lang"}  # the frame's own switch and language box, on every page
        assert keys <= set(LINK_KEYS.get(file, ())), (file, sorted(keys - set(LINK_KEYS.get(file, ()))))


def test_unusable_link_params():
    params = {"a": "inf", "b": "-Infinity", "c": "1e999", "d": "x" * 501, "e": "x" * 500, "f": "nan", "g": "12",
              "h": "", "presenter": "inf", "lang": "x" * 900}
    assert unusable_link_params(params, 500) == ["a", "b", "c", "d"]


def slider_ranges_in_code() -> dict[str, tuple]:
    """key (or key prefix, for f-string keys) -> (min, max) of every st.slider whose ends are literal numbers."""
    ranges = {}
    for path in CODE_FILES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "slider" and len(node.args) >= 3:
                key = next((k.value for k in node.keywords if k.arg == "key"), None)
                lo, hi = node.args[1], node.args[2]
                if isinstance(lo, ast.UnaryOp) and isinstance(lo.operand, ast.Constant):
                    lo = ast.Constant(-lo.operand.value)
                if isinstance(key, ast.JoinedStr):
                    key = ast.Constant(key.values[0].value)
                if isinstance(key, ast.Constant) and isinstance(lo, ast.Constant) and isinstance(hi, ast.Constant):
                    ranges[key.value] = (lo.value, hi.value)
    return ranges


def test_limits_doc_states_the_numbers_of_the_code():
    """docs/limits.md lists what a user can expect; every number in it comes from the code and is checked here."""
    from attention_core.causal import RANDOM_DIM
    from attention_core.scaling import DIM_CHOICES, KEY_RANGE, TABLE_DRAWS, TABLE_KEYS, TABLE_QUERIES, TEMPERATURE_CHOICES
    from ui import glove as glove_sections
    from ui.common import MAX_TOKENS

    doc = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    listed = lambda values: ", ".join(f"{v:g}" for v in values)  # noqa: E731
    expected = [
        f"{MAX_CHARS} (`MAX_CHARS`)", f"{MAX_TOKENS} (`MAX_TOKENS`)", f"longer than {MAX_CHARS} characters",
        f"0 to {2**31 - 1}", listed(DIM_CHOICES), listed(TEMPERATURE_CHOICES), f"{KEY_RANGE[0]} to {KEY_RANGE[1]}",
        f"{TABLE_DRAWS:,} draws of {TABLE_QUERIES} queries and {TABLE_KEYS} keys", f"{RANDOM_DIM} dimensions",
        listed(glove_sections.DK_OPTIONS), listed(glove_sections.TRAIN_DK), listed(glove_sections.TRAIN_LR),
        listed(glove_sections.TRAIN_WD), f"{glove_sections.N_DRAWS:,} random directions",
    ]
    expected += [f"{lo} to {hi}" for lo, hi in slider_ranges_in_code().values()]
    assert [e for e in expected if e not in doc] == []
    assert set(slider_ranges_in_code()) >= {"rnn_hidden", "rnn_radius", "qkv_q_", "sa_cutoff", "glove_train_steps"}
