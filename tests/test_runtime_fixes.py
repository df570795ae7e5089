"""Process start-up. ui.shared.startup: the background work runs once per process however often and from however many threads
it is started or asked for, and is tried again after a failure (the runtime fix it applies: tests/test_streamlit_compat.py)."""

import threading

import pytest

from ui.shared import startup
from ui.shared.startup import Background


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


def test_start_up_twice_runs_each_registered_computation_once_in_registration_order(monkeypatch):
    order = []
    computations = [Counted(), Counted(), Counted()]
    for k, compute in enumerate(computations):
        compute.gate.set()
    monkeypatch.setattr(startup, "_started", False)
    monkeypatch.setattr(startup, "_registered", {})
    monkeypatch.setattr(startup, "STARTUP_MODULES", ())
    backgrounds = [startup.register_startup(f"test-{k}", lambda k=k, c=c: (order.append(k), c())[1])
                   for k, c in enumerate(computations)]
    assert startup.register_startup("test-0", lambda: None) is backgrounds[0]  # a name registers once
    startup.start()
    startup.start()
    for thread in threading.enumerate():  # the start-up's own thread is done with these before the test ends
        if thread.name == "precompute":
            thread.join(timeout=60)
    assert [b.result() for b in backgrounds] == [{"run": 1}] * 3
    assert [c.calls for c in computations] == [1, 1, 1] and order == [0, 1, 2]


def test_the_start_up_thread_imports_the_lessons_that_register_work_lesson_8_first(monkeypatch):
    imported = []
    monkeypatch.setattr(startup.importlib, "import_module", imported.append)
    monkeypatch.setattr(startup, "_registered", {})
    startup._precompute()
    # lesson 8's page needs its results on opening; lesson 9's shared results (the model's passes) come last
    assert imported == list(startup.STARTUP_MODULES)
    assert imported[:3] == ["ui.pretrained.page", "ui.scaling", "ui.gpt.circuits"]  # later lessons may follow


def test_the_scaling_table_reports_a_failure_as_the_page_expects(monkeypatch):
    def broken():
        raise ValueError("no table")

    import ui.scaling

    monkeypatch.setattr(ui.scaling, "TABLE", Background("test-broken-table", broken))
    with pytest.raises(RuntimeError, match="could not be computed"):
        ui.scaling.table()
