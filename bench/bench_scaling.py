"""Time the scaling lesson's table: attention_core.scaling.sweep_table at the page's settings.

    .venv/bin/python -m bench.bench_scaling               # 5 repeats, seed 0
    .venv/bin/python -m bench.bench_scaling --repeats 9 --draws 1000

The page computes this table once per process, in a background thread started by the app's first run
(ui/scaling.py); this measures that computation. Also times the light per-rerun pieces and the figure
builders (plain dicts, charts/scaling.py) that a cache miss pays. Prints the median and the spread; asserts nothing
about time.
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np

from attention_core.scaling import (
    DIM_CHOICES, NEXT_WORD_SCORES, SAMPLE_COUNT, TABLE_DRAWS, TABLE_KEYS, TABLE_QUERIES, TEMPERATURE_CHOICES,
    density_histogram, normal_curve, prefix_weights, random_query_keys, sampling_sweep, score_sample, sweep_table,
    table_standard_errors,
)
from bench.timing import describe, timed
from charts.scaling import score_histogram, sweep_figure, temperature_sampling, weights_animation


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_scaling", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--draws", type=int, default=TABLE_DRAWS, help=f"draws per table (page: {TABLE_DRAWS})")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '-')}")
    print(f"table: {len(DIM_CHOICES)} values of d up to {max(DIM_CHOICES)}, {args.draws} draws of "
          f"Q ({TABLE_QUERIES} x d) and K ({TABLE_KEYS} x d)")
    table = sweep_table(args.seed, n_draws=args.draws)  # warm-up, and the numbers to report
    print(describe("sweep_table (the page's table)", timed(lambda: sweep_table(args.seed, n_draws=args.draws),
                                                              args.repeats)))
    print(describe("score_sample d=1024, 8 keys (histogram)",
                   timed(lambda: score_sample(1024, 8, args.seed, scale=False), args.repeats * 4)))
    q, K = random_query_keys(64, args.seed)
    print(describe("prefix_weights 64 keys x 9 d (animation)",
                   timed(lambda: prefix_weights(q, K, DIM_CHOICES, scale=True), args.repeats * 4)))
    z = score_sample(64, 8, args.seed, scale=True)
    edges, density, counts = density_histogram(z)
    cx, cy = normal_curve(edges[0], edges[-1], 1.0)
    print(describe("score_histogram figure dict", timed(lambda: score_histogram(
        edges, density, counts, cx, cy, "z", "density", "bars", "curve", title="t"), args.repeats * 4)))
    u, s = prefix_weights(q, K, DIM_CHOICES, scale=False), prefix_weights(q, K, DIM_CHOICES, scale=True)
    keys = [f"k{i}" for i in range(len(K))]
    print(describe("weights_animation figure dict (64 keys)", timed(lambda: weights_animation(
        DIM_CHOICES, u, s, keys, ("a", "b"), "w", "play", "pause"), args.repeats * 4)))
    labels = {k: k for k in ("var", "max", "entropy", "jacobian", "unscaled", "scaled", "line_d", "line_1", "uniform",
                             "d")}
    print(describe("sweep_figure figure dict", timed(lambda: sweep_figure(table, labels, TABLE_KEYS), args.repeats * 4)))
    run = sampling_sweep(NEXT_WORD_SCORES, TEMPERATURE_CHOICES, SAMPLE_COUNT, args.seed)
    print(describe("sampling_sweep + temperature_sampling dict", timed(lambda: temperature_sampling(
        list("abcdef"), sampling_sweep(NEXT_WORD_SCORES, TEMPERATURE_CHOICES, SAMPLE_COUNT, args.seed)["probs"],
        TEMPERATURE_CHOICES, run["samples"], run["entropy"], 8, {"title": "{tau} {h} {m} {samples}", "y": "p",
                                                                   "slider": "t"}), args.repeats * 4)))
    se = table_standard_errors(table)
    print(f"largest standard errors: weights {se['weights']:.4f}, entropy {se['entropy']:.4f}, "
          f"var/d {se['var_ratio']:.4f}")
    print(f"d = 1024: var/d {table['var_ratio'][-1]:.4f}, largest weight unscaled {table['max_unscaled'][-1]:.4f}, "
          f"scaled {table['max_scaled'][-1]:.4f}")


if __name__ == "__main__":
    main()
