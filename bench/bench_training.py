"""Time lesson 6's training run (attention_core.glove.training.train_head) and the page's seed histogram.

    .venv/bin/python -m bench.bench_training                 # 5 repeats of the default setting
    .venv/bin/python -m bench.bench_training --repeats 9 --seeds 10

A training run happens when a learner presses "Train the head"; the page keeps the result in
st.session_state, so this is the wait they see. Prints medians and spread, the held-out accuracy of
the default setting over several seeds, and the page's rank histogram of "animal" (random directions).
Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
from dataclasses import replace

import numpy as np

from attention_core.attention import ranks_in_rows
from attention_core.glove import embed, load_glove
from attention_core.glove.rows import direction_ranks, rank_counts, rank_summary, raw_row
from attention_core.glove.pronouns import load_pronoun_dataset, pronoun_batch
from attention_core.text import tokenize
from attention_core.glove.training import TrainSetting, accuracy, head_rows, train_head
from bench.timing import describe, timed

SENTENCE = "The animal did not cross the street because it was too tired"  # the GloVe page's default
N_SEEDS = 2000  # as ui/glove.N_DRAWS


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_training", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=10, help="training seeds for the held-out accuracy spread")
    args = ap.parse_args(argv)

    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")
    kv = load_glove()
    ds = load_pronoun_dataset()
    train, held = pronoun_batch(ds.train, kv), pronoun_batch(ds.held_out, kv)
    default = TrainSetting()
    print(f"data: {train.size} training sentences, {held.size} held-out, padded to {train.X.shape[1]} tokens; "
          f"default setting {default}")

    for setting in (default, replace(default, d_k=64), replace(default, d_k=64, steps=800)):
        label = f"train_head d_k={setting.d_k}, {setting.steps} steps"
        print(describe(label, timed(lambda: train_head(train, setting), args.repeats)))

    accs = []
    for seed in range(args.seeds):
        r = train_head(train, replace(default, seed=seed))
        accs.append(accuracy(head_rows(r.W_q, r.W_k, held, True), held.answer))
    print(f"held-out accuracy, default setting, seeds 0-{args.seeds - 1}: "
          + ", ".join(f"{a:.3f}" for a in accs)
          + f"   (median {statistics.median(accs):.3f}, min {min(accs):.3f}, max {max(accs):.3f})")
    off = train_head(train, replace(default, context=False))
    print(f"held-out accuracy without context (seed 0): {accuracy(head_rows(off.W_q, off.W_k, held, False), held.answer):.3f}")

    words = tokenize(SENTENCE)
    X, _ = embed(words, kv)
    qi, ti = words.index("it"), words.index("animal")
    raw = raw_row(X, qi)
    print(f"raw GloVe: rank of 'animal' in the row of 'it' = {int(ranks_in_rows(raw, ti))} of {len(words)} "
          f"(weight {raw[ti]:.4f})")
    print(describe(f"the page's histogram: {N_SEEDS} random directions (any query, any d_k)",
                   timed(lambda: direction_ranks(X, ti, N_SEEDS, 0), args.repeats)))
    counts = rank_counts(direction_ranks(X, ti, N_SEEDS, 0), len(words))
    s = rank_summary(counts)
    print(f"  counts by rank 1..{len(words)}: {counts.tolist()}; mean rank {s['mean_rank']:.2f} "
          f"(uniform {s['uniform_mean_rank']:.1f}), first {100 * s['top_share']:.1f} %, "
          f"last {100 * s['bottom_share']:.1f} % (uniform {100 * s['uniform_share']:.1f} %)")


if __name__ == "__main__":
    main()
