"""A class's answers hitting the store: 100 students answer within 5 s, from two processes standing in for two
replicas (each with its own connections, as a replica has), on SQLite (one file, WAL) and on a throwaway PostgreSQL
cluster. Prints every answer's latency (p50/p95/max), whether every answer was counted, and the load average.

    .venv/bin/python -m bench.bench_classroom [--students 100] [--within 5]
    .venv/bin/python -m bench.bench_classroom --replicas [--students 100] [--within 5]

The first measures the store path a student's answer takes. --replicas measures the app: two `streamlit run`
replicas on one SQLite file behind HAProxy (deploy/haproxy.cfg), each student a websocket client
(bench/class_replicas.py; it GETs its page for the routing cookie first, as a browser does), all pages open and
polling as a browser does (the fragment's timer); each answers at a random moment within the window, and an answer's
latency is its page's run, from the click until the page has drawn "your answer is in".
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import tempfile
import time
from collections import Counter
from pathlib import Path

from classroom import new_student, setting_id
from classroom.postgres_store import PostgresStore
from classroom.sqlite_store import SqliteStore

LESSON, QUESTION, N = "causal", "causal_predict", 4


def _store(backend: str, where: str):
    return SqliteStore(where) if backend == "sqlite" else PostgresStore(where)


def _replica(backend, where, code, answers, start_at, within, out):
    """One replica's share: each answer at its own moment in [start_at, start_at + within), on its own thread."""
    import threading

    store, latencies, lock = _store(backend, where), [], threading.Lock()
    rng = random.Random(len(answers))

    def answer(seat, choice, at):
        time.sleep(max(0.0, at - time.time()))
        t0 = time.perf_counter()
        store.answer(code, seat, LESSON, QUESTION, setting_id({}), N, choice)
        with lock:
            latencies.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=answer, args=(seat, choice, start_at + rng.uniform(0, within)))
               for seat, choice in answers]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    out.put(latencies)


def run(backend: str, where: str, students: int, within: float) -> dict:
    store = _store(backend, where)
    code, key = store.create_class()
    rng = random.Random(0)
    answers = [(new_student(), rng.randint(1, N)) for _ in range(students)]
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    start_at = time.time() + 3.0  # (both replicas' interpreters have started by then)
    halves = [answers[0::2], answers[1::2]]
    procs = [context.Process(target=_replica, args=(backend, where, code, half, start_at, within, out))
             for half in halves]
    for p in procs:
        p.start()
    latencies = sorted(x for _ in procs for x in out.get())
    for p in procs:
        p.join()
    counted = store.counts(code, key, LESSON, QUESTION, setting_id({}), N).first
    tally = Counter(choice for _, choice in answers)
    q = lambda f: latencies[min(len(latencies) - 1, int(f * len(latencies)))] * 1000  # noqa: E731
    return {"backend": backend, "answers": len(latencies), "all_counted": counted == tuple(tally[i] for i in
            range(1, N + 1)), "p50_ms": round(q(0.5), 1), "p95_ms": round(q(0.95), 1),
            "max_ms": round(latencies[-1] * 1000, 1), "load_avg_1m": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=100)
    ap.add_argument("--within", type=float, default=5.0)
    ap.add_argument("--replicas", action="store_true", help="through two app replicas behind HAProxy")
    args = ap.parse_args()
    if args.replicas:
        from bench.class_replicas import main as through_replicas

        print(through_replicas(args.students, args.within))
        return
    with tempfile.TemporaryDirectory() as folder:
        print(run("sqlite", str(Path(folder) / "classes.sqlite3"), args.students, args.within))
    from classroom.local_postgres import throwaway_cluster

    with throwaway_cluster() as cluster:
        print(run("postgres", cluster.url, args.students, args.within))


if __name__ == "__main__":
    main()
