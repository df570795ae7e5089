"""Time the tiny GPT's training (attention_core.tiny_gpt): a step, a default run, a knock-out, and the phase change
over seeds.

    .venv/bin/python -m bench.bench_tiny_gpt                  # 5 repeats; 10 seeds of the default and the control
    .venv/bin/python -m bench.bench_tiny_gpt --repeats 9 --seeds 0
    .venv/bin/python -m bench.bench_tiny_gpt --repeats 1 --seeds 0 --class-size 0 --own-runs 5   # lesson 11's child

CPU time on one core (time.process_time, one BLAS thread): the machine is shared, so medians and spreads, never a
single time. Minor page faults per step show what reusing the step's arrays (model.Buffers) saves. Asserts nothing
about time (tests/test_tiny_gpt_claims.py holds the phase change itself).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import time
from dataclasses import replace

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads BLAS: one core, as the server runs it

import numpy as np  # noqa: E402

from attention_core.tiny_gpt import (Adam, Config, batch, eval_set, formation_step, grads, init, measure,  # noqa: E402
                                     plateau_loss, train)
from attention_core.tiny_gpt.model import Buffers, fresh  # noqa: E402
from bench.timing import describe, timed  # noqa: E402


def step_cost(config: Config, steps: int, reuse: bool) -> tuple[float, float]:
    """-> (CPU seconds per training step, minor page faults per step) over `steps` steps after 20 warm-up steps."""
    params, data = init(config, 0), np.random.default_rng(1)
    adam, new = Adam(params, config.learning_rate), (Buffers() if reuse else fresh)

    def run(n):
        for _ in range(n):
            adam.step(params, grads(params, batch(config, data), new=new))

    run(20)
    before, start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.process_time()
    run(steps)
    return (time.process_time() - start) / steps, (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / steps


def class_at_once(config: Config, students: int, settings: int) -> tuple[float, int]:
    """`students` threads start a run at once through the page's SharedRuns, spread over `settings` distinct seeds
    -> (wall seconds until every student has a run, runs trained)."""
    import threading

    from ui.tiny_gpt.runs import SharedRuns

    store, trained = SharedRuns(), []

    def student(i: int) -> None:
        seed = 1000 + i % settings
        store.run((config, seed), lambda: trained.append(seed) or train(config, seed, every=25), True, lambda s: None)

    threads = [threading.Thread(target=student, args=(i,)) for i in range(students)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start, len(trained)


def own_run(config: Config, seed: int, where: str) -> dict:
    """One learner's own run as the page trains it, `where` = "thread" (the old way: train in the script thread) or
    "child" (ui.tiny_gpt.worker) -> this process's CPU seconds (every thread) and wall seconds during the run, the
    run's own CPU seconds, the wall time another thread's slices of pure-Python work (about 2 ms each alone, then
    8 ms asleep: another student's script thread, which waits like it for the GIL) take meanwhile: median and max
    ms (that thread's own CPU is left out of this process's), and the child's memory."""
    import threading

    from ui.tiny_gpt.worker import Trainer

    def work() -> float:
        start = time.perf_counter()
        sum(i * i for i in range(25_000))
        return (time.perf_counter() - start) * 1000

    alone = statistics.median(work() for _ in range(20))
    late, done, other_cpu = [], threading.Event(), []

    def other_thread() -> None:
        while not done.is_set():
            late.append(work())
            time.sleep(0.008)
        other_cpu.append(time.thread_time())

    ticker = threading.Thread(target=other_thread)
    stats: dict = {}
    ticker.start()
    cpu, wall, own = time.process_time(), time.perf_counter(), time.thread_time()
    if where == "thread":
        train(config, seed, 25, lambda step: None)
        stats["cpu_s"] = time.thread_time() - own
    else:
        Trainer().train(config, seed, 25, lambda step: None, stats=stats)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    done.set()
    ticker.join()
    return dict(stats, process_cpu_s=cpu - other_cpu[0], wall_s=wall, alone_ms=alone, slice_median_ms=statistics.median(late),
                slice_max_ms=max(late))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_tiny_gpt", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=10, help="seeds of the phase-change spread (0: skip it)")
    ap.add_argument("--own-runs", type=int, default=3, help="own runs timed in the script thread and in a child "
                    "(0: skip)")
    ap.add_argument("--class-size", type=int, default=40, help="students starting a run at once (0: skip it)")
    args = ap.parse_args(argv)
    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    config = Config()
    print(f"default: {config}")

    for dtype in ("float32", "float64"):
        for reuse in (True, False):
            costs = [step_cost(replace(config, dtype=dtype), 200, reuse) for _ in range(args.repeats)]
            ms = [c[0] * 1000 for c in costs]
            print(f"a training step, {dtype}, {'buffers reused' if reuse else 'fresh arrays'}: median "
                  f"{statistics.median(ms):.2f} ms CPU (min {min(ms):.2f}, max {max(ms):.2f}), "
                  f"{statistics.median(c[1] for c in costs):.0f} minor page faults a step")

    print(describe(f"a default run ({config.steps} steps, measured every 25)",
                   timed(lambda: train(config, 0, every=25), args.repeats, time.process_time)))
    run = train(config, 0, every=25)
    seqs = eval_set(config)
    off = np.zeros((config.n_layer, config.n_head), dtype=bool)
    off[0, int(np.argmax(run.previous_token[-1, 0]))] = True
    print(describe(f"a knock-out: the {config.eval_size} evaluation sequences, one head off",
                   timed(lambda: measure(run.params, seqs, off), max(args.repeats, 9), time.process_time)))
    print(describe("the attention maps of one sequence at one snapshot",
                   timed(lambda: measure(run.params_at(10), replace(seqs, tokens=seqs.tokens[:1],
                                                                    offset=seqs.offset[:1], period=seqs.period[:1])),
                         max(args.repeats, 9), time.process_time)))
    nbytes = sum(a.nbytes for a in run.snapshots.values())
    print(f"snapshots of a run: {len(run.steps)} x {sum(p.size for p in run.params.values())} weights = "
          f"{nbytes / 1e6:.2f} MB")

    if args.own_runs:
        for where in ("thread", "child"):
            results = [own_run(config, 1000 + i, where) for i in range(args.own_runs)]

            def med(name, scale=1.0, fmt=".2f"):
                return format(statistics.median(r[name] * scale for r in results), fmt)

            line = (f"a learner's own run in the {where}: this process's CPU {med('process_cpu_s')} s, the run's "
                    f"{med('cpu_s')} s, wall {med('wall_s')} s; another thread's slices of Python work ({med('alone_ms', fmt='.1f')} "
                    f"ms alone) took median {med('slice_median_ms', fmt='.1f')} ms, max {med('slice_max_ms', fmt='.1f')} "
                    f"ms (medians of {len(results)} runs)")
            if where == "child":
                line += (f"; the child's peak RSS {med('max_rss_kb', 1 / 1024, '.0f')} MB, its own (private) memory "
                         f"{med('private_kb', 1 / 1024, '.0f')} MB, the pickled run {med('pickle_bytes', 1e-6)} MB")
            print(line)

    if args.class_size:
        for settings in (1, 4):
            wall, runs = class_at_once(config, args.class_size, settings)
            print(f"{args.class_size} students start a run at once, {settings} distinct setting(s): {runs} run(s) "
                  f"trained, the last student waits {wall:.1f} s (wall clock, {os.cpu_count()} CPUs)")

    if args.seeds:
        plateau = plateau_loss(seqs)
        for label, cfg in (("2 layers x 2 heads", config), ("1 layer x 2 heads (the control)",
                                                            replace(config, n_layer=1)),
                           ("2 layers x 1 head", replace(config, n_head=1))):
            found, cpu = [], []
            for seed in range(args.seeds):
                start = time.process_time()
                r = train(cfg, seed, every=25)
                cpu.append(time.process_time() - start)
                found.append(formation_step(r.steps, r.induction, r.loss_repeated, plateau))
            formed = sorted(s for s in found if s is not None)
            spread = (f"median {statistics.median(formed):.0f}, range {formed[0]}-{formed[-1]}" if formed else "")
            print(f"{label}: formed in {len(formed)} of {args.seeds} seeds within {cfg.steps} steps {spread}; "
                  f"steps {found}; CPU a run median {statistics.median(cpu):.1f} s (min {min(cpu):.1f}, "
                  f"max {max(cpu):.1f})")


if __name__ == "__main__":
    main()
