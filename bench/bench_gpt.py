"""The GPT lesson (issue 23, item 7): a new prompt's maps, generation for one and for a class, memory of two processes.

    .venv/bin/python -m bench.bench_gpt                     # everything (~2-4 minutes on a quiet 2-core machine)
    .venv/bin/python -m bench.bench_gpt --parts maps,one --repeats 5
    .venv/bin/python -m bench.bench_gpt --parts class --students 40 --blas-threads 2

Parts: `maps` a new prompt of 12 and 40 tokens through smollm2.forward with all 270 maps, with the last position's
logits (the page's prompt_pass) and with every position's (one BLAS thread; wall and the thread's CPU time, p50 / p95); `steps` one model step for 1, 10 and 40 sequences (what batching buys); `one` one
student's 20 tokens through the generation server (tokens/s); `same` 40 students pressing generate on the same
prompt at once (how many prompts the model started: 1 = computed once); `class` 40 students generating 20 tokens
from 40 different prompts at once (time to first token and to the last, per student); `arrivals` 5 students pressing
generate together while 35 others are written (first token with new prompts stepped first and without); `memory` two processes with
the model (smaps_rollup: private and shared MB before and after loading and generating); `knobs` what lesson 9
computes when a learner moves a sampling knob or a generation ends (the next-token distribution with the knobs, every
seed's first draw). `--model gemma` runs each part on Gemma 3 270M instead (lesson 9's other model; `memory` is
SmolLM2's only: bench/memory.py measures both). Asserts nothing; prints the load average next to the numbers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time

import numpy as np

from bench.memory import load_line, smaps_mb, two_children, wait_while_held

PARTS = ("maps", "steps", "one", "same", "class", "arrivals", "memory", "knobs")
MODEL = ["smollm2"]  # --model
SUBJECTS = ["The cat", "My teacher", "A small robot", "The old bridge", "Our village", "The red balloon", "A farmer",
            "The library", "Every morning the baker", "The scientist", "A quiet river", "The last train"]
ENDINGS = ["walked into the room and", "was known for", "decided that the best way to", "told everyone that",
           "could not believe that the"]


def class_prompts(count: int) -> list[str]:
    """-> `count` different prompts of 4-12 tokens, e.g. 'The cat walked into the room and' (fixed, no randomness)."""
    return [f"{SUBJECTS[i % len(SUBJECTS)]} {ENDINGS[(i // len(SUBJECTS)) % len(ENDINGS)]}" for i in range(count)]


def percentiles(values: list[float]) -> str:
    q = statistics.quantiles(values, n=20, method="inclusive") if len(values) > 1 else values * 19
    return f"p50 {statistics.median(values):.1f} p95 {q[18]:.1f} max {max(values):.1f}"


def limit_blas(threads: int):
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=threads, user_api="blas")


def core():
    """-> the chosen model's package (attention_core.smollm2 or attention_core.gemma): forward, prefill_many, run."""
    import importlib
    return importlib.import_module(f"attention_core.{MODEL[0]}")


def model():
    return core().default_model()


def bench_maps(repeats: int) -> None:
    smollm2 = core()  # (either model: the same calls)
    weights, tokenizer = model()
    text = " ".join(class_prompts(12))
    ids_all = tokenizer.encode(text)
    for all_logits, what in ((False, "the last position's logits (what the page runs)"), (True, "every logit")):
        for n in (12, 40):
            walls, cpus = [], []
            for r in range(repeats):
                ids = ids_all[r % 5: r % 5 + n]  # a different prompt each time: the pass is never cached
                wall, cpu = time.perf_counter(), time.thread_time()
                out = smollm2.forward(weights, ids, all_logits=all_logits)
                cpus.append((time.thread_time() - cpu) * 1000)
                walls.append((time.perf_counter() - wall) * 1000)
            print(f"maps: new prompt of {n} tokens, all {out.attention.shape[0] * out.attention.shape[1]} maps and "
                  f"{what}: thread CPU ms {percentiles(cpus)} | wall ms {percentiles(walls)}  [{load_line()}]",
                  flush=True)


