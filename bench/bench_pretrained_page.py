"""Lesson 8's cost on the server: a new sentence (a cache miss) rerun through AppTest, and the model's memory.

    python -m bench.bench_pretrained_page

Prints the median and p95 wall and CPU time of the script run after typing each of ~20 distinct sentences (the
predictions answered, so every section draws), and the RSS the model adds to a fresh process. Measured numbers
go to docs/pretrained-page.md, not into tests.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

SENTENCES = [
    "The cat sat on the mat because it was warm",
    "Mary gave John a book because she liked him",
    "The trophy did not fit in the suitcase because it was too small",
    "A dog chased the ball across the green field",
    "The students finished their homework before the bell rang",
    "My brother plays the piano every evening after dinner",
    "The river near our village flows slowly to the sea",
    "She opened the window and looked at the rain outside",
    "The old man with the hat walked home alone",
    "They bought fresh bread and cheese at the market",
    "The computer crashed because it was very old",
    "The bird left the nest because it was hungry",
    "Our neighbours painted the fence white last summer",
    "The teacher explained the lesson twice to the class",
    "He wrote a long letter to his friend in Paris",
    "The children sang songs in the school hall",
    "The phone fell off the table and it broke",
    "A young girl found a small key under the stone",
    "The city council refused the demonstrators a permit because they feared violence",
    "The keys to the cabinet are on the kitchen table",
    "Birds in the tall trees sing every morning in spring",
]


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def page_miss() -> None:
    from tests.test_pretrained_page import answer, open_lesson

    at = answer(open_lesson())
    at.selectbox(key="pretrained_preset").set_value("custom").run()
    walls, cpus = [], []
    for sentence in SENTENCES:
        box = at.text_input(key="pretrained_text").input(sentence)
        wall, cpu = time.perf_counter(), time.process_time()
        box.run()
        walls.append(1000 * (time.perf_counter() - wall))
        cpus.append(1000 * (time.process_time() - cpu))
        assert not at.exception, [e.message for e in at.exception]
    for name, values in (("wall", walls), ("cpu", cpus)):
        print(f"new sentence, whole script run ({len(values)} sentences): {name} median {statistics.median(values):.0f} ms,"
              f" p95 {percentile(values, 0.95):.0f} ms, max {max(values):.0f} ms")


MEMORY = """
import time, os
def rss(field="RssAnon"):  # private memory; RssFile is the memory-mapped weights, shared by every process
    with open(f"/proc/{os.getpid()}/status") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith(field + ":")) / 1024
import numpy, attention_core.pretrained as p
before = rss(); t = time.perf_counter(); m = p.load_model(); load = time.perf_counter() - t
after_load = rss(); p.attention_maps("The animal did not cross the street because it was too tired", m)
after_one = rss()
for k in range(20): p.attention_maps(" ".join(["word"] * 38) + f" {k}", m)
print(f"load {1000 * load:.0f} ms; RSS +{after_load - before:.1f} MB after loading, +{after_one - before:.1f} MB after one "
      f"sentence, +{rss() - before:.1f} MB after 20 sentences of 40 tokens (private, RssAnon); file-backed (RssFile, "
      f"the mapped weights, shared between processes): {rss('RssFile'):.0f} MB")
"""


def memory() -> None:
    subprocess.run([sys.executable, "-c", MEMORY], check=True)


if __name__ == "__main__":
    memory()
    page_miss()
