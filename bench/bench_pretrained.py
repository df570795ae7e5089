"""Lesson 8's trained model: load time and memory, forward-pass cost, the measurements' cost, and what the heads do.

    .venv/bin/python -m bench.bench_pretrained               # everything, medians of 15 runs
    .venv/bin/python -m bench.bench_pretrained --repeats 5

Memory is read from /proc/self/status before and after the first load (RssAnon = private memory, RssFile = the
memory-mapped file's pages, shared by every process on the machine), so run it as its own process. Times are
wall-clock medians (time.perf_counter); the forward pass also in the thread's CPU time (time.thread_time), which
leaves out waiting for a busy core. The forward pass runs on one BLAS thread (attention_core.pretrained.bert does that
itself). Asserts nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

import numpy as np

from bench.timing import describe, timed

FAMOUS = "The animal did not cross the street because it was too tired"
LONG_TEXT = ("the quick brown fox jumps over the lazy dog while the animal did not cross the street because it was "
             "too tired and everyone waited patiently at the corner of the road for the rain to stop ") * 4


def _status_kb(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def memory_of_loading() -> None:
    start = time.perf_counter()
    from attention_core import pretrained
    print(f"import attention_core.pretrained: {(time.perf_counter() - start) * 1000:.0f} ms")
    before = {f: _status_kb(f) for f in ("VmRSS", "RssAnon", "RssFile")}
    start = time.perf_counter()
    model = pretrained.load_model()
    loaded = time.perf_counter() - start
    pretrained.read_text(FAMOUS, model)  # touches embeddings rows and every layer's weights
    after = {f: _status_kb(f) for f in before}
    print(f"first load_model(): {loaded * 1000:.0f} ms (file in the page cache); after one forward pass:")
    for f in before:
        print(f"  {f:8} +{(after[f] - before[f]) / 1024:6.1f} MB")
    copy_start = _status_kb("RssAnon")
    untrained_start = _status_kb("RssAnon")
    untrained = pretrained.build_untrained_copy(0)
    print(f"  the untrained copy (seed 0): RssAnon +{(_status_kb('RssAnon') - untrained_start) / 1024:.1f} MB")
    del untrained
    tensors = pretrained.read_safetensors(pretrained.model_dir() / "model.safetensors")
    copied = {k: np.array(v) for k, v in tensors.items()}
    print(f"  for comparison, copying every tensor: RssAnon +{(_status_kb('RssAnon') - copy_start) / 1024:.1f} MB "
          f"({sum(a.nbytes for a in copied.values()) / 2**20:.1f} MB of tensors)")
    del copied


def ids_of_length(model, n: int) -> list[int]:
    from attention_core.pretrained import wordpiece
    tokens = wordpiece.tokenize(LONG_TEXT, model.vocabulary)
    return [tokens[0].id] + [t.id for t in tokens[1:n - 1]] + [tokens[-1].id]


def as_float64(weights):
    def convert(obj):
        return dataclasses.replace(obj, **{f.name: np.asarray(getattr(obj, f.name), dtype=np.float64)
                                           for f in dataclasses.fields(obj) if f.name not in ("config", "layers")})
    return dataclasses.replace(convert(weights), layers=tuple(convert(layer) for layer in weights.layers))


def cpu_timed(fn, repeats: int) -> list[float]:
    """Like bench.timing.timed, in CPU seconds of this thread (time.thread_time): waiting for a busy core excluded."""
    out = []
    for _ in range(repeats):
        start = time.thread_time()
        fn()
        out.append(time.thread_time() - start)
    return out


def forward_cost(repeats: int) -> None:
    from attention_core import pretrained
    model = pretrained.load_model()
    wide = as_float64(model.weights)
    for n in (12, 40, 128):
        ids = ids_of_length(model, n)
        print(describe(f"forward pass, {n} tokens, float32",
                       timed(lambda: pretrained.encoder_forward(model.weights, ids), repeats)))
        print(describe("  the same, CPU time of the thread",
                       cpu_timed(lambda: pretrained.encoder_forward(model.weights, ids), repeats)))
        narrow = pretrained.encoder_forward(model.weights, ids).attentions
        double = pretrained.encoder_forward(wide, ids).attentions
        changed = int((narrow.argmax(-1) != double.argmax(-1)).sum())
        print(describe(f"forward pass, {n} tokens, float64",
                       timed(lambda: pretrained.encoder_forward(wide, ids), repeats))
              + f"   vs float32: max |dw| {np.abs(narrow - double).max():.1e}, rows whose argmax moved: {changed}")
    print(describe("read_text(famous sentence), 14 tokens",
                   timed(lambda: pretrained.read_text(FAMOUS), repeats)))
    print(describe("build_untrained_copy(seed)",
                   timed(lambda: pretrained.build_untrained_copy(5), max(3, repeats // 5))))


def analyses_cost(repeats: int) -> None:
    from attention_core import pretrained
    from attention_core.pretrained import measure
    from attention_core.pretrained import sets as pretrained_sets
    sets = pretrained_sets.load_pretrained_sets()
    model, untrained = pretrained.load_model(), pretrained.build_untrained_copy(0)
    runs = max(3, repeats // 5)
    texts = measure.set_texts(sets)
    print(describe(f"read_text one by one, the {len(texts)} texts of the sets",
                   timed(lambda: [pretrained.read_text(text, model) for text in texts], runs)))
    print(describe("read_texts, the same all together", timed(lambda: pretrained.read_texts(texts, model), runs)))
    print(describe("set_results, trained (every per-item outcome of the sets)",
                   timed(lambda: measure.set_results(model, sets), runs)))
    print(describe("set_results, untrained copy", timed(lambda: measure.set_results(untrained, sets), runs)))
    mine, control = measure.set_results(model, sets), measure.set_results(untrained, sets)
    print(describe("lesson_measures (splits, intervals, 2 x 5000 chance draws)",
                   timed(lambda: measure.lesson_measures(mine, control, sets), runs)))


def _count(c) -> str:
    lo, hi = c.interval
    return f"{c.k} of {c.n} ({c.share:.0%}, 95 % {lo:.0%}-{hi:.0%})"


def findings() -> None:
    from attention_core import pretrained
    from attention_core.pretrained import measure
    from attention_core.pretrained import sets as pretrained_sets
    sets = pretrained_sets.load_pretrained_sets()
    model = pretrained.load_model()
    mine = measure.set_results(model, sets)
    controls = [measure.set_results(pretrained.build_untrained_copy(seed), sets) for seed in (0, 1, 2)]
    found = measure.lesson_measures(mine, controls[0], sets)
    print("\ncatalogue (picked on one half, scored on the other; untrained copy seed 0):")
    for kind, row in found.catalogue.items():
        held = row.trained.held_out_count
        score = _count(held) if held is not None else f"mean weight {row.trained.held_out_mean:.3f}"
        control = row.untrained.held_out_count
        cscore = _count(control) if control is not None else f"mean weight {row.untrained.held_out_mean:.3f}"
        base = "" if row.baseline is None else f" | rule {row.rule}: {_count(row.baseline)}"
        print(f"  {kind:18} {row.trained.name:6} {score} (items {len(row.split.pick_idx)} / {len(row.split.score_idx)})"
              f"{base} | untrained {row.untrained.name} {cscore}")
    ref = found.referent
    print(f"\nthe famous head L{ref.head[0]}H{ref.head[1]} over the {ref.items} 'it' sentences: "
          + ", ".join(f"{k} {_count(c)}" for k, c in ref.counts.items())
          + f"; a person among the nouns in {ref.person_items}, referent = subject in {_count(ref.subject_among_rest)}")
    for name, study in (("agreement minimal pairs", found.agreement), ("Winograd pairs", found.winograd)):
        print(f"\n{name}, {study.pairs} pairs: best {measure.hs.head_name(study.best)} {_count(study.best_count)}, "
              f"mean head {study.mean:.3f}; best of {study.accuracy.size} by chance: mean {study.chance.mean:.3f}, "
              f"95th percentile {study.chance.p95:.3f}, p {study.chance.p_value:.4f} ({study.chance.draws} draws)")
        print(f"  picked on {len(study.split.pick_idx)} pairs: {study.held_out.name} "
              f"{_count(study.held_out.pick_count)}"
              f" there, held out {_count(study.held_out.held_out_count)}; untrained copy held out "
              f"{_count(study.untrained_held_out.held_out_count)}; cells at 50 %: {study.half_cells}, heads preferring "
              f"the same noun in every pair: {study.same_noun_heads}")
    print(f"\n[CLS] cosine between the first and last preset, each layer's input: "
          + " ".join(f"{c:.5f}" for c in mine.cls_cosine))
    for seed, control in enumerate(controls):
        print(f"  untrained copy seed {seed}: best head it -> animal {control.featured.weight:.3f}")
    test = mine.featured_test
    flipped = test.weights[:, test.flips]
    print(f"the tired/wide minimal pair: heads that flip {int(test.flips.sum())} of {test.flips.size}, right in both "
          f"{int(test.right_in_both.sum())}, largest weight of a flipping head {flipped.max():.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    memory_of_loading()
    forward_cost(args.repeats)
    analyses_cost(args.repeats)
    findings()


if __name__ == "__main__":
    main()