def bench_steps(repeats: int) -> None:
    smollm2 = core()  # (either model: the same calls)
    weights, tokenizer = model()
    prompts = [tokenizer.encode(p) for p in class_prompts(40)]
    for batch in (1, 10, 40):
        _, caches = smollm2.prefill_many(weights, prompts[:batch])
        cpus, walls = [], []
        for _ in range(repeats):
            wall, cpu = time.perf_counter(), time.thread_time()
            smollm2.run(weights, caches, [[13]] * batch)
            cpus.append((time.thread_time() - cpu) * 1000)
            walls.append((time.perf_counter() - wall) * 1000)
        print(f"steps: one step for {batch:2d} sequences: thread CPU ms {percentiles(cpus)} | wall ms "
              f"{percentiles(walls)} | wall per sequence {statistics.median(walls) / batch:.1f} ms  [{load_line()}]",
              flush=True)
    wall, cpu = time.perf_counter(), time.thread_time()
    smollm2.prefill_many(weights, prompts)
    print(f"steps: the 40 class prompts prefilled in one pass ({sum(map(len, prompts))} tokens): thread CPU "
          f"{(time.thread_time() - cpu) * 1000:.0f} ms, wall {(time.perf_counter() - wall) * 1000:.0f} ms", flush=True)


MAX_BATCH = [64]  # --max-batch: 1 serves one student at a time (the "before" of batching)


def new_server(**options):
    from attention_core.gpt.batching import GenerationServer
    if MODEL[0] == "gemma":
        from attention_core.gemma.serving import gemma_step_functions as step_functions
    else:
        from attention_core.smollm2.serving import gpt_step_functions as step_functions
    return GenerationServer(step_functions(model()[0]), max_batch=MAX_BATCH[0], **options)


def bench_knobs(repeats: int) -> None:
    """A knob moved on lesson 9 (ui/gpt/next_token.py): the distribution after the knobs (sampling_probs over the
    whole vocabulary) and, once a generation ends, the first draw of each of 100 seeds; thread CPU ms per call."""
    from attention_core.gpt.sampling import sampling_probs
    from attention_core.gpt_studies import heads
    weights, tokenizer = model()
    logits, _ = core().prefill(weights, tokenizer.encode("The capital of France is"))
    for what, call in (("T = 0.7", lambda: sampling_probs(logits, temperature=0.7)),
                       ("T = 0.7, top-k 50, top-p 0.9", lambda: sampling_probs(logits, 0.7, 50, 0.9)),
                       ("first draws of 100 seeds", lambda: heads.first_draws(sampling_probs(logits), range(100)))):
        cpus = []
        for _ in range(repeats):
            cpu = time.thread_time()
            call()
            cpus.append((time.thread_time() - cpu) * 1000)
        print(f"knobs: {what} over {logits.size:,} tokens: thread CPU ms {percentiles(cpus)}  [{load_line()}]",
              flush=True)


def run_students(server, requests) -> list[dict]:
    """Every request read by its own thread, started together -> per student: first token and finish (s)."""
    start = threading.Barrier(len(requests) + 1)
    rows = [dict() for _ in requests]

    def student(i, request):
        start.wait()
        t0, cpu0 = time.perf_counter(), time.process_time()
        for k, _ in enumerate(server.stream(request)):
            if k == 0:
                rows[i]["first_s"] = time.perf_counter() - t0
                rows[i]["first_cpu_s"] = time.process_time() - cpu0  # the process's CPU until then, all threads
        rows[i]["finish_s"] = time.perf_counter() - t0

    threads = [threading.Thread(target=student, args=(i, r)) for i, r in enumerate(requests)]
    for t in threads:
        t.start()
    cpu = time.process_time()
    start.wait()
    for t in threads:
        t.join()
    rows[0]["process_cpu_s"] = time.process_time() - cpu  # every thread of the process: the worker's steps mostly
    return rows


