"""The induction head on the held-out paragraphs (data/heads_ordinary_held_out.toml), computed here another way than the
pages do: the file read with tomllib, the maps of model.py's own pass (smollm2.forward, not interventions.py) of the
model and of its untrained copy, the name's later tokens found by decoding each token's bytes, the weights by a loop
over each row, the interval over paragraphs by scipy's t and the count's by scipy's Wilson interval. Shared by the
seam tests of lessons 9 and 10 (computed once per test process)."""

from __future__ import annotations

import functools
import math
import tomllib
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "data" / "heads_ordinary_held_out.toml"


def later_inside(tokenizer, ids, text: str, name: str) -> list[int]:
    """-> the positions of the name's later tokens that the name goes on after (by each token's bytes)."""
    lengths = [len(tokenizer.token_bytes(i)) for i in ids]
    ends = np.cumsum(lengths)
    data, needle = text.encode(), name.encode()
    spans, s = [], 0
    while (found := data.find(needle, s)) >= 0:
        spans.append((found, found + len(needle)))
        s = found + len(needle)
    later = {k for a, b in spans[1:] for k in range(len(ids)) if ends[k] - lengths[k] < b and ends[k] > a}
    return sorted(i for i in later if i + 1 in later)


def row_reading(ids, attention, i: int) -> tuple[float, bool, float]:
    """-> (the row's weight on what followed each earlier occurrence of its token, whether its largest weight is
    there, what an even spread puts there)."""
    targets = {j + 1 for j in range(i) if ids[j] == ids[i]}
    row = [float(attention[i][k]) for k in range(i + 1)]
    return sum(row[t] for t in targets), max(row[t] for t in targets) == max(row), len(targets) / (i + 1)


@functools.cache
def held_out_reference(head: tuple[int, int]) -> dict:
    """-> what the held-out sentence should say of the head, as numbers."""
    from scipy.stats import binomtest, t as student_t

    from attention_core import smollm2
    from attention_core.smollm2.weights import untrained_weights

    weights, tokenizer = smollm2.default_model()
    raw = untrained_weights(weights.config, 0)
    layer, h = head
    per, tops, tokens, uniform, untrained = [], 0, 0, [], []
    for paragraph in tomllib.loads(DATA.read_text(encoding="utf-8"))["paragraph"]:
        ids = tokenizer.encode(paragraph["text"])
        rows = later_inside(tokenizer, ids, paragraph["text"], paragraph["name"])
        maps = smollm2.forward(weights, ids).attention[layer, h]
        raw_maps = smollm2.forward(raw, ids).attention[layer, h]
        read = [row_reading(ids, maps, i) for i in rows]
        per.append(np.mean([w for w, _, _ in read]))
        tops += sum(top for _, top, _ in read)
        tokens += len(rows)
        uniform.append(np.mean([u for _, _, u in read]))
        untrained.append(np.mean([row_reading(ids, raw_maps, i)[0] for i in rows]))
    per = np.array(per)
    half = student_t.ppf(0.975, per.size - 1) * per.std(ddof=1) / math.sqrt(per.size)
    wilson = binomtest(tops, tokens).proportion_ci(method="wilson")
    return {"paragraphs": per.size, "tokens": tokens, "weight": per.mean(), "low": per.mean() - half,
            "high": per.mean() + half, "k": tops, "k_low": 100 * wilson.low, "k_high": 100 * wilson.high,
            "uniform": float(np.mean(uniform)), "untrained": float(np.mean(untrained))}


def assert_shown(shown: dict, expected: dict, number, count_interval: bool) -> None:
    """The sentence's fields (find_sentence) against held_out_reference, as rounded on the page (count_interval: the
    sentence gives the count's interval too)."""
    import pytest

    assert (int(shown["paragraphs"]), int(shown["tokens"]), int(shown["k"])) == (
        expected["paragraphs"], expected["tokens"], expected["k"])
    for key in ("weight", "low", "high"):
        assert number(shown[key]) == pytest.approx(expected[key], abs=0.006), key
    for key in ("uniform", "untrained"):
        assert number(shown[key]) == pytest.approx(expected[key], abs=6e-4), key
    for key in ("k_low", "k_high")[:2 * count_interval]:
        assert number(shown[key]) == pytest.approx(expected[key], abs=0.6), key
