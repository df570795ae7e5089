"""Gemma 3's tokenizer (attention_core.gemma.tokenizer): building it from the vocabulary, and encoding a
500-character text (English, Japanese, code, a run of spaces) and a 10,000-character mixed one.

    .venv/bin/python -m bench.bench_gemma_tokenizer [--repeats 50]

CPU milliseconds of this thread, medians; asserts nothing; prints the load average next to the numbers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from attention_core.gemma.tokenizer import GemmaTokenizer
from attention_core.gemma.weights import read_vocabulary

SENTENCES = {
    "english": "The small robot painted the fence blue before the rain came, and the neighbours laughed. ",
    "japanese": "今日はとても良い天気ですね。駅前の小さなパン屋は毎朝六時に焼きたてのパンを並べる。",
    "code": "def mean(xs):\n    return sum(xs) / len(xs)\n\nfor i in range(10):\n\tprint(mean([i, i + 1]))\n",
    "spaces": " ",
}


def cpu_ms(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.thread_time()
        function()
        times.append((time.thread_time() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    vocabulary = read_vocabulary()
    start = time.thread_time()
    tokenizer = GemmaTokenizer(vocabulary.tokens, vocabulary.token_type)
    print(f"build: {time.thread_time() - start:.2f} s CPU (load average {os.getloadavg()[0]:.1f})")
    texts = {name: (sentence * 500)[:500] for name, sentence in SENTENCES.items()}
    texts["mixed 10,000"] = ("".join(SENTENCES.values()) + "😀 <b>x</b> ") * 60
    texts["mixed 10,000"] = texts["mixed 10,000"][:10_000]
    for name, text in texts.items():
        ids = tokenizer.encode(text)
        ms = cpu_ms(lambda: tokenizer.encode(text), args.repeats)
        print(f"{name}: {len(text)} characters -> {len(ids)} tokens, {ms:.2f} ms CPU (median of {args.repeats})")


if __name__ == "__main__":
    main()
