"""The GPT core (SmolLM2-135M in NumPy): full pass with every map, decode steps (B = 1 and B = 40), generation,
fidelity against the float64 reference, and memory with two processes sharing the cached weights.

    .venv/bin/python -m bench.bench_gpt_core                 # speed and fidelity, medians of 15 runs
    .venv/bin/python -m bench.bench_gpt_core --repeats 5
    .venv/bin/python -m bench.bench_gpt_core --memory        # two processes: smaps_rollup private / shared

Everything runs on one BLAS thread, as the app does. Times: wall-clock medians (time.perf_counter) and the thread's
CPU time (time.thread_time, which leaves out waiting for a busy core). Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

from attention_core.blas import single_blas_thread
from bench.timing import describe, timed

TEXT = ("The animal didn't cross the street because it was too tired, so it lay down by the side of the road and "
        "waited for the rain to stop while the cars went past one by one in the grey evening light.") * 2


def speed(repeats: int) -> None:
    from attention_core import smollm2
    start = time.perf_counter()
    weights, tokenizer = smollm2.default_model()
    print(f"default_model() (cache folder built before): {(time.perf_counter() - start) * 1000:.0f} ms")
    ids = tokenizer.encode(TEXT)
    for n in (12, 40):
        part = ids[:n]
        for label, call in ((f"forward, {n} tokens, all maps + all logits", lambda: smollm2.forward(weights, part)),
                            (f"forward, {n} tokens, all maps + last logits",
                             lambda: smollm2.forward(weights, part, all_logits=False)),
                            (f"prefill, {n} tokens (last logits, no maps)", lambda: smollm2.prefill(weights, part))):
            call()
            print(describe(label, timed(call, repeats)))
            print(describe("  CPU time of the thread", timed(call, repeats, time.thread_time)))
    for batch in (1, 8, 40):
        lengths = [12 + (7 * b) % 29 for b in range(batch)]  # mixed lengths, 12-40 tokens
        _, caches = smollm2.prefill_many(weights, [ids[:n] for n in lengths])
        step = [5] * batch

        def one_step():
            smollm2.decode_step(weights, caches, step)
        one_step()
        print(describe(f"decode_step, B = {batch} (caches 12-40 tokens)", timed(one_step, repeats)))
        print(describe("  CPU time of the thread", timed(one_step, repeats, time.thread_time)))
    prompt = tokenizer.encode("The capital of France is")

    def generate_20():
        logits, cache = smollm2.prefill(weights, prompt)
        for _ in range(20):
            logits = smollm2.decode_step(weights, [cache], [int(np.argmax(logits))])[0]
    print(describe("prefill + 20 greedy tokens, one sequence", timed(generate_20, max(3, repeats // 3))))
    sequences = [ids[b:b + 12 + b % 29] for b in range(40)]

    def forty_prompts_20_tokens():
        logits, caches = smollm2.prefill_many(weights, sequences)
        for _ in range(20):
            logits = smollm2.decode_step(weights, caches, [int(i) for i in logits.argmax(axis=1)])
    print(describe("40 prompts (12-40 tokens) + 20 tokens each, batched", timed(forty_prompts_20_tokens, 1)))


def fidelity() -> None:
    from attention_core import smollm2
    from tests import reference_gpt
    weights, tokenizer = smollm2.default_model()
    tensors = reference_gpt.GGUFTensors(smollm2.gguf_path())
    for text in ("The animal didn't cross the street because it was too tired.", TEXT[:180]):
        ids = tokenizer.encode(text)
        logits, maps = reference_gpt.forward(tensors, ids)
        out = smollm2.forward(weights, ids)
        same = int((out.logits.argmax(1) == logits.argmax(1)).sum())
        print(f"vs float64 reference, {len(ids)} tokens: max |attention diff| {np.abs(out.attention - maps).max():.1e}"
              f", max |logit diff| {np.abs(out.logits - logits).max():.1e}, top-1 same at {same} of {len(ids)}")
        logits_step, cache = smollm2.prefill(weights, ids[:4])
        steps = [logits_step] + [smollm2.decode_step(weights, [cache], [t])[0] for t in ids[4:]]
        print(f"  KV cache (prefill 4 + steps) vs full pass: max |logit diff| "
              f"{np.abs(np.stack(steps) - out.logits[3:]).max():.1e}")


MEMORY_CHILD = """
import sys, time
from attention_core.blas import single_blas_thread
from attention_core import smollm2
with single_blas_thread():
    weights, tokenizer = smollm2.default_model()
    smollm2.forward(weights, tokenizer.encode("The animal didn't cross the street because it was too tired."))
print("ready", flush=True)
sys.stdin.readline()
"""


def smaps_rollup(pid: int) -> dict[str, int]:
    """-> {field: kB} of /proc/<pid>/smaps_rollup (Rss, Pss, Shared_Clean, Private_Dirty, ...)."""
    out = {}
    with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1])
    return out


def memory() -> None:
    """Two processes with the memory-mapped cache, then one with no writable cache folder (weights in RAM)."""
    blocked = {**os.environ, "XDG_CACHE_HOME": "/dev/null/none"}  # not a folder: read_weights keeps them in RAM
    for label, count, env in (("cache memory-mapped", 2, None), ("no cache folder: weights in RAM", 1, blocked)):
        print(label)
        _measure_children(count, env)


def _measure_children(count: int, env) -> None:
    children = [subprocess.Popen([sys.executable, "-c", MEMORY_CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True, env=env) for _ in range(count)]
    for child in children:
        assert child.stdout.readline().strip() == "ready"
    for child in children:
        m = smaps_rollup(child.pid)
        private = m["Private_Clean"] + m["Private_Dirty"]
        shared = m["Shared_Clean"] + m["Shared_Dirty"]
        print(f"process {child.pid}: Rss {m['Rss'] / 1024:.0f} MB = private {private / 1024:.0f} MB "
              f"(dirty {m['Private_Dirty'] / 1024:.0f}) + shared {shared / 1024:.0f} MB; Pss {m['Pss'] / 1024:.0f} MB")
    for child in children:
        child.communicate("\n", timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--memory", action="store_true", help="only the two-process memory measurement")
    args = parser.parse_args()
    if args.memory:
        memory()
        return
    with single_blas_thread():
        speed(args.repeats)
        fidelity()


if __name__ == "__main__":
    main()
