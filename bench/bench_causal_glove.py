"""Server CPU (time.process_time) of one widget change to a value never used before, on /causal and /glove.

    .venv/bin/python -m bench.bench_causal_glove            # medians per widget, both pages
    .venv/bin/python -m bench.bench_causal_glove --repeats 5

Runs the pages in-process with AppTest (the same script a server runs), changes each widget to a fresh value
(a new seed, a new sentence, ...) so every change is a cache miss, and prints the median CPU per widget, with an
unchanged rerun as the floor (AppTest runs the whole script, frame included, even for a widget inside a fragment,
and adds its own bookkeeping: a server answering a fragment's widget does less).
Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench.timing import SENTENCES
from tests.apptest_utils import run_page



def _cpu(action) -> float:
    start = time.process_time()
    action()
    return 1000 * (time.process_time() - start)


def causal_round(r: int) -> dict[str, float]:
    at = run_page("lessons/causal_mask.py")
    out = {"rerun (all cached)": _cpu(lambda: at.run())}
    out["causal_seed"] = _cpu(lambda: at.number_input(key="causal_seed").set_value(1000 + r).run())
    out["causal_generated"] = _cpu(lambda: at.slider(key="causal_generated").set_value(3 + r % 5).run())
    out["causal_leak_pos"] = _cpu(lambda: at.slider(key="causal_leak_pos").set_value(2 + r % 5).run())
    out["causal_leak_word"] = _cpu(lambda: at.text_input(key="causal_leak_word").input(f"cat{r}x").run())
    at.selectbox(key="causal_preset").set_value("custom").run()
    out["causal_text"] = _cpu(lambda: at.text_input(key="causal_text").input(SENTENCES[r % len(SENTENCES)]).run())
    return out


def glove_round(r: int) -> dict[str, float]:
    at = run_page("lessons/glove_experiment.py")
    out = {"rerun (all cached)": _cpu(lambda: at.run())}
    out["glove_seed"] = _cpu(lambda: at.number_input(key="glove_seed").set_value(5000 + r).run())
    out["glove_dk"] = _cpu(lambda: at.selectbox(key="glove_dk").set_value([50, 64, 16][r % 3]).run())
    out["glove_target"] = _cpu(lambda: at.selectbox(key="glove_target").set_value(["street", "tired", "cross"][r % 3]).run())
    out["glove_query"] = _cpu(lambda: at.selectbox(key="glove_query").set_value(["was", "because", "too"][r % 3]).run())
    out["glove_sentence"] = _cpu(lambda: at.text_input(key="glove_sentence").input(SENTENCES[r % len(SENTENCES)]).run())
    out["glove_train"] = _cpu(lambda: at.button(key="glove_train").click().run())
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_causal_glove", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pages", default="causal,glove")
    args = ap.parse_args(argv)
    run_page("lessons/glove_experiment.py")  # load GloVe and warm imports once
    for page in args.pages.split(","):
        rounds = [(causal_round if page == "causal" else glove_round)(r) for r in range(args.repeats)]
        for widget in rounds[0]:
            values = [x[widget] for x in rounds]
            print(f"/{page:7s} {widget:18s} median {statistics.median(values):7.1f} ms CPU "
                  f"(min {min(values):.1f}, max {max(values):.1f}, n={len(values)})")


if __name__ == "__main__":
    main()
