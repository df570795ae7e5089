"""Lesson "Watch a head form": the runs shared by every session (one run per setting at a time, a stopped run leaves
nothing behind), and the page as a learner meets it (marked `pages`): nothing trained or shown before an answer,
the seed section's steps against the runs' curves, a learner's own run behind its button and kept off the disk, and
every control at its ends with a message, never a traceback."""

from __future__ import annotations

import math
import os
import threading
import time

import numpy as np
import pytest

from attention_core.attention import MAX_SEED
from attention_core.tiny_gpt import Config, eval_set
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from tests.apptest_utils import assert_clean, decode_array, open_page
from tests.seam import bar_labels, figure, find_sentence, number, strings, texts
from tests.test_tiny_gpt_curve import brute_force
from ui.tiny_gpt.runs import SharedRuns


# ---------------------------------------------------------------- one run per setting, shared

def test_two_sessions_asking_for_one_setting_train_it_once():
    store = SharedRuns()
    started, release, calls, followed, got = threading.Event(), threading.Event(), [], [], []

    def compute():
        calls.append(1)
        store.progress["k"] = 25
        started.set()
        release.wait(5)
        return "run"

    leader = threading.Thread(target=lambda: got.append(store.run("k", compute, False, lambda s: None)))
    leader.start()
    started.wait(5)
    waiter = threading.Thread(target=lambda: got.append(store.run("k", compute, False, followed.append)))
    waiter.start()
    time.sleep(1.2)  # the waiter follows the leader's progress while it waits
    release.set()
    leader.join(5)
    waiter.join(5)
    assert calls == [1] and got == ["run", "run"] and store.get("k") == "run"
    assert followed and set(followed) == {25}


def test_a_stopped_run_keeps_nothing_and_the_next_caller_trains():
    store = SharedRuns()

    def stopped():
        raise StopException()  # what Streamlit raises in the progress bar when the learner leaves

    with pytest.raises(StopException):
        store.run("k", stopped, False, lambda s: None)
    assert store.get("k") is None and store.progress == {}
    assert store.run("k", lambda: "second", False, lambda s: None) == "second"


def test_own_runs_are_bounded_and_offered_ones_stay():
    store = SharedRuns(max_own=2)
    store.run("offered", lambda: "o", False, None)
    for key in ("a", "b", "c"):
        store.run(key, lambda: key, True, None)
    assert store.get("a") is None and store.get("b") == "b" and store.get("c") == "c" and store.get("offered") == "o"


def test_the_builds_store_every_run_the_page_reads_from_disk_once(tmp_path, monkeypatch):
    """store_offered_runs (dev.py's and the Dockerfile's build) trains each run the page reads without a Train button:
    every choice of the controls (layers 1-2 x heads 1-2 x the five learning rates) at seeds 0-2 with snapshots, the
    seed section's seeds 3-9 without, and nothing once on disk: a class pressing the controls trains nothing."""
    import ui.tiny_gpt.runs as runs
    from attention_core.tiny_gpt import store

    monkeypatch.setattr(store, "cache_root", lambda: tmp_path)
    trained = []

    def fake_run(config, seed, every, snapshots):  # (a real run is seconds: the file is what the page looks for)
        trained.append((config, seed, snapshots))
        store.run_path(config, seed, every, snapshots).parent.mkdir(parents=True, exist_ok=True)
        store.run_path(config, seed, every, snapshots).touch()

    monkeypatch.setattr(runs, "cached_run", fake_run)
    rates = (0.003, 0.005, 0.01, 0.02, 0.03)  # the rate slider's stops
    want = {(Config(n_layer=layers, n_head=heads, learning_rate=rate), seed, True) for layers in (1, 2)
            for heads in (1, 2) for rate in rates for seed in (0, 1, 2)} | {(Config(), seed, False) for seed in range(3, 10)}
    assert runs.LEARNING_RATES == rates
    assert runs.store_offered_runs(processes=1) == len(want) == 67
    assert set(trained) == want and len(trained) == len(want)
    assert runs.store_offered_runs(processes=1) == 0 and len(trained) == len(want)  # once per machine
    for layers in (1, 2):
        for heads in (1, 2):
            for rate in rates:
                for seed in range(10):
                    config = Config(n_layer=layers, n_head=heads, learning_rate=rate)
                    assert runs.is_offered(config, seed) == ((config, seed, True) in want)  # no Train button: on disk
    assert not runs.is_offered(Config(learning_rate=0.04), 0) and not runs.is_offered(Config(steps=100), 0)


