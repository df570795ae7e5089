"""Issue 40 item 18: on a new server lesson 10 waits for its start-up work (the base: the model, the sets' runs, the
lighter studies; the random-head band: hundreds of runs). The page says what is running and for how long (the time
measured so far; for the band, what is left at the pace its runs went), and fills itself in once the work is done:
a fragment polls every few seconds and reruns the page (a browser does the polling; AppTest reruns by hand).

The work is held back by a gate (a Background that waits for the test), so no test recomputes a study; the values
released are the machine's stored results (tests/test_page_seam_heads.py's fixture)."""

from __future__ import annotations

import threading

import pytest

from tests.apptest_utils import assert_clean, open_page
from tests.test_page_seam_heads import results  # noqa: F401 - a fixture: the machine's stored base and band

pytestmark = pytest.mark.pages


def radios(at) -> list[str]:
    return [r.key for r in at.radio]


def infos(at) -> str:
    return "\n".join(i.value for i in at.info)


@pytest.fixture
def held_back(monkeypatch):
    """-> hold(name, value): results.<name> becomes work that waits for the returned gate, then gives value();
    the progress records are fresh, each with its measured time fixed (elapsed: 83 s for the base, 120 s the band)."""
    from ui.heads import results
    from ui.shared.startup import Background

    gates = []

    def hold(name: str, value) -> threading.Event:
        gate = threading.Event()
        gates.append(gate)
        monkeypatch.setattr(results, name, Background(f"test-{name}", lambda: (gate.wait(), value())[1]))
        return gate

    for name, seconds in (("BASE_PROGRESS", 83.0), ("PROGRESS", 120.0)):
        progress = results.Progress()
        monkeypatch.setattr(progress, "elapsed", lambda s=seconds: s)
        monkeypatch.setattr(results, name, progress)
    monkeypatch.setattr(results, "BAND_WAIT", 0.2)
    yield hold, results
    for gate in gates:  # (the held work ends with the test)
        gate.set()


def test_the_page_says_what_runs_for_how_long_and_fills_in_the_base(held_back):
    hold, results = held_back
    base = results.BASE.result()  # the machine's stored base (read from disk)
    base_gate = hold("BASE", lambda: base)
    hold("BAND", lambda: None)
    results.BASE_PROGRESS(2, 5, "composition")  # the third of five steps, 83 s after the first
    results.PROGRESS(17, 606)  # 17 of 606 runs in 120 s

    at = open_page("heads", "en")
    assert_clean(at)
    shown = infos(at)
    assert "step 3 of 5" in shown and "(K-composition)" in shown and "1 min 23 s so far" in shown
    assert "fills itself in" in shown and "a few seconds" not in shown and "reload" not in shown
    assert at.get("plotly_chart") == [] and "heads_off_predict" not in radios(at)  # nothing drawn before the base

    base_gate.set()
    assert results.BASE.wait(30)
    at.run()  # (what the waiting fragment does once the base is there: rerun the page)
    assert_clean(at)
    shown = infos(at)
    assert "step 3 of 5" not in shown
    left = 120.0 * (606 - 17) / 17  # the time of the runs so far, at their pace, for the runs left: 4157.6 s
    assert "17 of 606 runs in 2 min 00 s" in shown and f"about {int(left // 60)} min {round(left % 60):02d} s more" in shown
    assert "reload" not in shown
    assert at.get("plotly_chart") and "heads_off_predict" not in radios(at)  # the base's sections, not the band's


def test_the_sections_that_need_the_band_fill_in_when_it_is_done(held_back, results):
    hold, module = held_back
    band_gate = hold("BAND", lambda: results[1])
    module.PROGRESS(0, 606)  # the runs have begun, none done yet: no pace to tell

    at = open_page("heads", "en")
    assert_clean(at)
    assert "606 runs" in infos(at) and "heads_off_predict" not in radios(at)
    band_gate.set()
    assert module.BAND.wait(30)
    at.run()
    assert_clean(at)
    assert "runs" not in infos(at) and "heads_off_predict" in radios(at)  # the switch-off question, with its band


def test_how_long_is_said_in_both_languages(monkeypatch):
    from ui.heads import results
    from ui.heads.waiting import band_message, duration
    from ui.shared.i18n import Translator

    en, ja = Translator("en"), Translator("ja")
    assert [duration(en, s) for s in (0.4, 45, 59.6, 185)] == ["0 s", "45 s", "1 min 00 s", "3 min 05 s"]
    assert [duration(ja, s) for s in (45, 185)] == ["45 秒", "3 分 05 秒"]
    progress = results.Progress()
    progress(300, 600)
    monkeypatch.setattr(progress, "elapsed", lambda: 150.0)  # half the runs in 150 s: as long again to go
    monkeypatch.setattr(results, "PROGRESS", progress)
    assert "600 回中 300 回の実行が 2 分 30 秒" in band_message(ja) and "残りはおよそ 2 分 30 秒" in band_message(ja)
