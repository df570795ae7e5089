"""Gemma 3 270M in NumPy (issue 39): a 40-token pass with all 72 maps, one generation step, the float32 cache's
build, and the memory of two processes mapping the cache.

    .venv/bin/python -m bench.bench_gemma                       # everything (~1-2 minutes on a quiet 2-core machine)
    .venv/bin/python -m bench.bench_gemma --parts maps,step --repeats 9

Parts: `maps` a 40-token text through gemma.forward with all 72 maps and the last position's logits; `step` one
generation step (decode_step) after a 40-token prefill, for 1 and for 10 sequences; `build` the float32 cache built
from the joined GGUF into a fresh folder (the hash check of the chunks included when --join is given); `memory` two
processes loading the model and running a pass (smaps_rollup: private and shared MB; both running at once). CPU
seconds of this thread at one BLAS thread, medians; asserts nothing; prints the load average next to the numbers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.memory import load_line, smaps_mb, two_children, wait_while_held

PARTS = ("maps", "step", "build", "memory")
TEXT = ("The old lighthouse keeper climbed the stairs every evening to light the lamp, and the ships that passed "
        "in the night never knew his name, but they trusted the light he kept burning until the morning came "
        "over the sea")


def cpu_median(action, repeats: int) -> tuple[float, float]:
    """action() run `repeats` times -> (median CPU ms of this thread, median wall ms)."""
    cpu, wall = [], []
    for _ in range(repeats):
        c, w = time.thread_time(), time.perf_counter()
        action()
        cpu.append((time.thread_time() - c) * 1000)
        wall.append((time.perf_counter() - w) * 1000)
    return statistics.median(cpu), statistics.median(wall)


def forty_ids(tokenizer) -> list[int]:
    ids = tokenizer.encode(TEXT)[:40]
    assert len(ids) == 40, len(ids)
    return ids


def bench_maps(repeats: int) -> None:
    from attention_core import gemma
    weights, tokenizer = gemma.default_model()
    ids = forty_ids(tokenizer)
    gemma.forward(weights, ids, all_logits=False)  # the first pass pages the weights in
    cpu, wall = cpu_median(lambda: gemma.forward(weights, ids, all_logits=False), repeats)
    print(f"maps: a 40-token pass with all 72 maps and the last logits: CPU {cpu:.0f} ms, wall {wall:.0f} ms "
          f"(median of {repeats}; {load_line()})")


def bench_step(repeats: int) -> None:
    from attention_core import gemma
    weights, tokenizer = gemma.default_model()
    ids = forty_ids(tokenizer)
    for batch in (1, 10):
        caches = [gemma.prefill(weights, ids)[1] for _ in range(batch)]
        cpu, wall = cpu_median(lambda: gemma.decode_step(weights, caches, [ids[-1]] * batch), repeats)
        print(f"step: one generation step for {batch} sequence(s) of ~40 tokens: CPU {cpu:.0f} ms, wall {wall:.0f} "
              f"ms, {batch * 1000 / cpu:.1f} tokens per CPU second (median of {repeats}; {load_line()})")


def bench_build(join: bool) -> None:
    from attention_core.gemma import weights as gw
    with tempfile.TemporaryDirectory(prefix="bench-gemma-") as root:
        c, w = time.process_time(), time.perf_counter()
        path = gw.gguf_path(cache_root=Path(root)) if join else gw.gguf_path()
        joined_cpu, joined_wall = time.process_time() - c, time.perf_counter() - w
        c, w = time.process_time(), time.perf_counter()
        gw.model_cache_dir(path, cache_root=Path(root))
        cache_cpu, cache_wall = time.process_time() - c, time.perf_counter() - w
        joined = f"joining and hashing the chunks: CPU {joined_cpu:.1f} s, wall {joined_wall:.1f} s; " if join else ""
        print(f"build: {joined}the float32 cache (1.07 GB) from the GGUF: CPU {cache_cpu:.1f} s, wall "
              f"{cache_wall:.1f} s ({load_line()})")


def memory_child(hold: str, ready: str) -> None:
    """One process: memory after imports, after the model and a 40-token pass plus 10 steps; then it waits (while
    `hold` exists) so the other process maps the cache at the same time."""
    from attention_core import gemma
    before = smaps_mb()
    weights, tokenizer = gemma.default_model()
    ids = forty_ids(tokenizer)
    gemma.forward(weights, ids, all_logits=False)
    _, cache = gemma.prefill(weights, ids)
    for _ in range(10):
        gemma.decode_step(weights, [cache], [ids[-1]])
    used = smaps_mb()
    print(json.dumps({"before": before, "used": used, "both_running": wait_while_held(hold, ready)}), flush=True)


def bench_memory() -> None:
    for i, out in enumerate(two_children("bench.bench_gemma")):
        b, u, both = out["before"], out["used"], out["both_running"]
        print(f"memory: process {i + 1}: after imports RSS {b['rss']} MB (private {b['private']}); with the model, "
              f"a 40-token pass and 10 steps: RSS {u['rss']} MB, private {u['private']} MB, shared {u['shared']} MB; "
              f"both running: RSS {both['rss']} MB, private {both['private']} MB, shared {both['shared']} MB, "
              f"PSS {both['pss']} MB")
    print(f"memory: ({load_line()})")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--join", action="store_true", help="build: also join and hash the chunks into a new folder")
    parser.add_argument("--memory-child", nargs=2, metavar=("HOLD", "READY"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1, user_api="blas"):
        if args.memory_child:
            memory_child(*args.memory_child)
            return 0
        for part in args.parts.split(","):
            {"maps": lambda: bench_maps(args.repeats), "step": lambda: bench_step(args.repeats),
             "build": lambda: bench_build(args.join), "memory": bench_memory}[part]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