def test_the_build_trains_in_one_child_process_a_core_and_each_run_lands_once(tmp_path, monkeypatch):
    """The build spreads the missing runs over child processes (one a core): every missing run is written by a child,
    and what is on disk already is not trained again. The children's trainer is swapped for one that writes an empty
    file (their environment names the folder: a monkeypatch does not cross into a child)."""
    import ui.tiny_gpt.runs as runs
    from attention_core.tiny_gpt import store

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("TEST_PARENT_PID", str(os.getpid()))
    want = runs.offered_runs()
    first = want[0]
    store.run_path(first[0], first[1], runs.EVERY, first[2]).parent.mkdir(parents=True)
    store.run_path(first[0], first[1], runs.EVERY, first[2]).write_bytes(b"on disk already")
    assert runs.store_offered_runs(processes=2, train_one=touch_run_file) == len(want) - 1
    written = sorted(p.name for p in store.cache_root().iterdir())
    assert written == sorted(store.run_path(c, seed, runs.EVERY, snaps).name for c, seed, snaps in want)
    assert store.run_path(first[0], first[1], runs.EVERY, first[2]).read_bytes() == b"on disk already"
    assert {p.read_bytes() for p in store.cache_root().iterdir()} == {b"on disk already", b"trained in a child"}


def touch_run_file(config, seed, snapshots) -> None:  # (a child imports it by name: it lives at module level)
    import os

    from attention_core.tiny_gpt import store
    from ui.tiny_gpt.runs import EVERY

    assert os.getpid() != int(os.environ["TEST_PARENT_PID"])
    store.run_path(config, seed, EVERY, snapshots).write_bytes(b"trained in a child")


# ---------------------------------------------------------------- the page

@pytest.fixture()
def cache(tmp_path, monkeypatch):
    """An empty folder for this lesson's runs alone (lesson 9's model and results, which the page's last section
    reads, stay where they are)."""
    from attention_core.tiny_gpt import store

    folder = tmp_path / "attention-live" / "tiny_gpt"
    monkeypatch.setattr(store, "cache_root", lambda: folder)
    return folder


@pytest.mark.pages
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_nothing_is_trained_or_shown_before_the_first_answer(lang, cache):
    at = open_page("tiny_gpt", lang)
    assert_clean(at)
    shown = [el.proto.id.split("-", 2)[-1] for el in at.get("plotly_chart")]
    assert shown == [f"tiny_init_map_{layer}_{h}" for layer in range(2) for h in range(2)]  # the untrained heads only
    assert not at.get("progress")
    assert [r.key for r in at.radio if r.key.startswith("tiny_")] == ["tiny_curves_predict", "tiny_seeds_predict"]
    assert not cache.exists() or not any(cache.iterdir())
    assert at.info[0].value == strings(lang)["tiny_gpt.try"]  # "What to try" under the controls


@pytest.mark.pages
def test_the_seed_section_shows_each_seeds_formed_step(cache, monkeypatch):
    import ui.tiny_gpt.runs
    import ui.tiny_gpt.sections

    monkeypatch.setattr(ui.tiny_gpt.sections, "SEEDS", 3)  # 3 of the page's 10 seeds: a test of the section, not the claim
    at = open_page("tiny_gpt", "en", timeout=900)
    at.radio(key="tiny_seeds_predict").set_value(2).run(timeout=900)
    assert_clean(at)
    seqs = eval_set(Config())
    plateau = float(np.mean([math.log(len(set(row[:t].tolist()))) for row, o, r in
                             zip(seqs.tokens, seqs.offset, seqs.period) for t in range(o + r + 1, len(row))]))
    want, with_prev, flats = [], 0, []
    for seed in range(3):
        run = ui.tiny_gpt.runs.shared_runs().get((Config(), seed, True))  # the runs the page drew (curves: the seam test)
        ok = (run.induction[:, 1].max(axis=-1) >= 0.4) & (run.loss_repeated < plateau / 2)
        want.append(int(run.steps[np.argmax(ok)]))
        assert ok.any()
        with_prev += run.previous_token[np.argmax(ok), 0].max() >= 0.4  # a previous-token head when it formed
        flat = brute_force(run.steps.tolist(), run.loss_repeated.tolist(), want[-1], 0.1)
        flats.append(0 if flat is None else flat[1] - flat[0])
    fig = figure(at, "tiny_seeds_chart")
    assert bar_labels(fig) == ["seed 0", "seed 1", "seed 2"]
    assert decode_array(fig["data"][0]["y"]).tolist() == want
    said = find_sentence(texts(at), "tiny_gpt.seeds_numbers", "en")
    assert (number(said["median"]), number(said["low"]), number(said["high"])) == (
        float(np.median(want)), min(want), max(want))
    assert said["formed"] == "3" and said["seeds"] == "3"
    assert int(said["slowest"]) == int(np.argmax(want)) and number(said["margin"]) == 1500 - max(want)
    assert int(said["with_prev"]) == with_prev and int(said["plateaus"]) == sum(f >= 100 for f in flats)
    assert (number(said["flat_low"]), number(said["flat_high"])) == (min(flats), max(flats))


