"""What heads do, "Does the model decide 'it' at all?": the CPU its study costs (one BLAS thread, as the app runs).

    .venv/bin/python -m bench.bench_heads_referent            # every part of the start-up sweep, timed once
    .venv/bin/python -m bench.bench_heads_referent --page 5   # also the page's run: disk read, section shown (medians)

Core parts: the thread's CPU time (time.thread_time). The page: the process's CPU time (AppTest runs the script in a
thread of its own) of one rerun of "What heads do" with the section's question answered, against the same rerun
unanswered (the section then stops at its question): the difference is what showing it costs. Asserts nothing.
"""

from __future__ import annotations

import argparse
import pickle
import time

import numpy as np

from attention_core.blas import single_blas_thread


def sweep() -> None:
    from attention_core.gpt_studies import referent_study as rs
    from ui.heads import referent

    weights, tokenizer = referent.model()
    data = referent.referent_texts()
    nouns = tuple(tokenizer.encode(" " + noun)[0] for noun in data.nouns)
    fits, lesson9 = np.array(data.fits_first), np.array(data.lesson9)
    asked = referent._sentences(data, data.question)
    second = referent._sentences(data, data.second_question)
    first9, second9 = np.flatnonzero(fits & lesson9), np.flatnonzero(~fits & lesson9)
    held_first, held_second = np.flatnonzero(fits & ~lesson9), np.flatnonzero(~fits & ~lesson9)
    total = 0.0

    def part(label, call):
        nonlocal total
        start = time.thread_time()
        value = call()
        seconds = time.thread_time() - start
        total += seconds
        print(f"{label:<70} {seconds:7.2f} s CPU")
        return value

    part(f"asked, {len(asked)} words x {asked.shape[1]} tokens, every logit of the last row",
         lambda: rs.ask(weights, asked, nouns, fits))
    part("the second wording", lambda: rs.ask(weights, second, nouns, fits))
    clean, corrupted = part("the picking pair recorded", lambda: (rs.record(weights, asked[first9[0]]),
                                                                   rs.record(weights, asked[second9[0]])))
    part("270 heads at the last position (30 runs, 9 a batch, from their layer)",
         lambda: rs.head_patching(weights, clean, corrupted, nouns))
    part(f"residual, 31 states x {asked.shape[1]} positions (31 runs, a batch of positions)",
         lambda: rs.resid_patching(weights, clean, corrupted, nouns))
    every = [(l, h) for l in range(30) for h in range(9)]
    part("every head at the word, at the last position", lambda: [
        rs.patched_together(weights, clean, corrupted, nouns, every, p) for p in (rs.first_difference(
            asked[first9[0]], asked[second9[0]]), -1)])
    held = part("the held-out pairs recorded", lambda: (rs.record(weights, asked[held_first]),
                                                       rs.record(weights, asked[held_second])))
    for k in rs.KS:
        chosen = rs.random_head_sets(k, rs.RANDOM_DRAWS, rs.RANDOM_SEED, (30, 9))
        part(f"k = {k}: {rs.RANDOM_DRAWS} random sets on {len(held_first)} pairs",
             lambda: [rs.patched_together(weights, *held, nouns, s) for s in chosen])
    print(f"{'the sweep, all parts':<70} {total:7.2f} s CPU")


def page(repeats: int) -> None:
    from attention_core.gpt.float_cache import default_cache_root
    from tests.apptest_utils import open_page
    from ui.heads import referent

    start = time.process_time()
    with open(next(default_cache_root().glob(f"heads-{referent.NAME}-*")) / "result.pkl", "rb") as fh:
        pickle.load(fh)
    print(f"the stored study read from disk: {(time.process_time() - start) * 1000:.0f} ms CPU")
    at = open_page("heads", "en", timeout=600)
    referent.REFERENT.result()

    def rerun() -> float:
        start = time.process_time()
        at.run()
        return time.process_time() - start

    plain = [rerun() for _ in range(repeats)]
    at.radio(key="heads_referent_predict").set_value(3).run()
    shown = [rerun() for _ in range(repeats)]
    print(f"the page rerun, the section at its question: {np.median(plain):.2f} s CPU (median of {repeats})")
    print(f"the page rerun, the section shown:           {np.median(shown):.2f} s CPU (median of {repeats})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", type=int, default=0, help="also time the page's rerun this many times")
    args = parser.parse_args()
    with single_blas_thread():
        sweep()
        if args.page:
            page(args.page)


if __name__ == "__main__":
    main()
