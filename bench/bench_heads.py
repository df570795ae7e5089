"""The lesson "What heads do": the CPU its experiments cost on one core (one BLAS thread, as the app runs).

    .venv/bin/python -m bench.bench_heads               # medians of 7 runs
    .venv/bin/python -m bench.bench_heads --repeats 3
    .venv/bin/python -m bench.bench_heads --sweep       # also the start-up work itself, timed once (minutes)

Times are the thread's CPU time (time.thread_time: waiting for a busy core left out) and wall-clock medians. The
learner's own request is the p95 target of docs/performance.md: the worst case is a head in layer 0 (the pass then
starts at the first layer); the top-k induction heads start at their first layer (17-18). Asserts nothing.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from attention_core.blas import single_blas_thread
from bench.timing import describe, timed

NAME_TEXT = "My new neighbour is called Zorblat Quimbley. This morning I said hello to Zorblat Quimbley."


def p95(seconds: list[float]) -> float:
    return float(np.quantile(seconds, 0.95)) * 1000


def speed(repeats: int, sweep: bool) -> None:
    from attention_core import smollm2
    from attention_core.gpt_studies import causal_study as cs
    from attention_core.gpt_studies import heads
    from attention_core.smollm2 import interventions as iv

    weights, tokenizer = smollm2.default_model()
    sets = heads.induction_sets(8, 20)
    start = time.thread_time()
    picking, scoring = cs.run_set(weights, sets.picking, 20), cs.run_set(weights, sets.scoring, 20)
    print(f"two sets of 8 x 40 tokens, recorded with all 270 maps: {(time.thread_time() - start) * 1000:.0f} ms CPU")
    means = iv.head_means(picking.trace)
    cases = {"1 head in layer 0 (the whole pass)": [(0, 4)],
             "top 4 induction heads (from layer 17)": list(cs.top_heads(picking.induction.mean(axis=0), 4)),
             "8 random heads": list(cs.random_head_sets(8, 1, 3, (30, 9))[0]),
             "all 270 heads": [(l, h) for l in range(30) for h in range(9)]}
    for label, chosen in cases.items():
        for kind, m in (("zero", None), ("mean", means)):
            def call():
                cs.switched_off_losses(weights, scoring.trace, 20, chosen, m)
            seconds = timed(call, repeats, time.thread_time)
            print(describe(f"second-copy loss, {label}, {kind}", seconds, 60), f"  p95 {p95(seconds):.0f} ms")
    ids = tokenizer.encode(NAME_TEXT)
    piece = tokenizer.encode(" Zorblat Quimbley")
    for label, chosen in (("no head off", []), ("top 4 induction heads off", cases["top 4 induction heads (from layer 17)"])):
        seconds = timed(lambda: cs.copied_name(weights, ids, piece, chosen), repeats, time.thread_time)
        print(describe(f"the made-up name copied, {label}", seconds, 60), f"  p95 {p95(seconds):.0f} ms")
    for text in ("The capital of France is", "Once upon a time, there was a little"):
        seconds = timed(lambda: cs.read_layers(weights, tokenizer.encode(text)), repeats, time.thread_time)
        print(describe(f"the lens, {len(tokenizer.encode(text))} tokens (31 x 49,152 logits)", seconds, 60))
    if not sweep:
        return
    for label, call in (("composition (20 controls)", lambda: cs.composition_study(weights, picking, scoring, 20)),
                        ("ablation study (k = 1, 2, 4, 8; 40 draws; zero and mean)",
                         lambda: cs.ablation_study(weights, picking, scoring, 20)),
                        ("every head alone (270 runs)", lambda: cs.single_head_effects(weights, scoring, 20))):
        wall, cpu = time.perf_counter(), time.thread_time()
        call()
        print(f"{label:<60} {time.thread_time() - cpu:8.1f} s CPU   {time.perf_counter() - wall:8.1f} s wall")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args()
    with single_blas_thread():
        speed(args.repeats, args.sweep)


if __name__ == "__main__":
    main()
