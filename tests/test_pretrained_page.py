"""AppTest: lesson 8 (inside a trained model) draws, hides what the predictions ask until they are answered, follows
its pickers, refuses text it cannot read with a clear message, and shows the same numbers whether or not the
start-up's background results were ready (a missing model package: tests/test_faults.py)."""

from __future__ import annotations

import json
import threading
import tomllib
from pathlib import Path

import numpy as np
import pytest

from ui.shared.i18n import load_strings
from streamlit.testing.v1 import AppTest

from attention_core.pretrained import load_model, read_text
from attention_core.pretrained.measure import lesson_measures, set_results
from attention_core.pretrained.sets import load_pretrained_sets
from tests.apptest_utils import assert_clean, decode_array, open_page
from tests.pages import page
from ui.shared import startup
from ui.shared.common import MAX_CHARS, MAX_TOKENS


def attention_maps(text: str, model=None):
    """text -> (token texts, attentions (L, H, n, n)) of the model (the trained one unless given), via read_text."""
    reading = read_text(text, model)
    return reading.token_texts, reading.attentions

pytestmark = pytest.mark.pages

LOCALES = Path(__file__).resolve().parent.parent / "locales"
FAMOUS = "The animal did not cross the street because it was too tired"


def strings(lang: str) -> dict:
    with (LOCALES / lang / "pretrained.toml").open("rb") as fh:
        return tomllib.load(fh)


def open_lesson(lang: str = "en", query: dict | None = None) -> AppTest:
    return open_page("pretrained", lang, query=query, timeout=300)


def answer(at: AppTest) -> AppTest:
    at.radio(key="pretrained_predict").set_value(1).run()
    at.radio(key="pretrained_switch_predict").set_value(1).run()
    return at


def figure(at: AppTest, key: str) -> dict:
    found = [json.loads(el.proto.spec) for el in at.get("plotly_chart") if el.proto.id.endswith("-" + key)]
    assert len(found) == 1, (key, [el.proto.id for el in at.get("plotly_chart")])
    return found[0]


def model_views(at: AppTest) -> list:
    return at.get("vega_lite_chart")


def custom(at: AppTest, text: str) -> AppTest:
    at.selectbox(key="pretrained_preset").set_value("custom").run()
    at.text_input(key="pretrained_text").input(text).run()
    return at


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_page_draws_the_sink_and_asks_before_showing_any_head(lang, presenter):
    at = open_lesson(lang, query={"presenter": "true"} if presenter else None)
    assert_clean(at)
    shown = "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info])
    tokens, weights = attention_maps(FAMOUS)
    link = weights[:, :, tokens.index("it"), tokens.index("animal")]
    layer, head = np.unravel_index(int(np.argmax(link)), link.shape)
    assert f"L{layer}H{head}" not in shown and f"{link.max():.0%}" not in shown  # no head, no answer above them
    assert figure(at, "pretrained_sink_map")
    questions = [r.label for r in at.radio if r.key.endswith("_predict")]
    assert questions == [strings(lang)["link"]["predict_q"]]  # the second names "the head that links it to animal"
    assert model_views(at) == []  # no head's map before both answers
    keys = [el.proto.id.split("-", 2)[-1] for el in at.get("plotly_chart")]
    assert keys == ["pretrained_sink_map"]
    assert strings(lang)["answer_first"] in [i.value for i in at.info]


