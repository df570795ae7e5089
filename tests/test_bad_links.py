"""Every link parameter of every page, malformed or out of range: no exception, and the widget falls back to its
default (or takes the value, when the value happens to be valid for it). Values no widget can take (longer than
MAX_CHARS, BOX_CHARS for a sentence box, or an infinite number) are dropped by the frame and reported in a toast.

Each case opens the link with tests.apptest_utils.open_page, which checks that the page drawn is the page named.
"""

from __future__ import annotations

import ast

import pytest

from tests.apptest_utils import open_page
from tests.test_bad_input import CODE_FILES, ROOT, SETUPS, assert_nothing_broken
from ui.shared.common import BOX_CHARS, LONG_TEXT_BOXES, MAX_CHARS, md_escape
from ui.shared.links import unusable_link_params

LINK_KEYS = {  # every query parameter a page reads: widgets with bind="query-params" and url_selectbox choices
    "home": ("home_seed", "presenter", "lang"),
    "rnn": ("rnn_preset", "rnn_text", "rnn_hidden", "rnn_radius", "rnn_seed"),
    "qkv": ("qkv_query", "qkv_q_cats", "qkv_q_feelings", "qkv_q_dogs", "qkv_q_cooking", "qkv_temp", "qkv_step"),
    "self_attention": ("sa_preset", "sa_token", "sa_cutoff"),
    "scaling": ("scaling_d", "scaling_scale", "scaling_tau", "scaling_keys", "scaling_seed"),
    "causal": ("causal_preset", "causal_text", "causal_glove", "causal_seed", "causal_generated", "causal_leak_pos",
               "causal_leak_how", "causal_leak_word"),
    "glove": ("glove_sentence", "glove_query", "glove_target", "glove_dk", "glove_seed", "glove_cloud"),
    "transformer": ("transformer_text", "transformer_glove", "transformer_seed", "transformer_perm", "transformer_pos",
                    "transformer_act"),
    "pretrained": ("pretrained_preset", "pretrained_text", "pretrained_hide_special", "pretrained_layer",
                   "pretrained_head", "pretrained_token", "pretrained_from", "pretrained_to"),
    "gpt": ("gpt_preset", "gpt_text", "gpt_temperature", "gpt_top_k", "gpt_top_p", "gpt_new_tokens", "gpt_seed",
            "gpt_name"),
    "heads": ("heads_lens_preset", "heads_lens_text", "heads_own_list", "heads_own_k", "heads_own_mean", "heads_name",
              "heads_text_preset", "heads_text_text", "heads_text_name"),
    "tiny_gpt": ("tiny_layers", "tiny_heads", "tiny_seed", "tiny_rate"),
    "modern": ("modern_text", "modern_ja_text", "modern_layer"),
    "summary": ("presenter", "lang"),  # no widget of its own: the frame's parameters
}
# The rest of the link that makes a widget show (a sentence box shows only for "Type my own").
SHOWN_WITH = {"rnn_text": {"rnn_preset": "custom"}, "causal_text": {"causal_preset": "custom"},
              "pretrained_text": {"pretrained_preset": "custom"}, "gpt_text": {"gpt_preset": "custom"}}
# What a learner does before a widget shows (lesson 8 draws its heads once both predictions are answered).
ANSWERS = (("pretrained_predict", 1), ("pretrained_switch_predict", 1))
SHOWN_AFTER = {key: ANSWERS for key in ("pretrained_layer", "pretrained_head", "pretrained_token", "pretrained_from",
                                        "pretrained_to")}
SHOWN_AFTER |= {key: (("gpt_next_predict", 1),) for key in ("gpt_temperature", "gpt_top_k", "gpt_top_p")}  # lesson 9
SHOWN_AFTER["gpt_name"] = (("gpt_induction_predict", 1),)
SHOWN_AFTER["modern_layer"] = (("modern_gqa_predict", 1),)  # (lesson 10b: its maps)
SHOWN_WITH["heads_lens_text"] = {"heads_lens_preset": "custom"}  # What heads do
SHOWN_WITH["heads_text_text"] = SHOWN_WITH["heads_text_name"] = {"heads_text_preset": "custom"}  # (on ordinary text)
SHOWN_AFTER |= {key: (("heads_off_predict", 1),)
                for key in ("heads_own_list", "heads_own_k", "heads_own_mean", "heads_name")}