def bench_one(tokens: int) -> None:
    from attention_core.gpt.batching import GenerationRequest
    _, tokenizer = model()
    server = new_server()
    request = GenerationRequest(tuple(tokenizer.encode("The capital of France is")), seed=1, max_new_tokens=tokens)
    row = run_students(server, [request])[0]
    print(f"one: one student, {tokens} tokens: first token {row['first_s'] * 1000:.0f} ms, all in "
          f"{row['finish_s']:.2f} s = {tokens / row['finish_s']:.1f} tokens/s; "
          f"process CPU {row['process_cpu_s']:.2f} s "
          f"= {tokens / row['process_cpu_s']:.1f} tokens per CPU second  [{load_line()}]", flush=True)


def bench_same(students: int, tokens: int) -> None:
    from attention_core.gpt.batching import GenerationRequest
    _, tokenizer = model()
    server = new_server()
    request = GenerationRequest(tuple(tokenizer.encode("Once upon a time, in a small village,")), seed=3,
                                max_new_tokens=tokens)
    rows = run_students(server, [request] * students)
    print(f"same: {students} students, the same prompt and settings: {server.steps} model steps, batch sizes "
          f"{sorted(set(server.batch_sizes))} (1 = computed once); first token s "
          f"{percentiles([r['first_s'] for r in rows])}; finish s {percentiles([r['finish_s'] for r in rows])}; "
          f"process CPU {rows[0]['process_cpu_s']:.2f} s  [{load_line()}]", flush=True)


def bench_class(students: int, tokens: int) -> None:
    from attention_core.gpt.batching import GenerationRequest
    _, tokenizer = model()
    server = new_server()
    requests = [GenerationRequest(tuple(tokenizer.encode(p)), temperature=0.8, seed=i, max_new_tokens=tokens)
                for i, p in enumerate(class_prompts(students))]
    wall = time.perf_counter()
    rows = run_students(server, requests)
    wall = time.perf_counter() - wall
    firsts, finishes = [r["first_s"] for r in rows], [r["finish_s"] for r in rows]
    print(f"class: {students} students, {tokens} tokens from {students} different prompts "
          f"({sum(len(r.prompt_ids) for r in requests)} prompt tokens): first token s {percentiles(firsts)}; "
          f"finish s {percentiles(finishes)}; process CPU until the first token s "
          f"{percentiles([r['first_cpu_s'] for r in rows])}; {server.steps} model steps "
          f"(batch sizes max {max(server.batch_sizes)}), "
          f"{students * tokens / wall:.1f} tokens/s in all; process CPU {rows[0]['process_cpu_s']:.2f} s  "
          f"[{load_line()}]", flush=True)


def bench_arrivals(students: int, tokens: int, repeats: int, arriving: int = 5) -> None:
    """`arriving` students press Generate together while `students - arriving` are being written: their first token,
    with new prompts stepped first (the server's default) and with them sharing the running ones' step, alternated."""
    from attention_core.gpt.batching import GenerationRequest
    _, tokenizer = model()
    prompts = class_prompts(students)
    firsts = {True: [], False: []}
    for r in range(repeats):
        for prompts_first in (True, False):
            server = new_server(prompts_first=prompts_first)
            running = [GenerationRequest(tuple(tokenizer.encode(p)), temperature=0.8, seed=1000 * r + i,
                                         max_new_tokens=4 * tokens) for i, p in enumerate(prompts[arriving:])]
            started = threading.Barrier(len(running) + 1)
            stop = threading.Event()

            def write(request):
                for k, _ in enumerate(server.stream(request, stop)):
                    if k == 0:
                        started.wait()

            writers = [threading.Thread(target=write, args=(q,)) for q in running]
            for w in writers:
                w.start()
            started.wait()  # every running student has tokens: the batch is writing
            new = [GenerationRequest(tuple(tokenizer.encode(p)), temperature=0.8, seed=7 + 1000 * r + i,
                                     max_new_tokens=tokens) for i, p in enumerate(prompts[:arriving])]
            rows = run_students(server, new)
            firsts[prompts_first] += [row["first_s"] for row in rows]
            stop.set()
            for w in writers:
                w.join()
    on, off = statistics.median(firsts[True]), statistics.median(firsts[False])
    print(f"arrivals: {arriving} students press Generate while {students - arriving} are written ({repeats} rounds): "
          f"first token median {on:.2f} s with new prompts stepped first, {off:.2f} s sharing the step "
          f"(ratio {off / on:.2f}); p95 {percentiles(firsts[True])} / {percentiles(firsts[False])}  [{load_line()}]",
          flush=True)