def test_the_first_answer_alone_still_shows_no_head():
    at = open_lesson()
    at.radio(key="pretrained_predict").set_value(1).run()
    assert [r.label for r in at.radio if r.key.endswith("_predict")] == [strings("en")["link"]["predict_q"],
                                                                          strings("en")["switch"]["predict_q"]]
    assert model_views(at) == []
    assert not [el for el in at.get("plotly_chart") if "pretrained_lines" in el.proto.id]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_after_both_answers_every_section_draws(lang):
    at = answer(open_lesson(lang))
    assert_clean(at)
    assert len(model_views(at)) == 1
    for key in ("pretrained_lines", "pretrained_heat", "pretrained_find_bars", "pretrained_pair_0",
                "pretrained_pair_1", "pretrained_wino_map"):
        assert figure(at, key)
    assert len(at.dataframe) >= 1 and len(at.table) >= 1  # the ranked heads (a grid), the catalogue (wrapped)
    links = [(link.proto.page, link.proto.label) for link in at.get("page_link")]  # "weight is not influence" ->
    assert (page("heads").url_path, strings(lang)["influence_link"]) in links  # lesson 10, where it is measured


def test_model_view_spec_is_selectable_and_covers_every_head():
    at = answer(open_lesson())
    chart = model_views(at)[0].proto
    spec = json.loads(chart.spec)
    assert [p["name"] for layer in spec["layer"] for p in layer.get("params", [])] == ["head"]
    assert spec["usermeta"]["embedOptions"]["renderer"] == "canvas"


def test_the_picked_head_is_the_models_own_matrix():
    at = answer(open_lesson())
    at.selectbox(key="pretrained_layer").set_value(0).run()
    at.selectbox(key="pretrained_head").set_value(2).run()
    assert_clean(at)
    z = decode_array(figure(at, "pretrained_heat")["data"][0]["z"])
    _, weights = attention_maps(FAMOUS)
    np.testing.assert_allclose(z, weights[0, 2], atol=1e-6)
    assert at.query_params["pretrained_layer"] == "0" and at.query_params["pretrained_head"] == "2"


def test_hiding_cls_and_sep_drops_them_and_renormalises():
    at = answer(open_lesson())
    at.toggle(key="pretrained_hide_special").set_value(True).run()
    assert_clean(at)
    heat = figure(at, "pretrained_heat")
    z = decode_array(heat["data"][0]["z"])
    labels = heat["layout"]["yaxis"]["ticktext"]
    assert "[CLS]" not in labels and "[SEP]" not in labels and len(labels) == 12
    np.testing.assert_allclose(z.sum(axis=1), 1.0, atol=1e-6)
    assert strings("en")["hide_on"] in [c.value for c in at.caption]


def test_hiding_cls_and_sep_keeps_the_picked_token():
    at = answer(open_lesson())
    at.selectbox(key="pretrained_token").set_value(5).run()  # "cross"
    at.toggle(key="pretrained_hide_special").set_value(True).run()
    assert_clean(at)
    assert "“cross”" in figure(at, "pretrained_lines")["layout"]["title"]["text"]
    assert at.selectbox(key="pretrained_token").value == 5


def test_extreme_pickers_last_layer_head_and_token():
    at = answer(open_lesson())
    at.selectbox(key="pretrained_layer").set_value(5).run()
    at.selectbox(key="pretrained_head").set_value(11).run()
    at.selectbox(key="pretrained_token").set_value(13).run()
    at.selectbox(key="pretrained_from").set_value(11).run()
    at.selectbox(key="pretrained_to").set_value(0).run()
    assert_clean(at)
    assert figure(at, "pretrained_find_bars")


def test_same_word_twice_says_so():
    at = answer(open_lesson())
    at.selectbox(key="pretrained_to").set_value(at.selectbox(key="pretrained_from").value).run()
    assert_clean(at)
    assert strings("en")["same_word"] in [i.value for i in at.info]


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("text, share", [("猫がマットの上に座った。それは満足そうだった。", "100%"), ("😀 🙃 🐱", "100%"),
                                         ("xqzzyv 😀 猫 犬", "75%")])
def test_japanese_emoji_or_unknown_text_gets_the_english_only_message(lang, text, share):
    at = custom(open_lesson(lang), text)
    assert_clean(at)
    assert [w.value for w in at.warning] == [strings(lang)["not_english"].format(share=share)]
    assert at.get("plotly_chart") == [] and model_views(at) == []


