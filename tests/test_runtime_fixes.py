"""Process start-up. ui.startup: the background work runs once per process however often and from however many threads
it is started or asked for, and is tried again after a failure (the runtime fix it applies: tests/test_streamlit_compat.py)."""

import threading

import pytest

from ui import startup
from ui.startup import Background


class Counted:
    """A computation that counts its runs, and holds each until ``gate`` is set (so callers arrive while it runs)."""

    def __init__(self, fail_first: bool = False):
        self.calls = 0
        self.running = threading.Event()
        self.gate = threading.Event()
        self.fail_first = fail_first

    def __call__(self):
        self.calls += 1
        self.running.set()
        assert self.gate.wait(timeout=60), "the test never let the computation finish"
        if self.fail_first and self.calls == 1:
            raise ValueError("first run fails")
        return {"run": self.calls}


def ask_from_threads(background: Background, count: int) -> tuple[list, list[threading.Thread]]:
    got: list = []
    threads = [threading.Thread(target=lambda: got.append(background.result())) for _ in range(count)]
    for thread in threads:
        thread.start()
    return got, threads


def test_a_background_value_is_computed_once_however_many_start_or_ask():
    compute = Counted()
    background = Background("test-once", compute)
    background.start()
    background.start()
    assert compute.running.wait(timeout=60)
    assert not background.ready()
    got, threads = ask_from_threads(background, 8)  # they ask while it runs
    compute.gate.set()
    for thread in threads:
        thread.join(timeout=60)
    assert len(got) == 8 and all(value is got[0] for value in got)
    assert background.ready() and background.result() is got[0]
    background.start()
    assert compute.calls == 1 and background.runs == 1 and got[0] == {"run": 1}


def test_asking_first_starts_the_computation():
    compute = Counted()
    compute.gate.set()
    background = Background("test-ask-first", compute)
    assert background.runs == 0 and not background.ready()
    assert background.result() == {"run": 1}
    assert background.result() == {"run": 1} and compute.calls == 1


def test_a_failed_computation_raises_for_every_waiter_and_is_tried_again_on_the_next_ask():
    compute = Counted(fail_first=True)
    background = Background("test-retry", compute)
    background.start()
    assert compute.running.wait(timeout=60)
    errors = []

    def ask():
        try:
            background.result()
        except ValueError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for thread in threads:
        thread.start()
    compute.gate.set()
    for thread in threads:
        thread.join(timeout=60)
    assert len(errors) == 3 and compute.calls == 1 and not background.ready()
    assert background.result() == {"run": 2}  # tried again, once
    assert background.result() == {"run": 2} and compute.calls == 2 and background.runs == 2


def test_start_up_twice_starts_each_background_computation_once(monkeypatch):
    table, trained, twin = Counted(), Counted(), Counted()
    for compute in (table, trained, twin):
        compute.gate.set()
    monkeypatch.setattr(startup, "_started", False)
    monkeypatch.setattr(startup, "SCALING_TABLE", Background("test-table", table))
    monkeypatch.setattr(startup, "TRAINED_RESULTS", Background("test-trained", trained))
    monkeypatch.setattr(startup, "TWIN_RESULTS", Background("test-twin", twin))
    startup.start()
    startup.start()
    assert startup.trained_results() == {"run": 1} and startup.twin_results() == {"run": 1}
    assert startup.scaling_table() == {"run": 1}
    startup.start()
    for thread in threading.enumerate():  # the start-up's own thread is done with these before the test ends
        if thread.name == "precompute":
            thread.join(timeout=60)
    assert (table.calls, trained.calls, twin.calls) == (1, 1, 1)


def test_the_scaling_table_reports_a_failure_as_the_page_expects(monkeypatch):
    def broken():
        raise ValueError("no table")

    monkeypatch.setattr(startup, "SCALING_TABLE", Background("test-broken-table", broken))
    with pytest.raises(RuntimeError, match="could not be computed"):
        startup.scaling_table()