def memory_child(hold: str, ready: str) -> None:
    """One process: memory after imports, after the model, after a prompt's maps and a generation; then it waits
    (file `hold` present) so the other process's model is mapped at the same time."""
    from attention_core import smollm2  # noqa: F401 - the imports are part of "before"
    from attention_core.gpt import batching as gpt_batching
    before = smaps_mb()
    weights, tokenizer = model()
    loaded = smaps_mb()
    smollm2.forward(weights, tokenizer.encode(" ".join(class_prompts(6)))[:40])
    server = new_server()
    list(server.stream(gpt_batching.GenerationRequest(tuple(tokenizer.encode("Hello")), max_new_tokens=20)))
    used = smaps_mb()
    print(json.dumps({"before": before, "loaded": loaded, "used": used, "both_running": wait_while_held(hold, ready)}),
          flush=True)


def bench_memory() -> None:
    for i, out in enumerate(two_children("bench.bench_gpt")):
        b, u, both = out["before"], out["used"], out["both_running"]
        print(f"memory: process {i + 1}: after imports private {b['private']} MB; with the model, a prompt's maps "
              f"and 20 tokens: private {u['private']} MB (+{u['private'] - b['private']:.1f}), shared "
              f"{u['shared']} MB; both processes running: private {both['private']} MB, shared {both['shared']} MB, "
              f"PSS {both['pss']} MB  [{load_line()}]", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default=",".join(PARTS), help=f"which of {','.join(PARTS)}")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--students", type=int, default=40)
    ap.add_argument("--tokens", type=int, default=20)
    ap.add_argument("--blas-threads", type=int, default=1,
                    help="BLAS threads (the app runs 1; the machine has 2 cores)")
    ap.add_argument("--max-batch", type=int, default=64, help="sequences per step (1 = one student at a time)")
    ap.add_argument("--model", choices=("smollm2", "gemma"), default="smollm2", help="lesson 9's model to measure")
    ap.add_argument("--memory-child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child:
        with limit_blas(1):
            memory_child(*args.memory_child)
        return
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    MAX_BATCH[0] = args.max_batch
    MODEL[0] = args.model
    print(f"bench_gpt: {args.model}, {load_line()}, BLAS threads {args.blas_threads}, max batch {args.max_batch}",
          flush=True)
    with limit_blas(args.blas_threads):
        model()
        for part in parts:
            if part == "maps":
                bench_maps(args.repeats)
            elif part == "steps":
                bench_steps(max(3, args.repeats // 3))
            elif part == "one":
                bench_one(args.tokens)
            elif part == "same":
                bench_same(args.students, args.tokens)
            elif part == "class":
                bench_class(args.students, args.tokens)
            elif part == "arrivals":
                bench_arrivals(args.students, args.tokens, max(1, args.repeats // 5))
            elif part == "memory":
                bench_memory()
            elif part == "knobs":
                bench_knobs(args.repeats)
            else:
                raise SystemExit(f"unknown part {part!r}; choose from {PARTS}")


if __name__ == "__main__":
    main()