IMPLIED = {"rnn_preset": "custom"}  # a link with a sentence of its own opens "Type my own" (the rnn page)
FRAME_KEYS = {"lang", "presenter"}
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
CASES = [(section, key, name) for section, keys in LINK_KEYS.items() for key in keys for name in BAD_VALUES]


def widget_values(at) -> dict:
    """key -> value of every keyed widget on the page (main area and sidebar)."""
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


_defaults: dict[tuple, dict] = {}


def opened(section: str, query: dict, answers=()):
    """open_page, then the learner's answers (radio key, option); ``opening_toasts`` gathers every run's toasts."""
    at = open_page(section, query=query)
    for key, option in answers:
        at.radio(key=key).set_value(option).run()
        at.opening_toasts += [toast.value for toast in at.toast]
    return at


def defaults(section: str, context: dict, answers=()) -> dict:
    """Widget values of the page opened with only ``context`` in its link (once per page, context and answers)."""
    cache_key = (section, tuple(sorted(context.items())), answers)
    if cache_key not in _defaults:
        _defaults[cache_key] = widget_values(opened(section, context, answers))
    return _defaults[cache_key]


@pytest.mark.matrix
@pytest.mark.parametrize(("section", "key", "case"), CASES, ids=[f"{k}-{c}" for _, k, c in CASES])
def test_malformed_link_parameter_falls_back(section, key, case):
    value = BAD_VALUES[case]
    context, answers = SHOWN_WITH.get(key, {}), SHOWN_AFTER.get(key, ())
    at = opened(section, {**context, key: value}, answers)
    assert_nothing_broken(at, allowed_words=(value,) if value.isalpha() else ())
    shown, default = widget_values(at), defaults(section, context, answers)
    assert key in default, f"{key} is not drawn on {section} (with {context})"
    assert key in shown, f"{key}={value[:40]!r} took the widget off {section}"
    took = takes(shown[key], value[:MAX_CHARS] if key in LONG_TEXT_BOXES else value)  # (a long text: what is read)
    noticed = [toast for toast in at.opening_toasts if md_escape(f"{key}=") in toast]
    # Either the widget took the value, or it is back at its default, the value is gone from the URL and one notice
    # names it (a page-wide fallback for the frame's own ?lang= and ?presenter=: tests/test_sharing.py).
    assert took or (shown[key] == default[key] and key not in at.query_params
                    and (len(noticed) == 1 or key in FRAME_KEYS)), (key, value[:40], shown[key], default[key], noticed)
    if unusable_link_params({key: value}, BOX_CHARS if key in LONG_TEXT_BOXES else MAX_CHARS):
        assert not took and len(noticed) == 1


# The defaults as the lessons state them (not read from the app): the fallback of a bad link lands here.
STATED_DEFAULTS = {
    "home": {"home_seed": 0},
    "rnn": {"rnn_preset": "long_memory", "rnn_hidden": 32},
    "qkv": {"qkv_query": "cats_feel", "qkv_step": 0},
    "self_attention": {"sa_preset": "animal", "sa_token": 8},  # the English UI's sentence and its pronoun, "it"
    "scaling": {"scaling_d": 64, "scaling_seed": 0},
    "causal": {"causal_leak_how": "word", "causal_seed": 0},
    "glove": {"glove_cloud": "raw", "glove_dk": 16},
}


@pytest.mark.parametrize("section", list(STATED_DEFAULTS))
def test_the_defaults_a_bad_link_falls_back_to(section):
    defaults_shown = defaults(section, {})
    assert {key: defaults_shown[key] for key in STATED_DEFAULTS[section]} == STATED_DEFAULTS[section]


@pytest.mark.matrix
@pytest.mark.parametrize("value", ["abc", "inf", "x" * 5000], ids=["abc", "inf", "five_thousand_chars"])
@pytest.mark.parametrize("section", list(LINK_KEYS))
def test_every_link_parameter_of_a_page_at_once(section, value):
    """A link carrying every parameter of a page, all malformed, still opens the page (open_page checks its title)
    with every widget at its default or at the value."""
    at = open_page(section, query={k: value for k in LINK_KEYS[section] if k != "lang"})
    assert_nothing_broken(at, allowed_words=(value,))
    shown, default = widget_values(at), defaults(section, {})
    drawn = [key for key in LINK_KEYS[section] if key in shown and key in default]
    assert drawn, f"none of {section}'s link widgets drawn"
    for key in drawn:
        read = value[:MAX_CHARS] if key in LONG_TEXT_BOXES else value  # (a long text: what a page reads of it)
        assert shown[key] in (default[key], IMPLIED.get(key)) or takes(shown[key], read), (key, shown[key], default[key])


