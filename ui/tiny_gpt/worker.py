"""Watch a head form: a run trained in a child process of its own, at a lower CPU priority, so the server process's
event loop and the other students' script threads never wait for it (a run is ~3.5 s of small-matrix NumPy that
holds the GIL much of the time).

``Trainer.train(config, seed, every, progress, queued)`` is called in the script thread of the session that asks for
the run and blocks it until the run is back, as training in that thread did: at most ``limit`` children train at once
per server process (the others wait in a queue, first come first served, ``queued(ahead)`` telling them how many runs
are ahead); while the child trains, ``progress(step)`` gets its latest step about four times a second. Either callback
may raise (Streamlit raises in the script thread when the learner leaves: another page, a changed control, a closed
tab): the child is then killed at once and joined, and nothing of it is kept. A child that fails (an exception, a
signal) raises TrainingFailed with one line that says why, never a traceback.

The child is ui/shared/child.py's (a "forkserver" child, never a fork of the threaded server, at nice 19 with one
BLAS thread): this module adds the queue. Progress and the finished Run come back through a pipe (the Run pickled:
about 2.7 MB for the default model with its snapshots). This module imports no Streamlit: the child needs the core
only.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

from ui.shared.child import ChildFailed
from ui.shared.child import run as run_in_child

LIMIT = 2  # children training at once per server process: niced, they take only the CPU the servers leave, and two
# let one replica's queue use both cores while the other replica is idle (about 25 MB of its own memory each)
TICK = 0.25  # seconds between two progress calls (and two looks at the queue)


class TrainingFailed(Exception):
    """The child failed (an exception in it, or it was killed): str(error) is one line saying why."""


@dataclass(frozen=True)
class Queued:
    """A run waiting for a free child: `ahead` runs are before it (those training and those queued first)."""

    ahead: int


def _fit_reporting(fit, config, seed, every, keep_snapshots, report):
    """In the child: fit with train's arguments, its progress the child's report (child.run's last argument)."""
    return fit(config, seed, every, report, keep_snapshots)


def _train(config, seed, every, progress, keep_snapshots):
    from attention_core.tiny_gpt import train

    return train(config, seed, every, progress, keep_snapshots)


class Trainer:
    """Runs trained in child processes, at most `limit` at once; the others queue (first come, first served)."""

    def __init__(self, limit: int = LIMIT, fit=_train):
        self.limit = limit
        self._fit = fit  # (config, seed, every, progress, keep_snapshots) -> Run; picklable (a module's function)
        self._changed = threading.Condition()
        self._waiting: deque = deque()
        self._running = 0

    def running(self) -> int:
        return self._running

    def waiting(self) -> int:
        return len(self._waiting)

    def train(self, config, seed: int, every: int = 25, progress=None, queued=None, keep_snapshots: bool = True,
              stats: dict | None = None):
        """-> the Run of (config, seed), trained in a child. progress(step) and queued(ahead) are called in this
        thread; if either raises, the child is killed and the error goes on. Never refused: a run past `limit`
        waits its turn, told its place through queued(ahead) at once and while it waits. stats (if given) gets the
        child's CPU seconds, its peak and private memory (kB) and the pickled Run's size."""
        self._take_a_place(queued)
        try:
            return self._in_child(config, seed, every, keep_snapshots, progress, stats)
        finally:
            with self._changed:
                self._running -= 1
                self._changed.notify_all()

    def _take_a_place(self, queued) -> None:
        ticket = object()
        with self._changed:
            self._waiting.append(ticket)
        try:
            while True:
                with self._changed:
                    index = self._waiting.index(ticket)
                    if index < self.limit - self._running:
                        self._waiting.remove(ticket)
                        self._running += 1
                        self._changed.notify_all()  # the next in line may move up in the queue
                        return
                    ahead = self._running + index
                if queued is not None:
                    queued(ahead)  # outside the lock: it may raise (the learner left) or take a while
                with self._changed:
                    self._changed.wait(TICK)
        except BaseException:
            with self._changed:
                if ticket in self._waiting:
                    self._waiting.remove(ticket)
                    self._changed.notify_all()
            raise

    def _in_child(self, config, seed, every, keep_snapshots, progress, stats):
        try:
            return run_in_child(_fit_reporting, (self._fit, config, seed, every, keep_snapshots),
                                name=f"tiny_gpt seed {seed}", progress=progress or (lambda step: None), stats=stats,
                                process="training")
        except ChildFailed as failed:
            raise TrainingFailed(str(failed)) from None


_TRAINER = Trainer()  # made at import (under the import lock): one queue per server process, never two


def trainer() -> Trainer:
    """The server process's trainer (one queue per process)."""
    return _TRAINER
