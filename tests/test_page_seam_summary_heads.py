"""The summary's lesson-10 claim as shown, against lesson 10's own seam references (the second-copy losses through
model.py's pass with heads switched off, the heads picked from lesson 9's maps of the picking set), and its two
states: the claim in words while the random-head band is being computed, the claim with its figure once it is."""

from __future__ import annotations

import numpy as np
import pytest

from tests.apptest_utils import assert_clean, decode_array, open_page
from tests.seam import figure, find_sentence, number, strings, texts
from tests.test_page_seam_heads import K, SEQUENCES, picked, results, second_copy_loss  # noqa: F401 - a fixture

pytestmark = pytest.mark.pages


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_switch_off_claim_is_the_lessons_measurement(lang, results):  # noqa: F811 - the fixture
    _, band = results
    at = open_page("summary", lang, timeout=600)
    assert_clean(at)
    shown = find_sentence(texts(at), "summary.claim_heads", lang)
    ranked, _ = picked()
    top, clean = second_copy_loss(tuple(ranked[:K])), second_copy_loss()
    assert int(shown["k"]) == K and int(shown["sequences"]) == SEQUENCES
    assert number(shown["loss"]) == pytest.approx(top.mean(), abs=0.006)
    assert number(shown["clean"]) == pytest.approx(clean.mean(), abs=0.006)
    fig = figure(at, "summary_heads")
    dots, zero = fig["data"][:2]
    draws = decode_array(dots["y"]).reshape(len(band.ablation.ks), -1)[-1]  # k = 8: the last row
    assert int(shown["draws"]) == draws.size
    assert number(shown["median"]) == pytest.approx(np.median(draws), abs=0.006)
    assert number(shown["percentile"]) == pytest.approx(100 * np.mean(draws < top.mean()), abs=0.5)
    assert decode_array(zero["y"])[-1] == pytest.approx(top.mean(), abs=1e-3)
    # the claim's words at the defaults: far above random sets of as many heads, and the sink heads far below it
    assert top.mean() > np.quantile(draws, 0.95) and number(shown["sinks"]) < top.mean() - 1.0
    # "the answer depends on what replaces them": the mean-ablated loss is the lesson's, and differs from the zeroed
    assert number(shown["mean_loss"]) == pytest.approx(float(band.ablation.induction_mean[-1].mean()), abs=0.006)
    assert abs(number(shown["mean_loss"]) - top.mean()) > 0.1


def test_while_the_band_is_computed_the_claim_is_said_in_words(monkeypatch):
    from ui.heads import study

    monkeypatch.setattr(study.BAND, "ready", lambda: False)
    monkeypatch.setattr(study.BAND, "start", lambda: None)
    monkeypatch.setattr(study.PROGRESS, "read", lambda: (17, 400))
    at = open_page("summary", "en", timeout=600)
    assert_clean(at)
    w = strings("en")
    assert w["summary.claim_heads_short"] in [m.value for m in at.markdown]
    assert w["summary.heads_running"].format(done=17, total=400) in [c.value for c in at.caption]
    assert not any(el.proto.id.endswith("-summary_heads") for el in at.get("plotly_chart"))
