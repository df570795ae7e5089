"""The generation server: batched equals one at a time, single flight, cancel, no thread or busy loop left behind.

Most tests use a tiny fake model (a seeded table of logits per sequence) with a plain one-at-a-time loop as the
reference; one slow test runs the real model.
"""

from __future__ import annotations

import dataclasses
import threading
import time

import numpy as np
import pytest

from attention_core.gpt.batching import (
    GenerationError, GenerationRequest, GenerationServer, StepFunctions, step_seed,
)

VOCAB = 40
STOP = 3


def fake_logits(sequence) -> np.ndarray:
    rng = np.random.default_rng([int(i) for i in sequence])
    return rng.normal(size=VOCAB) * 2


def fake_sample(logits, request, step):
    z = np.asarray(logits, dtype=np.float64) / max(request.temperature, 1e-6)
    p = np.exp(z - z.max())
    p /= p.sum()
    token = int(np.random.default_rng(step_seed(request.seed, step)).choice(len(p), p=p))
    return token, float(p[token])


class FakeModel:
    """A cache is the list of ids so far. Counts prompts started and batch sizes; `gate` holds the first step."""

    def __init__(self, step_delay_s=0.0, fail_at_step=None, fail_prompt=None, stop_ids=frozenset()):
        self.prompts_started, self.batch_sizes = 0, []
        self.gate = threading.Event()
        self.gate.set()
        self.step_delay_s, self.fail_at_step, self.fail_prompt = step_delay_s, fail_at_step, fail_prompt
        self.stop_ids = stop_ids
        self.checked = []

    def new_cache(self, expected_length):
        return []

    def check(self, request):
        self.checked.append(request)
        if self.fail_prompt is not None and request.prompt_ids == self.fail_prompt:
            raise ValueError("this prompt breaks the fake model\nsecond line of a traceback-like text")

    def step(self, caches, chunks):
        self.gate.wait(10)
        self.batch_sizes.append(len(caches))
        self.prompts_started += sum(1 for cache in caches if not cache)
        if self.fail_at_step is not None and len(self.batch_sizes) == self.fail_at_step:
            raise MemoryError("the fake model ran out of memory")
        if self.step_delay_s:
            time.sleep(self.step_delay_s)
        for cache, chunk in zip(caches, chunks):
            cache.extend(chunk)
        return np.stack([fake_logits(cache) for cache in caches])

    def functions(self):
        return StepFunctions(self.new_cache, self.step, fake_sample, frozenset(self.stop_ids), self.check)


def one_at_a_time(model: FakeModel, request: GenerationRequest):
    """The reference: the whole prompt in one step, then one step per token, for this request alone."""
    cache = model.new_cache(0)
    logits = model.step([cache], [list(request.prompt_ids)])[0]
    out = []
    for step in range(request.max_new_tokens):
        token, prob = fake_sample(logits, request, step)
        out.append((token, prob))
        if token in model.stop_ids:
            break
        logits = model.step([cache], [[token]])[0]
    return out


def read_all(server, request, results, index, cancel=None):
    try:
        results[index] = list(server.stream(request, cancel))
    except GenerationError as exc:
        results[index] = exc