@pytest.mark.pages
def test_a_learners_own_run_waits_for_its_button_and_stays_off_the_disk(cache):
    query = {"tiny_layers": "1", "tiny_heads": "1", "tiny_seed": "7", "tiny_rate": "0.03"}
    at = open_page("tiny_gpt", "en", query=query, timeout=900)
    assert_clean(at)
    assert at.button(key="tiny_train") and not at.get("plotly_chart")  # (not even the untrained maps: no setting yet)
    assert not [r for r in at.radio if r.key == "tiny_curves_predict"]
    at.button(key="tiny_train").click().run(timeout=900)
    assert_clean(at)
    at.radio(key="tiny_curves_predict").set_value(3).run(timeout=900)
    assert_clean(at)
    curves = {tr["name"]: decode_array(tr["y"]) for tr in figure(at, "tiny_loss_chart")["data"]}
    assert len(curves["repeated tokens"]) == 61
    assert not cache.exists() or not any(cache.iterdir())  # an own run lives in memory only
    texts_shown = " ".join(texts(at))
    title = figure(at, "tiny_loss_chart")["layout"]["title"]["text"]
    assert "1 layer(s) × 1 head(s), seed 7, learning rate 0.03" in title
    assert strings("en")["tiny_gpt.control_is_this"] in texts_shown
    assert strings("en")["tiny_gpt.knockout_one_layer"] in texts_shown


@pytest.mark.pages
@pytest.mark.parametrize("query, own", [
    ({"tiny_layers": "2", "tiny_heads": "1", "tiny_seed": str(MAX_SEED), "tiny_rate": "0.003"}, True),
    ({"tiny_layers": "1", "tiny_heads": "2", "tiny_seed": "0", "tiny_rate": "0.03"}, False),  # every rate is offered
    ({"tiny_seed": "5"}, True),  # the default model, a seed the page does not offer: the learner's own run
    ({"tiny_layers": "1", "tiny_heads": "1", "tiny_seed": "2"}, False),  # offered: no button
    ({"tiny_layers": "3", "tiny_heads": "0", "tiny_rate": "7"}, False),  # not options: the defaults, with a notice
])
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_control_at_its_ends_shows_a_message_not_a_traceback(query, own, lang, cache):
    at = open_page("tiny_gpt", lang, query=query)
    assert_clean(at)
    buttons = [b for b in at.button if b.key == "tiny_train"]
    assert len(buttons) == (1 if own else 0)
    assert bool([r for r in at.radio if r.key == "tiny_curves_predict"]) == (not own)  # the page waits for it
    assert at.number_input(key="tiny_seed").value == int(query.get("tiny_seed", "0"))
    assert bool(at.opening_toasts) == (query.get("tiny_layers") == "3")  # unusable link values are reported


@pytest.mark.pages
def test_the_control_of_a_learners_own_run_is_a_long_action_too(cache):
    at = open_page("tiny_gpt", "en", query={"tiny_heads": "1", "tiny_seed": "7"}, timeout=900)
    at.button(key="tiny_train").click().run(timeout=900)
    at.radio(key="tiny_curves_predict").set_value(2).run(timeout=900)
    assert_clean(at)
    assert at.button(key="tiny_train_control") and not [r for r in at.radio if r.key == "tiny_control_predict"]
    at.button(key="tiny_train_control").click().run(timeout=900)
    at.radio(key="tiny_control_predict").set_value(3).run(timeout=900)
    assert_clean(at)
    said = find_sentence(texts(at), "tiny_gpt.control_numbers", "en")
    one_layer = {tr["name"]: decode_array(tr["y"]) for tr in figure(at, "tiny_control_chart")["data"]}["1 layer"]
    assert number(said["loss"]) == pytest.approx(one_layer[-1], abs=0.005)
    assert not [b for b in at.button if b.key == "tiny_train_control"]  # trained: kept for the session's next runs


@pytest.mark.pages
@pytest.mark.parametrize("seed", ["-1", "12345678901234567890"])
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_seed_outside_its_bounds_is_said_and_not_taken(seed, lang, cache):
    """The seed box took -1 and a 20-digit number without a word: it is bounded, says its bounds under it, and a link
    with a seed outside them is reported and the default used."""
    at = open_page("tiny_gpt", lang, query={"tiny_seed": seed})
    assert_clean(at)
    box = at.number_input(key="tiny_seed")
    assert (box.value, box.min, box.max) == (0, 0, MAX_SEED)
    bounds = strings(lang)["tiny_gpt.seed_bounds"].format(max_seed=f"{MAX_SEED:,}")
    assert bounds in [c.value for c in at.caption] and f"{MAX_SEED:,}" in bounds
    assert at.opening_toasts
