"""Shareable links, bad links, language switch and presenter mode on every page (AppTest).

A copied link is the page plus its query parameters: opening it must give the same widget values and the same
figures as setting those widgets by hand; a bad language falls back to English with a notice (bad values of the
other parameters: tests/test_bad_links.py); switching the language keeps the state; presenter mode hides the long
texts and keeps every control and figure.
"""

from __future__ import annotations

import json

import pytest

from attention_core.qkv import load_library
from tests.apptest_utils import assert_clean, open_page
from tests.pages import PAGES
from ui.shared.i18n import load_strings

pytestmark = pytest.mark.pages

# page -> link parameters (all non-default), one case per page; values as they stand in a URL.
LINKS = {
    "home": {"home_seed": "7"},
    "rnn": {"rnn_preset": "custom", "rnn_text": "the cat sat on the mat", "rnn_hidden": "64", "rnn_radius": "1.5",
            "rnn_seed": "3"},
    "qkv": {"qkv_query": "understand_dog", "qkv_temp": "2.0", "qkv_step": "2"},
    "self_attention": {"sa_preset": "hanako", "sa_token": "1", "sa_cutoff": "0.5"},
    "scaling": {"scaling_d": "256", "scaling_scale": "false", "scaling_tau": "2.0", "scaling_keys": "16",
                "scaling_seed": "4"},
    "causal": {"causal_preset": "cat_mat", "causal_glove": "false", "causal_seed": "2", "causal_leak_how": "random",
               "causal_generated": "3", "causal_leak_pos": "2"},
    "glove": {"glove_sentence": "the dog chased the cat because it was hungry", "glove_query": "it",
              "glove_target": "dog", "glove_dk": "50", "glove_seed": "9", "glove_cloud": "projected"},
}
# The same state, set through the widgets by hand: (key, value) in the order a person would set them.
BY_HAND = {
    "home": [("home_seed", 7)],
    "rnn": [("rnn_preset", "custom"), ("rnn_text", "the cat sat on the mat"), ("rnn_hidden", 64), ("rnn_radius", 1.5),
            ("rnn_seed", 3)],
    "qkv": [("qkv_query", "understand_dog"), ("qkv_temp", 2.0), ("qkv_step", 2)],
    "self_attention": [("sa_preset", "hanako"), ("sa_token", 1), ("sa_cutoff", 0.5)],
    "scaling": [("scaling_d", 256), ("scaling_scale", False), ("scaling_tau", 2.0), ("scaling_keys", 16),
                ("scaling_seed", 4)],
    "causal": [("causal_preset", "cat_mat"), ("causal_glove", False), ("causal_seed", 2), ("causal_leak_how", "random"),
               ("causal_generated", 3), ("causal_leak_pos", 2)],
    "glove": [("glove_sentence", "the dog chased the cat because it was hungry"), ("glove_query", "it"),
              ("glove_target", "dog"), ("glove_dk", 50), ("glove_seed", 9), ("glove_cloud", "projected")],
}
FILES = {p.section: p.file for p in PAGES}
# Parameters written by ui.shared.links.url_selectbox (not by Streamlit's own binding): they stay in the URL as ids.
ID_PARAMS = {"rnn_preset", "qkv_query", "sa_preset", "sa_token", "causal_preset", "causal_leak_how", "glove_cloud"}


def widget(at, key: str):
    found = [node for node in at._tree if getattr(node, "key", None) == key and hasattr(node, "value")]
    assert found, f"no widget with key {key}"
    return found[0]


def same(value, url_text: str) -> bool:
    if isinstance(value, bool):
        return str(value).lower() == url_text.lower()
    if isinstance(value, (int, float)):
        return float(value) == float(url_text)
    return str(value) == url_text