def wait_for(condition, timeout_s=10.0):
    """Wait for the server's state (never a fixed sleep): poll until condition() or fail after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting for the server"
        time.sleep(0.005)


def generation_threads():
    return [t for t in threading.enumerate() if t.name == "gpt-generation"]


def requests(n, max_new_tokens=12):
    return [GenerationRequest(tuple(range(5 + i, 9 + 2 * i)), temperature=0.5 + 0.1 * i, seed=100 + i,
                              max_new_tokens=max_new_tokens) for i in range(n)]


def run_together(server, model, reqs, cancels=None):
    """Start every reader while the first step is held, so all of them are in the second step."""
    model.gate.clear()
    results = [None] * len(reqs)
    threads = [threading.Thread(target=read_all, args=(server, r, results, i, cancels and cancels[i]))
               for i, r in enumerate(reqs)]
    for t in threads:
        t.start()
    asking = len(reqs) - sum(c.is_set() for c in cancels or [])  # a reader cancelled before it asks never joins
    wait_for(lambda: server.readers_joined == asking)  # the first step waits at the gate
    model.gate.set()
    for t in threads:
        t.join(10)
    return results


# ---------------------------------------------------------------- batching

def test_batched_results_equal_one_at_a_time_with_one_step_per_token_for_everyone():
    model = FakeModel()
    server = GenerationServer(model.functions())
    reqs = requests(8)
    results = run_together(server, model, reqs)
    reference_model = FakeModel()
    assert results == [one_at_a_time(reference_model, r) for r in reqs]
    # the first step (held at the gate) has the k that had arrived; the others' prompts then get a step of their own
    # (8 - k rows), and every later step has all 8 until they finish: 12 or 13 steps for 8 x 12 tokens, where one at
    # a time would take 8 x 12
    first = model.batch_sizes[0]
    assert model.batch_sizes[-11:] == [8] * 11
    assert model.batch_sizes[:-11] == ([8] if first == 8 else [first, 8 - first]) and server.steps in (12, 13)
    wait_for(lambda: not server.running())
    assert generation_threads() == []


def test_a_request_joins_a_running_batch_and_the_results_do_not_depend_on_the_batch():
    model = FakeModel(step_delay_s=0.01)
    server = GenerationServer(model.functions())
    long, late = GenerationRequest((7, 8, 9), seed=1, max_new_tokens=30), GenerationRequest((4,), seed=2)
    results = [None, None]
    first = threading.Thread(target=read_all, args=(server, long, results, 0))
    first.start()
    wait_for(lambda: server.steps >= 3)
    read_all(server, late, results, 1)
    first.join(10)
    assert max(model.batch_sizes) == 2  # the late request ran inside the long one's batch
    assert results == [one_at_a_time(FakeModel(), long), one_at_a_time(FakeModel(), late)]


class Stepper(FakeModel):
    """A fake model whose steps the test lets through one at a time (allow(n)), logging each step's chunks."""

    def __init__(self):
        super().__init__()
        self.allowed = threading.Semaphore(0)
        self.chunks, self.sequences = [], []  # per step: its chunks, and each sequence as it is after the step

    def allow(self, n=1):
        for _ in range(n):
            self.allowed.release()

    def step(self, caches, chunks):
        assert self.allowed.acquire(timeout=10)
        self.chunks.append([list(c) for c in chunks])
        self.sequences.append([list(cache) + list(chunk) for cache, chunk in zip(caches, chunks)])
        return super().step(caches, chunks)


def test_new_prompts_get_a_step_of_their_own_while_others_are_written_then_everyone_steps_together():
    model = Stepper()
    server = GenerationServer(model.functions())
    long = GenerationRequest((7, 8, 9), seed=1, max_new_tokens=20)
    arrivals = [GenerationRequest(tuple(range(20 + i, 24 + 2 * i)), seed=10 + i, max_new_tokens=3) for i in range(4)]
    results = [None] * 5
    threads = [threading.Thread(target=read_all, args=(server, long, results, 0))]
    threads[0].start()
    model.allow(2)  # the long one's prompt, then one token more
    wait_for(lambda: len(model.chunks) == 2)
    threads += [threading.Thread(target=read_all, args=(server, r, results, i + 1)) for i, r in enumerate(arrivals)]
    for t in threads[1:]:
        t.start()
    wait_for(lambda: server.readers_joined == 5)  # they arrived during the long one's third step (held)
    model.allow(100)
    for t in threads:
        t.join(10)
    prompts = [list(r.prompt_ids) for r in arrivals]
    assert model.chunks[3] == prompts  # their prompts alone: the long one's row does not delay their first token
    assert len(model.chunks[4]) == 5 and all(len(c) == 1 for c in model.chunks[4])  # then everyone together
    assert results == [one_at_a_time(FakeModel(), r) for r in [long] + arrivals]  # the same tokens either way


def test_a_stream_of_arrivals_never_starves_the_running_ones():
    model = Stepper()
    server = GenerationServer(model.functions())
    long = GenerationRequest((7, 8, 9), seed=1, max_new_tokens=8)
    results = [None] * 6
    threads = [threading.Thread(target=read_all, args=(server, long, results, 0))]
    threads[0].start()
    model.allow(1)
    for i in range(5):  # a new student in every step
        wait_for(lambda: len(model.chunks) == 1 + i)
        threads.append(threading.Thread(target=read_all, args=(server, GenerationRequest((30 + i,), seed=i,
                                                                                        max_new_tokens=8),
                                                               results, i + 1)))
        threads[-1].start()
        wait_for(lambda: server.readers_joined == 2 + i)
        model.allow(1)
    model.allow(200)
    for t in threads:
        t.join(10)
    has_long = [any(seq[:3] == [7, 8, 9] for seq in step) for step in model.sequences]
    last = max(i for i, has in enumerate(has_long) if has)
    assert all(has_long[i] or has_long[i + 1] for i in range(last))  # never two steps in a row without it
    assert not all(has_long[:last + 1])  # and the arrivals did get steps of their own
    assert len(results[0]) == 8 and all(len(r) == 8 for r in results)


