"""The generation server when things go wrong: cancel, threads that end and never spin, failing steps, workers and prompts, bad requests; and what the page hears from it (its settings passed through, its queue)."""

from __future__ import annotations
import dataclasses
import threading
import time
import numpy as np
import pytest
from attention_core.gpt.batching import (
    GenerationError, GenerationRequest, GenerationServer, StepFunctions, step_seed,
)
from tests.test_gpt_serving import FakeModel, Stepper, generation_threads, one_at_a_time, requests, run_together, wait_for  # noqa: F401 - helpers and fixtures of that file


# ---------------------------------------------------------------- cancel, threads, errors

@pytest.mark.parametrize("how", ["event", "event_unread", "close"])
def test_cancel_stops_within_one_step_and_the_worker_ends(how):
    model = FakeModel(step_delay_s=0.005)
    server = GenerationServer(model.functions())
    cancel = threading.Event()
    stream = server.stream(GenerationRequest((1, 2, 3), max_new_tokens=10_000), cancel)
    for _ in range(3):
        next(stream)
    steps_at_cancel = server.steps
    if how == "event":
        cancel.set()
        assert list(stream) == []  # nothing more once cancel is set
    elif how == "event_unread":
        cancel.set()  # Stop pressed; the iterator is neither read nor closed (the script is still elsewhere)
    else:
        stream.close()  # the page changed: the script thread dropped its iterator
    wait_for(lambda: not server.running())
    assert server.steps - steps_at_cancel <= 1
    assert generation_threads() == []


def test_cancelling_one_reader_keeps_the_others_generation():
    model = FakeModel()
    server = GenerationServer(model.functions())
    reqs = requests(3, max_new_tokens=15)
    cancels = [threading.Event() for _ in reqs]
    cancels[1].set()  # gone before it asked
    results = run_together(server, model, reqs, cancels)
    assert results[1] == []
    assert results[0] == one_at_a_time(FakeModel(), reqs[0]) and results[2] == one_at_a_time(FakeModel(), reqs[2])
    assert max(model.batch_sizes) == 2 and model.prompts_started == 2


def test_waiting_readers_do_not_spin():
    """A busy loop in 4 readers or the worker would burn the whole wait in every attempt; the process's CPU also
    counts other threads of the test process (an earlier AppTest's start-up work), so the quietest of three counts."""
    shares = []
    for _ in range(3):
        model = FakeModel(step_delay_s=0.1)
        server = GenerationServer(model.functions())
        cpu, wall = time.process_time(), time.monotonic()
        results = run_together(server, model, requests(4, max_new_tokens=8))
        cpu, wall = time.process_time() - cpu, time.monotonic() - wall
        assert all(len(r) == 8 for r in results) and wall >= 0.7  # 7 steps of 0.1 s of sleeping
        shares.append(cpu / wall)
        if shares[-1] < 0.5:
            break
    assert min(shares) < 0.5, shares


def test_a_failing_step_reaches_every_reader_as_a_message_and_is_tried_again():
    model = FakeModel(fail_at_step=3)
    server = GenerationServer(model.functions())
    reqs = requests(2)
    results = run_together(server, model, reqs)
    for result in results:
        assert isinstance(result, GenerationError)
        assert str(result) == "MemoryError: the fake model ran out of memory"
    wait_for(lambda: not server.running())
    assert generation_threads() == []
    assert list(server.stream(reqs[0])) == one_at_a_time(FakeModel(), reqs[0])  # not cached as a failure


class WorkerKilled(BaseException):
    """Not an Exception: what a KeyboardInterrupt or SystemExit inside the worker would be."""


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_broken_worker_tells_its_readers_and_the_next_request_starts_a_new_one():
    model = FakeModel()
    calls = []

    def step(caches, chunks):
        calls.append(1)
        if len(calls) == 2:
            raise WorkerKilled("stopped")
        return model.step(caches, chunks)

    server = GenerationServer(dataclasses.replace(model.functions(), step=step))
    request = requests(1)[0]
    with pytest.raises(GenerationError, match="WorkerKilled: stopped"):
        list(server.stream(request))
    wait_for(lambda: not server.running() and generation_threads() == [])  # the thread itself has ended
    assert len(list(server.stream(request))) == request.max_new_tokens


def test_a_failing_prompt_fails_alone_with_one_line():
    bad = GenerationRequest((13, 13), seed=1)
    model = FakeModel(fail_prompt=bad.prompt_ids)
    server = GenerationServer(model.functions())
    good = requests(1)[0]
    results = run_together(server, model, [good, bad])
    assert results[0] == one_at_a_time(FakeModel(), good)
    assert str(results[1]) == "ValueError: this prompt breaks the fake model"


@pytest.mark.parametrize("kwargs", [dict(prompt_ids=()), dict(prompt_ids=(1,), max_new_tokens=0),
                                    dict(prompt_ids=(1,), seed=-1)])
def test_bad_requests_are_refused_with_a_message(kwargs):
    with pytest.raises(GenerationError):
        GenerationRequest(**kwargs)


def test_the_pages_stream_generation_passes_every_setting_through(monkeypatch):
    from ui.gpt import serving as gpt_serving

    model = FakeModel()
    monkeypatch.setattr(gpt_serving, "generation_server", lambda model_key="smollm2": GenerationServer(model.functions()))
    got = list(gpt_serving.stream_generation([4, 5, 6], temperature=0.4, top_k=7, top_p=0.8, seed=12,
                                             max_new_tokens=5))
    expected = GenerationRequest((4, 5, 6), temperature=0.4, top_k=7, top_p=0.8, seed=12, max_new_tokens=5)
    assert model.checked == [expected]  # every setting reached the model's request unchanged
    assert got == one_at_a_time(FakeModel(), expected) and len(got) == 5
    cancel = threading.Event()
    cancel.set()
    assert list(gpt_serving.stream_generation([4], cancel=cancel)) == []


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_page_is_told_its_generation_is_queued_with_the_servers_numbers(monkeypatch, lang):
    from attention_core.gpt.batching import QueueState
    from ui.gpt import serving as gpt_serving
    from ui.shared.i18n import Translator

    model = Stepper()
    server = GenerationServer(model.functions())
    monkeypatch.setattr(gpt_serving, "generation_server", lambda model_key="smollm2": server)
    running = threading.Thread(target=lambda: list(server.stream(GenerationRequest((7, 8), seed=1, max_new_tokens=9))))
    running.start()
    model.allow(1)
    wait_for(lambda: len(model.chunks) == 1)
    said = []
    t = Translator(lang)
    reader = threading.Thread(target=lambda: list(gpt_serving.stream_generation(
        [4, 5], max_new_tokens=2, on_wait=lambda state: said.append((state, gpt_serving.queue_message(t, state))))))
    reader.start()
    wait_for(lambda: len(said) == 1)
    model.allow(1)
    wait_for(lambda: len(said) == 2)
    model.allow(100)
    reader.join(10)
    running.join(10)
    assert [state for state, _ in said] == [QueueState("queued", 0, 1), QueueState("reading", 0, 2)]
    assert said[0][1] == t("gpt.gen_queued", ahead=0, running=1) and said[1][1] == t("gpt.gen_reading", running=2)
    assert "{" not in said[0][1] + said[1][1] and said[0][1] != said[1][1]
    assert "1" in said[0][1] and "2" in said[1][1]  # the server's numbers, formatted in
