"""Lesson 11's runs trained in a child process (ui/tiny_gpt/worker.py): the same run as trained here, progress while
it trains, a learner who leaves kills the child at once (no process left), a bounded number of children with the
others queued, a second session following the first, a failing child said in one line. No test times anything: each
waits on a state (a file the child writes, an event) with a generous timeout; the gated children below wait for a
file the test writes, so nothing depends on how fast the machine is."""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tests.test_tiny_gpt_page import cache  # noqa: F401 - the fixture: an empty folder for the runs

from attention_core.tiny_gpt import Config, train
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from ui.tiny_gpt.runs import SharedRuns
from ui.tiny_gpt.worker import Queued, Trainer, TrainingFailed

WAIT = 300  # seconds: generous, for a busy 2-core machine (a state is waited on, never a time asserted)


def small(**kw) -> Config:
    return replace(Config(n_layer=2, n_head=2, d_model=8, vocab=8, seq_len=8, segment_min=2, segment_max=4,
                          batch_size=4, steps=12, eval_size=6), **kw)


def gated(folder: str, config, seed, every, progress, keep_snapshots):
    """In the child: train as train does, writing <pid>.pid first, then waiting after step 0 until `folder`/go
    exists (the test writes it)."""
    Path(folder, f"{os.getpid()}.pid").write_text(str(os.getpid()))

    def step(n):
        progress(n)
        while n == 0 and not Path(folder, "go").exists():
            time.sleep(0.01)

    return train(config, seed, every, step, keep_snapshots)


def niceness(config, seed, every, progress, keep_snapshots) -> int:
    """In the child: its niceness instead of a run."""
    return os.nice(0)


def test_a_run_trains_at_the_lowest_priority():
    assert Trainer(fit=niceness).train(small(), 0) == 19


def wait_for(predicate, what: str):
    deadline = time.monotonic() + WAIT
    while not predicate():
        assert time.monotonic() < deadline, f"waited {WAIT} s for {what}"
        time.sleep(0.02)


def pids(folder: Path) -> list[int]:
    return sorted(int(p.stem) for p in folder.glob("*.pid"))


def gone(pid: int) -> bool:
    return not Path(f"/proc/{pid}").exists()


def assert_same_run(a, b):
    from tests.test_tiny_gpt_training import assert_same_run as same

    same(a, b)


@pytest.fixture()
def gate(tmp_path):
    return tmp_path


def test_a_run_trained_in_a_child_is_the_run_trained_here_and_its_progress_arrives(gate):
    config = small()
    trainer = Trainer(fit=functools.partial(gated, str(gate)))
    seen = []

    def progress(step):
        seen.append(step)
        if step == 0:
            (gate / "go").touch()  # the child has reported step 0 and waits: let it go on

    stats = {}
    run = trainer.train(config, 3, every=4, progress=progress, stats=stats)
    assert_same_run(run, train(config, 3, every=4))  # the reference: the core's train, called here
    assert seen and seen[0] == 0 and all(s in (0, 4, 8, 12) for s in seen)
    assert stats["pickle_bytes"] > 0 and stats["max_rss_kb"] > 0 and stats["pid"] == pids(gate)[0]
    assert multiprocessing.active_children() == [] and gone(stats["pid"]) and trainer.running() == 0


def test_the_default_worker_trains_the_cores_run():
    config = small(steps=9)
    run = Trainer().train(config, 5, every=3, keep_snapshots=False)
    assert_same_run(run, train(config, 5, every=3, keep_snapshots=False))
    assert multiprocessing.active_children() == []


def test_a_learner_who_leaves_kills_the_child_at_once(gate):
    trainer = Trainer(fit=functools.partial(gated, str(gate)))  # the gate never opens: the child would wait forever

    def progress(step):
        if pids(gate):
            raise StopException()  # what Streamlit raises at the progress update once the learner has left

    with pytest.raises(StopException):
        trainer.train(small(), 0, every=4, progress=progress)
    [pid] = pids(gate)
    assert gone(pid) and multiprocessing.active_children() == [] and trainer.running() == 0


def one_training_one_queued(trainer: Trainer, gate: Path, config):
    """Two learners in threads: the first's child trains (held at step 0 by the gate), the second is told it is queued.
    -> (the two threads, {seed: run} as they finish, the queued calls, the errors)."""
    got, queued, errors = {}, [], []

    def learner(seed, on_queue=None):
        try:
            got[seed] = trainer.train(config, seed, every=4, queued=on_queue)
        except BaseException as error:  # noqa: BLE001 - asserted by the callers
            errors.append(error)

    first = threading.Thread(target=learner, args=(1,))
    first.start()
    wait_for(lambda: pids(gate), "the first child")
    second = threading.Thread(target=learner, args=(2, queued.append))
    second.start()
    wait_for(lambda: queued, "the second learner to be told it is queued")
    return (first, second), got, queued, errors


def release(gate: Path, threads) -> None:
    (gate / "go").touch()
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive()


def test_children_are_bounded_and_the_others_queue(gate):
    trainer = Trainer(limit=1, fit=functools.partial(gated, str(gate)))
    config = small()
    threads, got, queued, errors = one_training_one_queued(trainer, gate, config)

    def leaves(ahead):
        raise StopException()

    with pytest.raises(StopException):  # a third learner queues, then leaves: it leaves the queue, no child started
        trainer.train(config, 3, every=4, queued=leaves)
    assert queued[0] == 1 and trainer.running() == 1 and trainer.waiting() == 1
    assert len(pids(gate)) == 1 and len(multiprocessing.active_children()) == 1
    release(gate, threads)
    assert not errors and len(pids(gate)) == 2  # the second trained after the first, the third never
    for seed in (1, 2):
        assert_same_run(got[seed], train(config, seed, every=4))
    assert multiprocessing.active_children() == [] and trainer.running() == 0 and trainer.waiting() == 0