def figures(at) -> list[dict]:
    """The figure JSON of every chart, without Streamlit's per-element ids."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def answer_predictions(at) -> None:
    for radio in at.radio:
        if radio.key and radio.key.endswith("_predict"):
            radio.set_value(1)
    at.run()


def toasts(at) -> list[str]:
    return [toast.value for toast in at.toast]


@pytest.mark.parametrize("section", list(LINKS))
def test_link_opens_the_same_state(section):
    at = open_page(section, "ja", query=LINKS[section])
    assert_clean(at)
    assert toasts(at) == []
    for key, value in LINKS[section].items():
        assert same(widget(at, key).value, value), (key, widget(at, key).value, value)
    for key in ID_PARAMS & set(LINKS[section]) - {"rnn_preset"}:  # (custom is implied by rnn_text)
        assert at.query_params.get(key) == LINKS[section][key], key  # still in the URL, as the id
    assert at.query_params.get("lang") == "ja"


@pytest.mark.parametrize("section", list(LINKS))
def test_link_shows_the_same_figures_as_setting_the_widgets(section):
    linked = open_page(section, "en", query=LINKS[section])
    answer_predictions(linked)
    by_hand = open_page(section, "en")
    for key, value in BY_HAND[section]:
        widget(by_hand, key).set_value(value)
        by_hand.run()
    answer_predictions(by_hand)
    assert_clean(linked)
    assert_clean(by_hand)
    for key, _ in BY_HAND[section]:
        assert widget(linked, key).value == widget(by_hand, key).value, key
    assert figures(linked) == figures(by_hand)


def test_url_follows_the_id_pickers():
    """Choosing in a url_selectbox writes its id (not the translated label) to the URL, and the default removes it."""
    at = open_page("self_attention", "ja")
    widget(at, "sa_preset").set_value("hanako")
    at.run()
    assert at.query_params.get("sa_preset") == "hanako"
    widget(at, "sa_token").set_value(3)
    at.run()
    assert at.query_params.get("sa_token") == "3"
    widget(at, "sa_token").set_value(8)  # hanako's pronoun: the default token of this preset
    at.run()
    assert "sa_token" not in at.query_params
    at = open_page("qkv", "en")
    widget(at, "qkv_query").set_value("physics")
    at.run()
    assert at.query_params.get("qkv_query") == "physics"
    widget(at, "qkv_q_cats").set_value(2.0)  # a question of one's own: no preset, and the URL says so
    at.run()
    assert widget(at, "qkv_query").value is None
    assert at.query_params.get("qkv_query") == "none"


def test_a_link_with_only_the_question_also_sets_its_sliders():
    at = open_page("qkv", "en", query={"qkv_query": "physics"})
    assert_clean(at)
    physics = {q.id: q for q in load_library().queries}["physics"]
    features = load_library().features
    assert [widget(at, f"qkv_q_{f.id}").value for f in features] == [float(v) for v in physics.vector]


def test_bad_language_falls_back_to_english_with_a_notice():
    at = open_page("home", "xx", query={"home_seed": "3"})
    assert_clean(at)
    assert at.title[0].value == load_strings("en")["home.title"]
    assert toasts(at) == [load_strings("en")["common.bad_lang_param"]]
    assert widget(at, "home_seed").value == 3  # the rest of the link still applies


@pytest.mark.parametrize("section", list(LINKS))
def test_language_switch_keeps_the_state(section):
    at = open_page(section, "en", query=LINKS[section])
    key = "home" if section == "home" else section
    assert at.title[0].value == load_strings("en")[f"{key}.title"]
    at.selectbox(key="language").set_value("ja").run()
    assert_clean(at)
    assert at.title[0].value == load_strings("ja")[f"{key}.title"]
    assert at.query_params.get("lang") == "ja"
    for name, value in LINKS[section].items():
        assert same(widget(at, name).value, value), name
    at.selectbox(key="language").set_value("en").run()
    assert at.title[0].value == load_strings("en")[f"{key}.title"]
    assert "lang" not in at.query_params


def widget_keys(at) -> set[str]:
    return {node.key for node in at._tree if getattr(node, "key", None) and hasattr(node, "value")}


def markdown_text(at) -> str:
    return "\n".join(m.value for m in list(at.markdown) + list(at.caption))


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("page", PAGES, ids=[p.section for p in PAGES])
def test_presenter_mode_hides_long_texts_and_keeps_controls(page, lang):
    normal = open_page(page.section, lang)
    answer_predictions(normal)
    shown = open_page(page.section, lang, query={"presenter": "true"})
    answer_predictions(shown)
    assert_clean(shown)
    assert widget_keys(shown) == widget_keys(normal)
    assert len(figures(shown)) == len(figures(normal)) >= 1
    explain = load_strings(lang)[f"{page.section}.explain"]
    assert explain in markdown_text(normal)
    assert explain not in markdown_text(shown)
    assert len(markdown_text(shown)) < len(markdown_text(normal))
    for fig in figures(shown):
        layout = fig["layout"]
        assert layout["font"]["size"] == 20
        for axis in [v for k, v in layout.items() if k.startswith(("xaxis", "yaxis"))]:
            assert axis.get("tickfont", {}).get("size", 16) >= 16


# --- no false "bad link" notice -------------------------------------------------------------------
# (page, picker, a non-default choice, the default): a person picks another choice, then goes back to the default.
BACK_TO_DEFAULT = [
    ("self_attention", "sa_token", 1, 8),  # 猫 (or "cat"), then それ ("it"), the preset's pronoun
    ("self_attention", "sa_preset", "hanako", {"en": "animal", "ja": "cat"}),  # each language's own; resets the token
    ("causal", "causal_preset", "street_wide", "animal_tired"),  # "...too wide", then "...too tired"
    ("causal", "causal_leak_how", "random", "word"),
    ("rnn", "rnn_preset", "custom", "long_memory"),
    ("qkv", "qkv_query", "physics", "cats_feel"),
    ("glove", "glove_cloud", "projected", "raw"),
    ("scaling", "scaling_d", 256, 64),  # a widget bound by Streamlit itself
]


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("section, key, other, default", BACK_TO_DEFAULT, ids=[f"{c[0]}-{c[1]}" for c in BACK_TO_DEFAULT])
def test_going_back_to_a_default_is_no_bad_link(section, key, other, default, lang):
    default = default[lang] if isinstance(default, dict) else default  # (a default that depends on the language)
    at = open_page(section, lang)
    assert widget(at, key).value == default
    widget(at, key).set_value(other)
    at.run()
    assert toasts(at) == []
    assert key in at.query_params or key not in ID_PARAMS  # (Streamlit's browser side writes a bound one's URL)
    widget(at, key).set_value(default)
    at.run()
    assert_clean(at)
    assert toasts(at) == [], "no link was involved"
    assert key not in at.query_params


def test_a_bad_link_is_still_reported_after_the_page_was_used():
    """The notice is for values read from a link: a second bad link in a session that already has state is reported."""
    at = open_page("self_attention", "en", query={"sa_token": "999"})
    assert len(toasts(at)) == 1
    widget(at, "sa_token").set_value(1)
    at.run()
    widget(at, "sa_token").set_value(8)
    at.run()
    assert toasts(at) == []


# --- what a control shows is what the page computes with ------------------------------------------
class ShownChoices:
    """What the browser shows in each keyed radio and selectbox.

    Streamlit 1.67's frontend keeps the chosen option's label. A run changes it only by sending ``set_value`` (with
    ``raw_value``); a widget mounted anew starts at its ``default`` index (none for ``index=None``); a label that is
    not among the widget's current options shows as no selection.
    """

    def __init__(self, at):
        """Start from a page whose earlier runs were not watched: assume it showed what it computed."""
        self.labels = {w.key: None if w.index is None else w.options[w.index] for w in self._widgets(at)}

    @staticmethod
    def _widgets(at):
        return [w for w in list(at.radio) + list(at.selectbox) if w.key]

    def update(self, at, clicked: tuple[str, ...] = ()) -> None:
        labels = {}
        for w in self._widgets(at):
            proto = w.proto
            if w.key in clicked:  # the person clicked it: the browser shows what was clicked
                labels[w.key] = None if w.index is None else w.options[w.index]
            elif proto.set_value:
                labels[w.key] = proto.raw_value or None
            elif w.key in self.labels:
                labels[w.key] = self.labels[w.key]
            else:
                labels[w.key] = proto.options[proto.default] if proto.HasField("default") else None
        self.labels = labels

    def mismatches(self, at) -> dict:
        """Key -> (shown, computed with) wherever they differ."""
        out = {}
        for w in self._widgets(at):
            label = self.labels.get(w.key)
            shown = label if label in list(w.options) else None
            computed = None if w.index is None else w.options[w.index]
            if shown != computed:
                out[w.key] = (shown, computed)
        return out


def answer_and_track(at, shown: ShownChoices) -> None:
    keys = []
    for radio in at.radio:
        if radio.key and radio.key.endswith("_predict"):
            radio.set_value(2)
            keys.append(radio.key)
    at.run()
    shown.update(at, clicked=tuple(keys))


@pytest.mark.parametrize("section", list(LINKS))
def test_language_switch_keeps_every_choice_shown(section):
    at = open_page(section, "en", query=LINKS[section])
    shown = ShownChoices(at)
    answer_and_track(at, shown)
    assert shown.mismatches(at) == {}
    computed = {k: widget(at, k).value for k in shown.labels}
    for lang in ("ja", "en", "ja"):
        at.selectbox(key="language").set_value(lang).run()
        shown.update(at, clicked=("language",))
        assert_clean(at)
        assert shown.mismatches(at) == {}, lang
        assert {k: widget(at, k).value for k in shown.labels if k != "language"} == \
            {k: v for k, v in computed.items() if k != "language"}
        at.run()  # a later run (no set_value any more) still shows it
        shown.update(at)
        assert shown.mismatches(at) == {}, lang


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_prediction_stays_shown_when_the_sentence_comes_back(lang):
    """Clear the sentence (the page stops before the question), type it again: the answer shows with its feedback."""
    at = open_page("glove", lang)
    shown = ShownChoices(at)
    answer_and_track(at, shown)
    feedback = [w.value for w in at.warning]
    assert feedback
    at.text_input(key="glove_sentence").input("").run()
    shown.update(at)
    assert not [r for r in at.radio if r.key == "glove_predict"]
    at.text_input(key="glove_sentence").input("the animal did not cross the street because it was too tired").run()
    shown.update(at)
    assert_clean(at)
    assert shown.mismatches(at) == {}
    assert shown.labels["glove_predict"] is not None and [w.value for w in at.warning] == feedback


# ---------------------------------------------------------------- a long text and the length of a link

def longest_app_link() -> str:
    """The longest request target the app writes into a link: the page with two text boxes (lesson 9: the prompt and
    the made-up name), each at the MAX_CHARS characters a page reads, of 4-byte UTF-8 (12 characters each once
    percent-encoded), with the frame's and the page's other settings (tests/browser/test_class_edges.py sends it)."""
    import urllib.parse

    from ui.shared.common import MAX_CHARS

    widest = "\U0001F600" * MAX_CHARS
    query = {"lang": "ja", "presenter": "true", "gpt_preset": "custom", "gpt_text": widest, "gpt_name": widest,
             "gpt_seed": "123456", "gpt_temperature": "1.25", "gpt_layer": "29", "gpt_head": "8"}
    return "/gpt?" + urllib.parse.urlencode(query)


BROWSER_HEADERS = 2_000  # a browser's other request headers (user agent, accept, cookies), generously


def test_a_long_text_in_a_link_is_cut_to_what_the_page_reads_in_the_link_and_the_box():
    from ui.shared.common import MAX_CHARS

    text = ("the cat sat on the mat " * 400)[:9_000]
    at = open_page("causal", "en", query={"causal_preset": "custom", "causal_text": text})
    assert_clean(at)
    assert at.query_params["causal_text"] == text[:MAX_CHARS]
    assert widget(at, "causal_text").value == text[:MAX_CHARS]
    assert any("9,000" in toast and f"first {MAX_CHARS}" in toast for toast in at.opening_toasts)


def test_the_longest_link_fits_the_servers_and_the_balancers_header_limits():
    """uvicorn's h11 refuses a request whose line and headers, still incomplete, pass 16 KiB; HAProxy one whose
    headers pass tune.bufsize - tune.maxrewrite (deploy/haproxy.cfg). A page's later requests repeat the link as
    their Referer, so the link and a browser's other headers must fit in both."""
    import re
    from pathlib import Path

    import h11
    from uvicorn.config import Config

    assert Config(app=None).h11_max_incomplete_event_size is None  # uvicorn keeps h11's default
    server_limit = h11._connection.DEFAULT_MAX_INCOMPLETE_EVENT_SIZE
    cfg = (Path(__file__).resolve().parents[1] / "deploy" / "haproxy.cfg").read_text()
    tune = dict(re.findall(r"^\s*tune\.(bufsize|maxrewrite)\s+(\d+)", cfg, flags=re.M))
    balancer_limit = int(tune["bufsize"]) - int(tune["maxrewrite"])
    need = len(f"GET {longest_app_link()} HTTP/1.1\r\n") + BROWSER_HEADERS
    assert need <= server_limit and need <= balancer_limit, (need, server_limit, balancer_limit)
