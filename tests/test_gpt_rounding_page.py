"""AppTest: lesson 9's 4-bit caveat shows the rounding study's numbers (attention_core.gpt_studies.rounding, read from disk),
each formatted here from the stored result, in both languages; before the study is on disk, a note that it is being
measured and no numbers. (The stored numbers against a recomputation: tests/test_gpt_rounding.py.)"""

from __future__ import annotations

import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.test_gpt_page import shown, strings
from tests.test_gpt_rounding import stated

pytestmark = pytest.mark.pages

OPENING = {"en": "**What the rounding changes**", "ja": "**丸めが何を変えるか**"}


@pytest.fixture(scope="module")
def result():
    from attention_core.gpt_studies import rounding
    from attention_core.smollm2.weights import GPTUnavailable

    try:
        return rounding.measured_study(*stated())  # read from disk (measured here on a machine that never ran it)
    except GPTUnavailable as missing:
        pytest.skip(f"the model package is absent: {missing}")


def percent(p: float) -> str:
    return f"{p * 100:.1f} %"  # every number of the caveat is above 1 %


def caveat(at, lang: str) -> str:
    lines = [m for m in shown(at) if m.startswith(OPENING[lang])]
    assert len(lines) == 1, shown(at)[:3]
    return lines[0]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_caveat_shows_the_stored_numbers(result, lang):
    at = open_page("gpt", lang, timeout=180)
    assert_clean(at)
    line = caveat(at, lang)
    (a, b), (score, score_b) = result["heads"], result["scores"]
    kept = a == b and result["shared"] >= 7
    key = "rounding_kept" if kept else "rounding_moved"
    assert line.startswith(strings(lang)[key][:20])
    for number in (percent(result["error_first"]), percent(result["error_second"]), f"L{a[0]}H{a[1]}",
                   f"{score:.2f}", f"{score_b:.2f}", f"{result['shared']} ", percent(result["p"][0]),
                   percent(result["p"][1]), *(percent(p) for p in result["other_p"]), f" {result['differ']} ",
                   f" {result['positions']} ", percent(result["differ"] / result["positions"]),
                   percent(result["interval"][0]), percent(result["interval"][1]), "Paris", stated()[0]):
        assert number in line, (number, line)
    assert "this page does not measure" not in " ".join(i.value for i in at.info)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_before_the_study_is_on_disk_the_page_says_it_is_being_measured(monkeypatch, lang):
    from attention_core.gpt_studies import rounding
    from ui.gpt import rounding as gpt_rounding

    gpt_rounding._rounding_found.clear()  # the process's copy of the result, read before
    monkeypatch.setattr(rounding, "stored_study", lambda *args: None)
    monkeypatch.setattr(rounding, "measure_in_background", lambda *args: None)  # a start-up here starts nothing
    at = open_page("gpt", lang, timeout=180)
    assert_clean(at)
    note = strings(lang)["rounding_pending"]
    assert note in shown(at)
    assert not [m for m in shown(at) if m.startswith(OPENING[lang])]
    gpt_rounding._rounding_found.clear()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_second_rounding_that_moves_the_heads_is_not_called_kept(result, lang):
    from ui.gpt import rounding as gpt_rounding
    from ui.shared.i18n import Translator

    moved = {**result, "heads": [result["heads"][0], [0, 0]], "shared": 5}
    line = gpt_rounding.rounding_caveat(Translator(lang), moved)
    assert line.startswith(strings(lang)["rounding_moved"][:20]) and "L0H0" in line and " 5 " in line
    assert strings(lang)["rounding_kept"].split("{head}")[0] not in line