def test_five_learners_at_once_are_all_trained_none_refused_each_told_its_place(gate):
    """A class pressing Train at once: two children train, the other three wait with their place in line (2, 3 and 4
    runs ahead of them), which only falls while they wait; nobody is turned away and every run is the core's run."""
    trainer = Trainer(limit=2, fit=functools.partial(gated, str(gate)))
    config = small()
    got, places, errors = {}, {seed: [] for seed in range(1, 6)}, []

    def learner(seed):
        try:
            got[seed] = trainer.train(config, seed, every=4, queued=places[seed].append)
        except BaseException as error:  # noqa: BLE001 - asserted below
            errors.append(error)

    threads = [threading.Thread(target=learner, args=(seed,)) for seed in range(1, 6)]
    for thread in threads:
        thread.start()
    wait_for(lambda: len(pids(gate)) == 2 and trainer.waiting() == 3, "two children training and three waiting")
    wait_for(lambda: sum(bool(p) for p in places.values()) == 3, "the three waiting learners told their place")
    assert not errors and trainer.running() == 2
    assert sorted(p[0] for p in places.values() if p) == [2, 3, 4]  # each told at once how many are ahead of it
    release(gate, threads)
    assert not errors and sorted(got) == [1, 2, 3, 4, 5] and len(pids(gate)) == 5
    for seed, seen in places.items():
        assert seen == sorted(seen, reverse=True), (seed, seen)  # a place only moves up the line
        assert_same_run(got[seed], train(config, seed, every=4))
    assert multiprocessing.active_children() == [] and trainer.running() == 0 and trainer.waiting() == 0


def test_a_second_session_follows_the_first_and_one_child_trains(gate):
    trainer = Trainer(fit=functools.partial(gated, str(gate)))
    store, config, got, followed = SharedRuns(), small(), [], []
    key = (config, 4, True)

    def compute():
        return trainer.train(config, 4, 4, lambda s: store.progress.__setitem__(key, s),
                             lambda ahead: store.progress.__setitem__(key, Queued(ahead)))

    def follow(state):
        followed.append(state)
        (gate / "go").touch()  # the follower has seen the leader's progress: let the child finish

    leader = threading.Thread(target=lambda: got.append(store.run(key, compute, True, lambda s: None)))
    leader.start()
    wait_for(lambda: pids(gate), "the leader's child")
    wait_for(lambda: key in store.progress, "the leader's progress")
    got.append(store.run(key, compute, True, follow))
    leader.join(WAIT)
    assert len(got) == 2 and got[0] is got[1] and store.get(key) is got[0]
    assert followed and followed[0] == 0 and len(pids(gate)) == 1
    assert_same_run(got[0], train(config, 4, every=4))


def test_a_child_that_raises_is_said_in_one_line():
    with pytest.raises(TrainingFailed, match=r"^ValueError: every must be >= 1, got 0$"):
        Trainer().train(small(), 0, every=0)
    assert multiprocessing.active_children() == []


def test_a_child_that_is_killed_is_said_in_one_line(gate):
    trainer = Trainer(fit=functools.partial(gated, str(gate)))

    def progress(step):
        for pid in pids(gate):
            os.kill(pid, signal.SIGKILL)  # (the gate never opens: the child waits at step 0 until killed)

    with pytest.raises(TrainingFailed) as caught:
        trainer.train(small(), 0, every=4, progress=progress)
    assert str(caught.value) == "the training process was stopped by signal 9 before it finished"
    assert multiprocessing.active_children() == [] and trainer.running() == 0


# ---------------------------------------------------------------- the page

@pytest.mark.pages
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_failing_child_is_one_line_on_the_page_not_a_traceback(lang, cache, monkeypatch):
    import ui.tiny_gpt.runs
    from tests.apptest_utils import open_page
    from tests.seam import strings

    monkeypatch.setattr(ui.tiny_gpt.runs, "EVERY", 0)  # the core refuses it: the child raises ValueError
    at = open_page("tiny_gpt", lang, query={"tiny_seed": "7"}, timeout=900)
    at.button(key="tiny_train").click().run(timeout=900)
    assert not at.exception and not at.warning
    label = strings(lang)["tiny_gpt.run_label"].format(layers=2, heads=2, seed=7, rate=0.01)
    [error] = at.error
    assert error.value == strings(lang)["tiny_gpt.failed"].format(
        what=label, reason="ValueError: every must be >= 1, got 0")
    assert not at.get("plotly_chart") and not at.get("progress")
    at.run(timeout=900)  # the next run: the button again, no "stopped" warning (the run failed, it was not stopped)
    assert not at.exception and not at.warning and at.button(key="tiny_train")
    assert multiprocessing.active_children() == []


def test_a_child_does_not_run_the_parents_main_module(tmp_path, monkeypatch):
    """In a Streamlit server, sys.modules["__main__"] is the page script (the script runner puts it there): a child
    that ran it would run the app. The fork server's children skip it."""
    import sys
    import types

    script = tmp_path / "app.py"
    script.write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    config = small(steps=4)
    assert_same_run(Trainer().train(config, 1, every=2), train(config, 1, every=2))
    assert not (tmp_path / "ran").exists()