def url_selectbox_keys() -> set[str]:
    """The keys of every ui.shared.links.url_selectbox call in lessons/, ui/ and the frame."""
    found = set()
    for path in CODE_FILES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "url_selectbox":
                key = next((k.value for k in node.keywords if k.arg == "key"), node.args[2] if len(node.args) > 2 else None)
                if isinstance(key, ast.Constant):
                    found.add(key.value)
    return found


def test_link_keys_list_every_parameter_the_pages_read():
    found = {section: set() for section in LINK_KEYS}
    for setup in SETUPS:  # bound widgets, in every declared page state (some show only after a choice)
        at = setup.open()
        for kind in WIDGET_KINDS:
            found[setup.section] |= {w.proto.query_param_key for w in at.get(kind)
                                     if getattr(w.proto, "query_param_key", "")}
    assert all(found[s.section] for s in SETUPS), {s: sorted(k) for s, k in found.items()}
    for section, keys in found.items():
        keys -= {"presenter", "lang", "class", "seat", "teacher"}  # the frame's own boxes (a class's too), on every page
        assert keys <= set(LINK_KEYS[section]), (section, sorted(keys - set(LINK_KEYS[section])))
    selectbox_keys = url_selectbox_keys()  # written to the URL by the app itself, not by Streamlit's binding
    assert len(selectbox_keys) >= 5, selectbox_keys
    every_key = {key for keys in LINK_KEYS.values() for key in keys}
    assert selectbox_keys <= every_key, sorted(selectbox_keys - every_key)


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
    from ui.glove import page as glove_sections
    from ui.shared.common import MAX_TOKENS

    doc = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    listed = lambda values: ", ".join(f"{v:g}" for v in values)  # noqa: E731
    expected = [
        f"{MAX_CHARS} (`MAX_CHARS`)", f"{MAX_TOKENS} (`MAX_TOKENS`)", f"{BOX_CHARS:,} (`BOX_CHARS`)",
        f"longer than {BOX_CHARS:,} characters",
        f"0 to {2**31 - 1}", listed(DIM_CHOICES), listed(TEMPERATURE_CHOICES), f"{KEY_RANGE[0]} to {KEY_RANGE[1]}",
        f"{TABLE_DRAWS:,} draws of {TABLE_QUERIES} queries and {TABLE_KEYS} keys", f"{RANDOM_DIM} dimensions",
        listed(glove_sections.DK_OPTIONS), listed(glove_sections.TRAIN_DK), listed(glove_sections.TRAIN_LR),
        listed(glove_sections.TRAIN_WD), f"{glove_sections.N_DRAWS:,} random directions",
    ]
    expected += [f"{lo} to {hi}" for lo, hi in slider_ranges_in_code().values()]
    assert [e for e in expected if e not in doc] == []
    assert set(slider_ranges_in_code()) >= {"rnn_hidden", "rnn_radius", "qkv_q_", "sa_cutoff", "glove_train_steps"}


def test_every_text_box_takes_a_long_paste_and_is_cut_on_the_page():
    """A box whose max_chars is below the paste refuses it whole and silently (issue 40 item 22: a 10,000-character
    name): every lesson's text box takes BOX_CHARS and is one of LONG_TEXT_BOXES, which the frame cuts with a notice."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    boxes = {}
    for path in [*root.joinpath("ui").rglob("*.py"), *root.joinpath("lessons").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("text_input", "text_area"):
                kw = {k.arg: k.value for k in node.keywords}
                key = kw["key"].value if isinstance(kw.get("key"), ast.Constant) else None
                if key is None or "disabled" in kw:  # (a read-only box: the class's links)
                    continue
                limit = kw.get("max_chars")
                boxes[key] = limit.id if isinstance(limit, ast.Name) else ast.dump(limit) if limit else None
    assert {"heads_name", "heads_text_name", "gpt_name", "modern_ja_text"} <= set(boxes)
    assert {key: limit for key, limit in boxes.items() if limit != "BOX_CHARS"} == {}
    assert set(boxes) - set(LONG_TEXT_BOXES) == set()
