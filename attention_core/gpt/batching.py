"""Serving a class: the same request computed once (single flight), and every student's generation advanced by one
pass over the weights per step (continuous batching, as serving engines do: a decode step is memory-bound).

    server = GenerationServer(gpt_step_functions(weights))   # a model's StepFunctions (attention_core.smollm2.serving)
    for token_id, prob in server.stream(GenerationRequest((1, 2, 3), seed=7), cancel=threading.Event()):
        ...

- One worker thread owns the decode loop; it starts with the first request and ends when no request is left (it
  never waits for work). Each loop: drop the generations nobody wants any more (cancel set, or the reader's iterator
  closed: a stop button, a page change, a session gone), admit new requests, then ONE `step` for every sequence:
  each running one adds its last token, each new one its prompt (up to `prefill_budget` prompt tokens per step;
  a longer prompt continues at the next step). A sequence whose prompt is complete draws its next token.
- New prompts first: when prompts arrive while others are being written, their prompts get a step of their own
  (only their rows: their first token does not wait for every running sequence's row), then everyone steps
  together again; never two such steps in a row, so the running ones are never starved by a stream of arrivals.
- A reader waiting for its first token can be told where it stands (`stream(..., on_wait=...)` with a `QueueState`:
  queued behind a step, its prompt being read, with how many sequences).
- A request's tokens are drawn with seeds derived from its own seed and the step (`step_seed`), so they do not
  depend on which other requests share the batch.
- The same request (prompt, settings, seed, length) while it runs or after it finished: the readers share one
  generation (its tokens so far are replayed); finished ones are kept in an LRU of `max_entries`.
- A failure reaches the reader as a `GenerationError` with a one-line message, never a traceback.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np


class GenerationError(RuntimeError):
    """A generation could not be made; str(error) is a message for the page."""


@dataclass(frozen=True)
class GenerationRequest:
    """One student's generation: prompt ids (n,), the sampling settings, a seed and how many tokens to make."""

    prompt_ids: tuple[int, ...]
    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    seed: int = 0
    max_new_tokens: int = 20

    def __post_init__(self):
        if not self.prompt_ids:
            raise GenerationError("the prompt has no tokens")
        if self.max_new_tokens < 1 or self.seed < 0:
            raise GenerationError(f"max_new_tokens must be >= 1 and seed >= 0, got {self.max_new_tokens}, {self.seed}")
        object.__setattr__(self, "prompt_ids", tuple(int(i) for i in self.prompt_ids))


def step_seed(seed: int, step: int) -> int:
    """-> the sampling seed of a request's token number `step` (0 = the token after the prompt)."""
    return int(np.random.SeedSequence([seed, step]).generate_state(1)[0])


@dataclass(frozen=True)
class StepFunctions:
    """The model as the scheduler sees it.

    new_cache: expected length -> an empty cache; step: (caches, chunks of ids) -> (B, V) logits of each chunk's
    last token, each cache extended by its chunk, every sequence in one pass; sample: (logits (V,), request, step)
    -> (token id, probability); check: request -> None, or raises GenerationError for one the model cannot take.
    """

    new_cache: Callable[[int], Any]
    step: Callable[[list[Any], list[list[int]]], np.ndarray]
    sample: Callable[[np.ndarray, GenerationRequest, int], tuple[int, float]]
    stop_ids: frozenset[int] = frozenset()
    check: Callable[[GenerationRequest], None] | None = None


@dataclass(frozen=True)
class QueueState:
    """Where a request waiting for its first token stands: "queued" (it joins the batch when the current step
    ends; `ahead` requests joined before it), or "reading" (its prompt is in the step now); `running`: sequences in
    the batch (every student's, this one included once it joined)."""

    phase: str
    ahead: int
    running: int


@dataclass(eq=False)
class _Generation:
    request: GenerationRequest
    tokens: list[tuple[int, float]] = field(default_factory=list)
    readers: list[tuple[threading.Event, threading.Event | None]] = field(default_factory=list)  # (gone, cancel)
    done: bool = False
    dropped: bool = False
    error: str | None = None

    def wanted(self) -> bool:
        """-> whether a reader still reads: its iterator open and its cancel (if any) not set."""
        return any(not gone.is_set() and not (cancel is not None and cancel.is_set()) for gone, cancel in self.readers)


