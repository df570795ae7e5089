"""One picklable function run in a child process of its own, at the lowest CPU priority, so a long computation asked
for from a page uses only the CPU the server processes leave idle: lesson 9's KV-cache timing, lesson 11's training
runs (ui/tiny_gpt/worker.py, which queues them).

``run(func, args, wait=..., progress=..., stats=...)`` is called in a script thread and blocks it until
``func(*args)`` is back from the child. The child runs at niceness NICE with one BLAS thread (the products of one
learner's computation are small; more threads would only take cores from the servers). While it runs, ``wait()`` (or
``progress(step)``, with the latest step the child reported) is called in the caller's thread every TICK seconds: give
it a Streamlit call (a placeholder emptied, a progress bar), which is where Streamlit raises in the script thread when
the learner leaves. If it raises (or anything here does), the child is killed at once and joined, and the error goes
on. A child that fails (an exception, a signal) raises ChildFailed with one line that says why, never a traceback.
The result comes back pickled through a pipe, with the child's CPU seconds, niceness and memory.

The children come from one "forkserver" context: one small server process, started at the first child with NumPy
and the cores imported once, forks each child, and fork_server.py (first in the preload) makes the children skip the
parent's __main__, which in Streamlit is the page script. multiprocessing keeps one fork server per process, its
preload the list set last before it starts: PRELOAD names what every kind of child needs. This module imports no
Streamlit: the child needs only what ``func`` imports.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import pickle
import resource
import time

NICE = 19  # the lowest priority: the child runs on the CPU the server processes leave idle
TICK = 0.25  # seconds between two calls of wait()
# fork_server first (the children skip the parent's __main__), then the modules the children import: loaded once in
# the fork server, shared by every child it forks
PRELOAD = ("ui.shared.fork_server", __name__, "attention_core.smollm2", "attention_core.gpt_studies.kv_timing",
           "ui.tiny_gpt.worker", "attention_core.tiny_gpt")


class ChildFailed(Exception):
    """The child failed (an exception in it, or it was killed): str(error) is one line saying why."""


@functools.lru_cache(maxsize=1)
def context():
    """The forkserver context, its preload set (once per process)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(PRELOAD))
    return ctx


def lower_priority() -> None:
    """In a child: the lowest CPU priority and one BLAS thread."""
    os.nice(NICE)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def one_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0].strip()}" if lines else type(error).__name__


def ended(exitcode, process: str = "measuring") -> str:
    if exitcode is not None and exitcode < 0:
        return f"the {process} process was stopped by signal {-exitcode} before it finished"
    return f"the {process} process ended (exit code {exitcode}) before it finished"


def private_kb() -> int:
    """-> this process's own memory (Private_Clean + Private_Dirty of /proc/self/smaps_rollup), in kB; 0 elsewhere."""
    try:
        with open("/proc/self/smaps_rollup") as f:
            return sum(int(line.split()[1]) for line in f if line.startswith(("Private_Clean", "Private_Dirty")))
    except OSError:
        return 0


def _child(func, args, reports: bool, conn) -> None:
    """In the child: ("step", n) each time func reports one (when it reports), then ("done", pickled result, stats)
    or ("error", one line) through the pipe. A closed pipe (the parent gone) stops it at its next report."""
    try:
        lower_priority()
        start = time.process_time()
        report = (lambda step: conn.send(("step", int(step)))) if reports else None
        result = func(*args, report) if reports else func(*args)
        payload = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        conn.send(("done", payload, {"cpu_s": time.process_time() - start, "nice": os.nice(0),
                                     "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                                     "private_kb": private_kb(), "pickle_bytes": len(payload)}))
    except (BrokenPipeError, EOFError):
        pass  # the parent stopped listening: nothing to report to
    except BaseException as error:  # noqa: BLE001 - reported as one line, the child then ends
        try:
            conn.send(("error", one_line(error)))
        except (BrokenPipeError, OSError):
            pass
    finally:
        conn.close()


def run(func, args: tuple = (), *, name: str = "child", wait=None, progress=None, stats: dict | None = None,
        process: str = "measuring"):
    """-> func(*args), computed in a child at niceness NICE with one BLAS thread. func and args must pickle (a
    module's function). wait() is called in this thread every TICK seconds while the child runs; with progress,
    func gets one more argument, report(step), and progress(the latest step reported, 0 before) is called instead.
    If either raises, the child is killed at once and the error goes on. stats (if given) gets the child's CPU
    seconds for func (cpu_s), its niceness (nice), its peak and private memory (max_rss_kb, private_kb), the pickled
    result's size (pickle_bytes), its pid and the wall seconds from its start to its result (wall_s). ChildFailed
    (one line, naming the `process`) when the child fails."""
    ctx = context()
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(func, args, progress is not None, send), daemon=True, name=name)
    started = time.perf_counter()
    try:
        try:
            child.start()
        except Exception as error:  # noqa: BLE001 - no process to run in: said in one line
            raise ChildFailed(f"no {process} process could start ({one_line(error)})") from None
        finally:
            send.close()  # the child holds its own end: EOF here once it ends
        step = 0
        while True:
            if receive.poll(TICK):
                try:
                    message = receive.recv()
                except (EOFError, OSError):
                    child.join()
                    raise ChildFailed(ended(child.exitcode, process)) from None
                if message[0] == "step":
                    step = message[1]
                    if receive.poll():
                        continue  # several steps arrived: show the latest only
                elif message[0] == "done":
                    result = pickle.loads(message[1])
                    child.join(5)  # it ends once the message is sent (if not, it is killed below)
                    if stats is not None:
                        stats.update(message[2], pid=child.pid, wall_s=time.perf_counter() - started)
                    return result
                else:
                    raise ChildFailed(message[1])
            if progress is not None:
                progress(step)  # may raise: the learner left
            elif wait is not None:
                wait()  # may raise: the learner left
    finally:
        if child.is_alive():
            child.kill()  # at once: a stopped computation keeps nothing
        if child.pid is not None:
            child.join()
            child.close()
        receive.close()