@pytest.mark.parametrize("text", ["", "   ", "it"])
def test_unreadable_text_gets_a_clear_warning(text):
    at = custom(open_lesson(), text)
    assert_clean(at)
    assert len(at.warning) == 1
    assert at.get("plotly_chart") == []


def test_a_sentence_over_the_token_limit_is_shown_on_its_first_words():
    # "word" is one WordPiece token: 60 words + [CLS] + [SEP] = 62 tokens; the first 38 words + 2 fit in 40
    at = answer(custom(open_lesson(), " ".join(["word"] * 60)))
    assert_clean(at)
    strings = load_strings("en")
    assert strings["pretrained.too_many_tokens"].format(n=62, limit=MAX_TOKENS, shown=MAX_TOKENS) in [
        i.value for i in at.info]
    assert model_views(at) != []


def test_ten_thousand_characters_are_cut_with_a_notice():
    text = "the cat sat on the mat " * 435
    at = custom(open_lesson(), text)
    assert_clean(at)
    assert at.text_input(key="pretrained_text").value == text[:MAX_CHARS]  # the box (and link) keep what is read
    assert load_strings("en")["common.text_cut_kept"].format(n=f"{len(text):,}", limit=MAX_CHARS) in [
        x.value for x in at.toast]  # (the frame cut the paste: a toast says how long it was)


@pytest.mark.parametrize("text", ["<script>alert(1)</script> is not a cat", "**bold** [x](javascript:alert(1)) it"])
def test_html_and_markdown_are_words_like_any_other(text):
    at = answer(custom(open_lesson(), text))
    assert_clean(at)
    assert all("<script>" not in c.value for c in at.caption)


def test_a_link_with_bad_values_falls_back_with_a_notice():
    at = open_lesson(query={"pretrained_layer": "99", "pretrained_head": "x", "pretrained_preset": "nope"})
    answer(at)
    assert_clean(at)
    assert at.selectbox(key="pretrained_layer").value == 3 and at.selectbox(key="pretrained_head").value == 1
    assert at.selectbox(key="pretrained_preset").value == "0"


def test_a_link_opens_the_same_head():
    at = answer(open_lesson(query={"pretrained_layer": "2", "pretrained_head": "8", "pretrained_preset": "4"}))
    assert_clean(at)
    assert (at.selectbox(key="pretrained_layer").value, at.selectbox(key="pretrained_head").value) == (2, 8)
    assert figure(at, "pretrained_heat")["layout"]["title"]["text"] == "L2H8"


# --- the once-per-process results, made in the background at start-up ------------------------------------------


def shown_numbers(at: AppTest) -> list[str]:
    """Every sentence and table of the page once both questions are answered (the results' numbers are in them)."""
    return ([m.value for m in at.markdown] + [c.value for c in at.caption]
            + [df.value.to_csv() for df in at.dataframe] + [tb.value.to_csv() for tb in at.table])


class Watched(startup.Background):
    """A fresh start-up computation that records whether each ask found it ready, and computes only once asked
    (so the page asks first)."""

    def __init__(self, compute):
        self.asked = threading.Event()
        self.ready_when_asked: list[bool] = []
        self._then = compute
        super().__init__("test-pretrained-results", self._gated)

    def _gated(self):
        assert self.asked.wait(timeout=300), "the page never asked"
        return self._then()

    def result(self):
        self.ready_when_asked.append(self.ready())
        self.asked.set()
        return super().result()


