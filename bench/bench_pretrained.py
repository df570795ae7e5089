"""Lesson 8's trained model: load time and memory, forward-pass cost, the analyses' cost, and what the heads do.

    .venv/bin/python -m bench.bench_pretrained               # everything, medians of 15 runs
    .venv/bin/python -m bench.bench_pretrained --repeats 5

Memory is read from /proc/self/status before and after the first load (RssAnon = private memory, RssFile = the
memory-mapped file's pages, shared by every process on the machine), so run it as its own process. Times are
wall-clock medians (time.perf_counter); the forward pass also in the thread's CPU time (time.thread_time), which
leaves out waiting for a busy core. The forward pass runs on one BLAS thread (attention_core.bert does that
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
    pretrained.attention_maps(FAMOUS, model)  # touches embeddings rows and every layer's weights
    after = {f: _status_kb(f) for f in before}
    print(f"first load_model(): {loaded * 1000:.0f} ms (file in the page cache); after one forward pass:")
    for f in before:
        print(f"  {f:8} +{(after[f] - before[f]) / 1024:6.1f} MB")
    copy_start = _status_kb("RssAnon")
    twin_start = _status_kb("RssAnon")
    pretrained.untrained_twin(0)
    print(f"  the untrained twin (seed 0): RssAnon +{(_status_kb('RssAnon') - twin_start) / 1024:.1f} MB")
    pretrained.forget_twins()
    tensors = pretrained.read_safetensors(pretrained.model_dir() / "model.safetensors")
    copied = {k: np.array(v) for k, v in tensors.items()}
    print(f"  for comparison, copying every tensor: RssAnon +{(_status_kb('RssAnon') - copy_start) / 1024:.1f} MB "
          f"({sum(a.nbytes for a in copied.values()) / 2**20:.1f} MB of tensors)")
    del copied


def ids_of_length(model, n: int) -> list[int]:
    from attention_core import wordpiece
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
    print(describe("attention_maps(famous sentence), 14 tokens",
                   timed(lambda: pretrained.attention_maps(FAMOUS), repeats)))
    print(describe("build_twin(seed) (uncached)",
                   timed(lambda: pretrained.build_twin(5), max(3, repeats // 5))))


def analyses_cost(repeats: int) -> None:
    from attention_core import pretrained, pretrained_sets
    sets = pretrained_sets.load_pretrained_sets()
    model, twin = pretrained.load_model(), pretrained.untrained_twin(0)
    runs = max(3, repeats // 5)
    sentences = sum(len(v) for v in sets.kinds.values())
    print(describe(f"head_catalogue, trained ({sentences} sentences)",
                   timed(lambda: pretrained_sets.head_catalogue(model, sets), runs)))
    print(describe("head_catalogue, twin", timed(lambda: pretrained_sets.head_catalogue(twin, sets), runs)))
    print(describe(f"winograd_study, trained ({2 * len(sets.winograd)} sentences)",
                   timed(lambda: pretrained_sets.winograd_study(model, sets), runs)))
    print(describe("pair_twin_test (famous pair)",
                   timed(lambda: pretrained_sets.pair_twin_test(model, sets.winograd[0]), repeats)))
    texts = pretrained_sets.set_texts(sets)
    print(describe(f"read_text one by one, the {len(texts)} texts of the sets",
                   timed(lambda: [pretrained.read_text(text, model) for text in texts], runs)))
    print(describe("read_texts, the same all together", timed(lambda: pretrained.read_texts(texts, model), runs)))
    print(describe("set_results, trained (everything the page shows of the sets)",
                   timed(lambda: pretrained_sets.set_results(model, sets), runs)))
    print(describe("set_results, twin", timed(lambda: pretrained_sets.set_results(twin, sets), runs)))


def findings() -> None:
    from attention_core import pretrained, pretrained_heads as heads, pretrained_sets
    sets = pretrained_sets.load_pretrained_sets()
    model = pretrained.load_model()
    twins = [pretrained.untrained_twin(seed) for seed in (0, 1, 2)]
    for hide in (False, True):
        print(f"\nhead catalogue ({'[CLS]/[SEP] hidden, rows renormalised' if hide else 'raw weights'}):"
              " kind: trained best head, mean weight, accuracy | twin (seed 0) best | trained best by accuracy")
        mine = pretrained_sets.head_catalogue(model, sets, hide)
        control = pretrained_sets.head_catalogue(twins[0], sets, hide)
        for kind in pretrained_sets.KINDS:
            e, c = mine[kind], control[kind]
            acc = "" if e.best_accuracy is None else f" acc {e.best_accuracy:.2f}"
            cacc = "" if c.best_accuracy is None else f" acc {c.best_accuracy:.2f}"
            by_acc = "" if e.scores.accuracy is None else f" | {heads.best_head(e.scores.accuracy).name} " \
                                                          f"{heads.best_head(e.scores.accuracy).weight:.2f}"
            print(f"  {kind:18} {e.best.name:6} {e.best.weight:.3f}{acc} ({e.scores.pairs} pairs, {e.sentences} "
                  f"sentences) | twin {c.best.name:6} {c.best.weight:.3f}{cacc}{by_acc}")
        if not hide:
            sink = mine["sink"].scores.mean_weight
            print(f"  sink: mean weight on [CLS] over all heads {sink.mean():.2f}; heads over half: "
                  f"{int((sink > 0.5).sum())} of {sink.size}")
    famous = sets.winograd[0]
    print("\ntwin test:", " / ".join(famous.sentences))
    for sentence in (*famous.sentences, "The animal didn't cross the street because it was too tired.",
                     "The animal didn't cross the street because it was too wide."):
        reading = pretrained.read_text(sentence, model)
        words = [w.text for w in reading.words]
        it = next(w for w in reading.words if w.text == "it")
        spans = [next(w for w in reading.words if w.text == noun) for noun in ("animal", "street")]
        w = heads.word_weights(reading.attentions[3, 1], (it.first, it.stop), [(s.first, s.stop) for s in spans])
        top = heads.rank_heads(reading.attentions, (it.first, it.stop), (spans[0].first, spans[0].stop))[0]
        print(f"  L3H1 it -> animal {w[0]:.3f}, street {w[1]:.3f}; top head for it -> animal {top.name} "
              f"{top.weight:.3f}   [{words[-1]}, {len(reading.tokens)} tokens]")
    for seed, twin in enumerate(twins):
        reading = pretrained.read_text(FAMOUS, twin)
        print(f"  twin seed {seed}: best head it -> animal "
              f"{heads.rank_heads(reading.attentions, (9, 10), (2, 3))[0].weight:.3f}")
    contracted = pretrained_sets.WinogradPair(
        tuple(s.replace("did not", "didn't") + "." for s in famous.sentences), "it", famous.candidates, famous.answers)
    for pair in (famous, contracted):
        test = pretrained_sets.pair_twin_test(model, pair)
        flipped = test.weights[:, test.flips]
        print(f"  {pair.sentences[0][:30]}...: heads that flip: {int(test.flips.sum())} of {test.flips.size}, right "
              f"in both: {int(test.right_in_both.sum())}; largest weight of a flipping head on either noun: "
              f"{flipped.max() if flipped.size else float('nan'):.3f}")
    margins = pretrained_sets.winograd_margins(model, sets)
    for name, chosen in [("trained", model), *((f"twin seed {s}", t) for s, t in enumerate(twins))]:
        m = margins if chosen is model else pretrained_sets.winograd_margins(chosen, sets)
        scores = heads.winograd_scores(m)
        print(f"\nWinograd, {name}, {scores.pairs} pairs: sentence accuracy best {scores.best.name} "
              f"{scores.best.weight:.3f}, mean {scores.mean:.3f}; pair accuracy (both right) best "
              f"{scores.pair_accuracy.max():.3f}, mean {scores.pair_accuracy.mean():.3f}")
    even = np.arange(len(sets.winograd)) % 2 == 0
    for label, chosen_on in (("even", even), ("odd", ~even)):
        picked, rest = heads.held_out_choice(margins, chosen_on)
        print(f"  picked on the {label} pairs: {picked.name} ({picked.weight:.3f}), on the other pairs {rest:.3f}")


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