@dataclass(eq=False)
class _Active:
    generation: _Generation
    cache: Any
    feed: list[int]  # the ids to add at the next step: the prompt (or its rest), then the last token drawn


class GenerationServer:
    """Continuous batching plus single flight over one model (thread-safe; one worker thread at most)."""

    def __init__(self, model: StepFunctions, *, max_batch: int = 64, prefill_budget: int = 512,
                 max_entries: int = 256, reader_timeout_s: float = 1.0, prompts_first: bool = True):
        if max_batch < 1 or prefill_budget < 1:
            raise ValueError(f"max_batch and prefill_budget must be >= 1, got {max_batch}, {prefill_budget}")
        self._model = model
        self._max_batch, self._prefill_budget = max_batch, prefill_budget
        self._max_entries, self._reader_timeout_s = max_entries, reader_timeout_s
        self._cond = threading.Condition()
        self._flights: OrderedDict[GenerationRequest, _Generation] = OrderedDict()
        self._pending: list[_Generation] = []
        self._running = 0  # sequences in the batch (read under the lock by waiting readers)
        self._prompts_first = prompts_first  # False: new prompts always share the step with the running ones (benches)
        self._prompts_only_last = False  # the last step was new prompts alone (the worker's own state)
        self._worker: threading.Thread | None = None
        self.steps = 0  # how many model steps the server made, and how many sequences each had (tests, benches)
        self.batch_sizes: list[int] = []
        self.readers_joined = 0

    # ------------------------------------------------------------------ the readers' side

    def stream(self, request: GenerationRequest, cancel: threading.Event | None = None,
               on_wait: Callable[[QueueState], None] | None = None) -> Iterator[tuple[int, float]]:
        """-> the request's tokens (token id, probability), as they come; ends early once `cancel` is set.
        on_wait(state), if given, is called in the reader's thread while the first token has not come: at once, and
        whenever the state changes."""
        if cancel is not None and cancel.is_set():
            return
        gone = threading.Event()  # set when this reader stops reading, however it stops
        generation = self._join(request, gone, cancel)
        try:
            seen, told = 0, None
            while True:
                tell = None
                with self._cond:
                    while (seen == len(generation.tokens) and not generation.done and not generation.dropped
                           and not (cancel is not None and cancel.is_set())):
                        if on_wait is not None and seen == 0:
                            state = self._queue_state(generation)
                            if state != told:
                                tell = told = state
                                break  # tell the reader, outside the lock
                        self._cond.wait(self._reader_timeout_s)
                    if cancel is not None and cancel.is_set():
                        return
                    fresh = generation.tokens[seen:]
                    finished, error = generation.done or generation.dropped, generation.error
                if tell is not None:
                    on_wait(tell)
                    continue
                for token in fresh:
                    yield token
                seen += len(fresh)
                if finished and seen == len(generation.tokens):
                    if error is not None:
                        raise GenerationError(error)
                    return
        finally:
            gone.set()
            with self._cond:
                self._cond.notify_all()

    def _join(self, request: GenerationRequest, gone: threading.Event, cancel: threading.Event | None) -> _Generation:
        with self._cond:
            generation = self._flights.get(request)
            if generation is not None and (generation.dropped or generation.error is not None):
                generation = None  # cancelled or failed: make it again
            if generation is None:
                generation = _Generation(request)
                self._flights[request] = generation
                while len(self._flights) > self._max_entries:
                    self._flights.popitem(last=False)  # a running one forgotten here still serves its readers
                self._pending.append(generation)
                if self._worker is None:
                    self._worker = threading.Thread(target=self._run, name="gpt-generation", daemon=True)
                    self._worker.start()
            else:
                self._flights.move_to_end(request)
            generation.readers.append((gone, cancel))
            self.readers_joined += 1
            return generation

    def _queue_state(self, generation: _Generation) -> QueueState:
        """(under the lock) -> where a generation without tokens stands."""
        if generation in self._pending:
            return QueueState("queued", self._pending.index(generation), self._running)
        return QueueState("reading", 0, self._running)

    def running(self) -> bool:
        """-> whether the worker thread exists (it ends once every request is done or dropped)."""
        with self._cond:
            return self._worker is not None

    # ------------------------------------------------------------------ the worker

    def _publish(self, generation: _Generation, token: int, prob: float) -> bool:
        """Append a token under the lock; -> whether the generation is finished."""
        with self._cond:
            generation.tokens.append((token, prob))
            if token in self._model.stop_ids or len(generation.tokens) >= generation.request.max_new_tokens:
                generation.done = True
            self._cond.notify_all()
            return generation.done

    def _fail(self, generations: list[_Generation], exc: BaseException) -> None:
        message = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        with self._cond:
            for g in generations:
                g.error, g.done = message, True
                if self._flights.get(g.request) is g:
                    del self._flights[g.request]
            self._cond.notify_all()

    def _drop_unwanted(self, active: list[_Active]) -> list[_Active]:
        with self._cond:
            for g in [a.generation for a in active] + self._pending:
                if not g.wanted():
                    g.dropped = True
            self._pending = [g for g in self._pending if not g.dropped]
            still = [a for a in active if not a.generation.dropped]
            self._running = len(still)
            self._cond.notify_all()
            return still

    def _admit_one(self, active: list[_Active]) -> _Generation | None:
        with self._cond:
            if not self._pending or len(active) >= self._max_batch:
                return None
            self._running = len(active) + 1
            self._cond.notify_all()  # its readers now read "reading"
            return self._pending.pop(0)

    def _stop_if_idle(self, active: list[_Active]) -> bool:
        with self._cond:
            if active or self._pending:
                return False
            self._worker = None  # under the lock: a request arriving from now on starts a new worker
            return True

    def _start(self, generation: _Generation) -> _Active | None:
        request = generation.request
        try:
            if self._model.check is not None:
                self._model.check(request)
            cache = self._model.new_cache(len(request.prompt_ids) + request.max_new_tokens)
        except Exception as exc:  # noqa: BLE001 - the reader gets the message
            self._fail([generation], exc)
            return None
        return _Active(generation, cache, list(request.prompt_ids))

    def _chunks(self, active: list[_Active]) -> tuple[list[_Active], list[list[int]]]:
        """-> the sequences of this step and their ids: every running one, prompts up to the prefill budget; or, when
        prompts wait to be read while others run, those prompts alone (never two such steps in a row)."""
        reading = any(not a.generation.tokens for a in active)
        writing = any(a.generation.tokens for a in active)
        prompts_only = self._prompts_first and reading and writing and not self._prompts_only_last
        self._prompts_only_last = prompts_only
        chosen, chunks, budget = [], [], self._prefill_budget
        for a in active:
            if a.generation.tokens:
                if prompts_only:
                    continue
                take = len(a.feed)  # the token drawn last
            else:
                take = min(len(a.feed), budget)  # the prompt, or as much of it as the budget leaves
                budget -= take
                if take == 0:
                    continue
            chosen.append(a)
            chunks.append(a.feed[:take])
        return chosen, chunks

    def _step(self, active: list[_Active]) -> list[_Active]:
        chosen, chunks = self._chunks(active)
        try:
            logits = self._model.step([a.cache for a in chosen], chunks)
            self.steps += 1
            self.batch_sizes.append(len(chosen))
            drawn = {}
            for a, chunk, row in zip(chosen, chunks, logits):
                a.feed = a.feed[len(chunk):]
                if not a.feed:  # the prompt is complete (or the last token added): draw the next token
                    drawn[id(a)] = self._model.sample(row, a.generation.request, len(a.generation.tokens))
        except Exception as exc:  # noqa: BLE001
            self._fail([a.generation for a in chosen], exc)
            failed = {id(a) for a in chosen}
            return [a for a in active if id(a) not in failed]
        still = []
        for a in active:
            if id(a) in drawn:
                token, prob = drawn[id(a)]
                if self._publish(a.generation, token, prob):
                    continue
                a.feed = [token]
            still.append(a)
        return still

    def _run(self) -> None:
        active: list[_Active] = []
        try:
            while True:
                active = self._drop_unwanted(active)
                while (generation := self._admit_one(active)) is not None:
                    started = self._start(generation)
                    if started is not None:
                        active.append(started)
                if active:
                    active = self._step(active)
                elif self._stop_if_idle(active):
                    return
        except BaseException as exc:  # the worker itself broke: every reader hears it, the next request restarts it
            with self._cond:
                pending, self._pending, self._worker = self._pending, [], None
            self._fail([a.generation for a in active] + pending, exc)
            raise