def test_the_page_shows_the_same_numbers_whether_or_not_the_start_up_results_were_ready(monkeypatch):
    import ui.pretrained.page as lesson

    lesson.measures()  # made by the start-up thread (or here) before the page asks
    ready = shown_numbers(answer(open_lesson()))
    late = {"TRAINED": Watched(lambda: set_results(load_model(), load_pretrained_sets())),
            "UNTRAINED": Watched(lesson._untrained_results),
            "MEASURES": Watched(lambda: lesson_measures(lesson.TRAINED.result(), lesson.UNTRAINED.result(),
                                                        load_pretrained_sets()))}
    for name, background in late.items():  # as on a server whose start-up thread is still busy
        monkeypatch.setattr(lesson, name, background)
        background.start()
    waited = shown_numbers(answer(open_lesson()))
    for background in late.values():
        assert background.ready_when_asked[0] is False and background.ready_when_asked[-1] is True
    assert waited == ready
    again = shown_numbers(answer(open_lesson()))  # another session: the same results, not computed again
    assert again == ready and [b.runs for b in late.values()] == [1, 1, 1]
    assert any("L3H1" in line for line in ready)  # the famous head is among the numbers compared


def test_lesson_8_registers_its_start_up_work_in_order():
    import ui.pretrained.page as lesson

    names = [b.name for b in startup.registered()]
    mine = [n for n in names if n.startswith("pretrained-")]
    assert mine == ["pretrained-trained", "pretrained-untrained", "pretrained-measures"]
    assert lesson.TRAINED is startup.register_startup("pretrained-trained", lambda: None)  # registered once


# --- the learner's sentence: lesson 6's rule, and what "spread evenly" counts ---------------------------------------


def test_find_the_head_follows_the_typed_sentences_first_pronoun():
    at = answer(custom(open_lesson(), "The teacher told the student that she had passed the exam"))
    assert_clean(at)
    words = "The teacher told the student that she had passed the exam".split()
    source, target = at.selectbox(key="pretrained_from").value, at.selectbox(key="pretrained_to").value
    assert (words[source], words[target]) == ("she", "teacher")  # the first pronoun, the first noun after "the"
    assert strings("en")["find_rule"].format(source="she", target="teacher") in [c.value for c in at.caption]


def test_a_sentence_without_a_pronoun_says_so():
    at = answer(custom(open_lesson(), "The old man read the newspaper in the quiet garden"))
    assert_clean(at)
    assert strings("en")["find_no_pronoun"] in [i.value for i in at.info]


@pytest.mark.parametrize("hide, n", [(False, 14), (True, 12)])
def test_spread_evenly_counts_the_tokens_shown(hide, n):
    at = answer(open_lesson(query={"pretrained_hide_special": "true"} if hide else None))
    assert_clean(at)
    shown = [c.value for c in at.caption if "Spread evenly" in c.value]
    assert shown and f"over the {n} tokens shown, each would get {1 / n:.1%}" in shown[0]
    assert len(read_text(FAMOUS).tokens) == 14  # [CLS] + 12 words + [SEP]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_catalogue_downloads_as_csv_with_a_bom_and_translated_headers(lang, monkeypatch):
    from tests.apptest_utils import recorded_downloads

    files = recorded_downloads(monkeypatch)
    at = answer(open_lesson(lang))
    buttons = {b.key: files[b.proto.url] for b in at.get("download_button")}
    data = buttons["pretrained_catalogue_csv"]
    assert data.startswith(b"\xef\xbb\xbf")
    header = data.decode("utf-8-sig").splitlines()[0].split(",")
    assert header[0] == strings(lang)["col_kind"] and strings(lang)["col_held_out"] in header
    assert len(data.decode("utf-8-sig").splitlines()) == 1 + 7  # one row per kind


def test_pronoun_token_gives_the_model_views_token_picker_the_same_start():
    from ui.pretrained.page import SentenceView, pronoun_token

    def view(text):
        reading = read_text(text)
        return SentenceView(text, tuple(reading.token_texts), tuple((w.text, w.first, w.stop) for w in reading.words),
                            reading.attentions)

    teacher = view("The teacher told the student that she had passed the exam")
    assert teacher.tokens[pronoun_token(teacher)] == "she"
    assert pronoun_token(view("The old man read the newspaper")) is None