def test_a_waiting_reader_is_told_it_is_queued_then_that_its_prompt_is_read():
    model = Stepper()
    server = GenerationServer(model.functions())
    long = GenerationRequest((7, 8, 9), seed=1, max_new_tokens=20)
    results, states = [None, None], []
    first = threading.Thread(target=read_all, args=(server, long, results, 0))
    first.start()
    model.allow(1)
    wait_for(lambda: len(model.chunks) == 1)  # the long one runs; its next step is held

    def read_late():
        results[1] = list(server.stream(GenerationRequest((4, 5), seed=2, max_new_tokens=3), on_wait=states.append))

    late = threading.Thread(target=read_late)
    late.start()
    wait_for(lambda: len(states) == 1)
    model.allow(1)  # the held step ends; the late one joins the batch, its prompt's step is held
    wait_for(lambda: len(states) == 2)
    model.allow(100)
    late.join(10)
    first.join(10)
    from attention_core.gpt.batching import QueueState

    assert states == [QueueState("queued", 0, 1), QueueState("reading", 0, 2)]
    assert results[1] == one_at_a_time(FakeModel(), GenerationRequest((4, 5), seed=2, max_new_tokens=3))


def test_prompts_longer_than_the_prefill_budget_continue_at_the_next_step():
    model = FakeModel()
    chunk_sizes = []
    step = model.step
    model.step = lambda caches, chunks: (chunk_sizes.append([len(c) for c in chunks]), step(caches, chunks))[1]
    server = GenerationServer(model.functions(), prefill_budget=3)
    reqs = [GenerationRequest(tuple(range(20, 27)), seed=4, max_new_tokens=3),
            GenerationRequest((8, 9), seed=5, max_new_tokens=3)]
    results = run_together(server, model, reqs)
    assert results == [one_at_a_time(FakeModel(), r) for r in reqs]
    assert all(sum(sizes) <= 3 + len(sizes) for sizes in chunk_sizes)  # prompt tokens within the budget
    assert [7] not in chunk_sizes and max(max(sizes) for sizes in chunk_sizes) == 3


def test_a_stop_token_ends_the_generation_and_is_the_last_token():
    model = FakeModel(stop_ids={STOP})
    server = GenerationServer(model.functions())
    ends = 0
    for seed in range(30):
        request = GenerationRequest((1, 2), temperature=3.0, seed=seed, max_new_tokens=40)
        tokens = list(server.stream(request))
        assert tokens == one_at_a_time(FakeModel(stop_ids={STOP}), request)
        assert STOP not in [t for t, _ in tokens[:-1]]
        ends += tokens[-1][0] == STOP
    assert 0 < ends < 30  # some ended on the stop token, some ran to their length


def test_probabilities_are_those_of_the_distribution_each_token_was_drawn_from():
    request = GenerationRequest((2, 5), temperature=0.7, seed=3, max_new_tokens=4)
    tokens = list(GenerationServer(FakeModel().functions()).stream(request))
    sequence = [2, 5]
    for token, prob in tokens:
        z = fake_logits(sequence) / 0.7
        p = np.exp(z - z.max())
        assert prob == pytest.approx(p[token] / p.sum())
        sequence.append(token)


# ---------------------------------------------------------------- single flight

def test_forty_readers_of_the_same_request_share_one_generation():
    model = FakeModel()
    server = GenerationServer(model.functions())
    request = requests(1, max_new_tokens=10)[0]
    results = run_together(server, model, [request] * 40)
    assert model.prompts_started == 1 and model.batch_sizes == [1] * 10
    assert all(r == results[0] for r in results) and len(results[0]) == 10
    list(server.stream(request))  # finished: served from the LRU
    assert model.prompts_started == 1
