"""attention_core.gpt_studies.ordinary_text against naive loops written here: repeats, induction targets, the head's weight
there and whether it is the row's top, the probability of a token at its first occurrence and again, a name's
tokens found by its bytes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.gpt_studies import ordinary_text as ot
from tests.hypothesis_budget import examples


def causal_map(rng, n: int) -> np.ndarray:
    """A random causal attention map (rows sum to 1 over positions <= i)."""
    a = np.tril(rng.random((n, n)) ** 4)
    return a / a.sum(axis=1, keepdims=True)


def naive(ids, attention, logits) -> list[dict]:
    """One dict per repeat, by loops over positions (float64 softmax written out)."""
    out = []
    for i in range(len(ids)):
        earlier = [j for j in range(i) if ids[j] == ids[i]]
        if not earlier:
            continue
        targets = sorted({j + 1 for j in earlier})
        first = min(j for j in range(len(ids)) if ids[j] == ids[i])

        def prob(pos):
            if pos == 0:
                return math.nan
            row = [float(v) for v in logits[pos - 1]]
            top = max(row)
            return math.exp(row[ids[pos]] - top) / sum(math.exp(v - top) for v in row)

        row = [float(attention[i][k]) for k in range(i + 1)]
        out.append({"position": i, "first": first, "weight": sum(row[t] for t in targets),
                    "top": max(row[t] for t in targets) == max(row), "uniform": len(targets) / (i + 1),
                    "p_first": prob(first), "p_again": prob(i), "on_first": row[0], "targets": targets})
    return out


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=24), st.integers(0, 2 ** 32 - 1))
def test_repeats_match_a_naive_loop(ids, seed):
    rng = np.random.default_rng(seed)
    n = len(ids)
    attention, logits = causal_map(rng, n), rng.normal(0, 3, (n, 7))
    got = ot.repeats_on(ids, attention, logits)
    expected = naive(ids, attention, logits)
    assert got.positions.tolist() == [e["position"] for e in expected]
    assert got.first.tolist() == [e["first"] for e in expected]
    for name in ("weight", "uniform", "p_first", "p_again", "on_first"):
        np.testing.assert_allclose(getattr(got, name), [e[name] for e in expected], atol=1e-12, err_msg=name)
    assert got.top.tolist() == [e["top"] for e in expected]
    queries, targets, weights = ot.arrows(ids, attention, got.positions)
    pairs = [(e["position"], t) for e in expected for t in e["targets"]]
    assert list(zip(queries.tolist(), targets.tolist())) == pairs
    np.testing.assert_allclose(weights, [attention[q, t] for q, t in pairs], atol=0)


def test_a_sequence_written_twice_is_the_induction_score():
    """Random distinct tokens written twice: every second-copy token is a repeat whose one target is the position
    after its first occurrence, so the mean weight is heads.induction_score's."""
    from attention_core.gpt_studies.heads import induction_score

    rng = np.random.default_rng(0)
    ids = list(rng.permutation(50)[:10]) * 2
    attention = causal_map(rng, 20)
    got = ot.repeats_on(ids, attention, rng.normal(size=(20, 50)))
    assert got.positions.tolist() == list(range(10, 20))
    assert got.weight.mean() == pytest.approx(float(induction_score(attention, 10)), abs=1e-12)


def test_the_head_at_its_target_and_nowhere_else():
    ids = [3, 4, 5, 3, 4]
    attention = np.tril(np.ones((5, 5))) / np.arange(1, 6)[:, None]
    attention[3] = [0, 1, 0, 0, 0]  # the second 3 looks at 4 (what followed 3 before)
    attention[4] = [0.2, 0, 0.7, 0.1, 0]  # the second 4 looks at 5
    r = ot.repeats_on(ids, attention, np.zeros((5, 6)))
    assert r.positions.tolist() == [3, 4] and r.weight.tolist() == [1.0, 0.7] and r.top.tolist() == [True, True]
    assert r.p_again.tolist() == pytest.approx([1 / 6, 1 / 6]) and r.uniform.tolist() == [0.25, 0.2]


def test_no_repeats_and_bad_shapes():
    r = ot.repeats_on([7], np.ones((1, 1)), np.zeros((1, 3)))
    assert r.positions.size == 0 and r.weight.size == 0
    r = ot.repeats_on([], np.zeros((0, 0)), np.zeros((0, 3)))
    assert r.positions.size == 0
    r = ot.repeats_on([2, 2], np.tril(np.ones((2, 2))) / [[1], [2]], None)  # no logits: weights only
    assert r.weight.tolist() == [0.5] and np.isnan(r.p_again).all() and np.isnan(r.p_first).all()
    with pytest.raises(ValueError):
        ot.repeats_on([1, 2], np.ones((3, 3)), np.zeros((2, 3)))


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(["ab", "Zo", "rb", " ", "é", "日", "x"]), min_size=0, max_size=12),
       st.sampled_from(["Zorb", "ab", "日x", "é"]))
def test_name_tokens_match_a_naive_byte_walk(pieces, name):
    """Tokens that hold any byte of a later occurrence of the name, found by walking the bytes one by one."""
    text = "".join(pieces)
    lengths = [len(p.encode()) for p in pieces]
    data, needle = text.encode(), name.encode()
    spans, i = [], 0
    while i + len(needle) <= len(data):
        if data[i:i + len(needle)] == needle:
            spans.append((i, i + len(needle)))
            i += len(needle)
        else:
            i += 1
    owner = [k for k, length in enumerate(lengths) for _ in range(length)]  # the token each byte belongs to
    expected = sorted({owner[b] for s in spans[1:] for b in range(*s)})
    got, count = ot.later_name_tokens(lengths, text, name)
    assert count == len(spans) and got.tolist() == expected


def test_a_name_read_three_ways():
    """'A B C x A B C y A B C': the name 'ABC' (three one-byte tokens) three times."""
    text = "ABCxABCyABC"
    ids = [ord(ch) for ch in text]
    n = len(ids)
    rng = np.random.default_rng(1)
    reading = ot.name_reading(ids, [1] * n, text, "ABC", causal_map(rng, n), rng.normal(size=(n, 130)))
    assert reading.occurrences == 3
    assert reading.inside.positions.tolist() == [4, 5, 8, 9]
    assert reading.continued.positions.tolist() == [5, 6, 9, 10]
    assert reading.last.positions.tolist() == [6, 10]
    assert reading.others.positions.size == 0  # x and y occur once
    assert ot.name_reading(ids, [1] * n, text, "Q", np.eye(n), np.zeros((n, 130))).inside.positions.size == 0


def test_the_built_in_paragraphs_hold_their_name_twice():
    paragraphs = ot.paragraphs()
    assert len(paragraphs) >= 2 and all(len(ot.occurrences(p.text, p.name)) >= 2 for p in paragraphs)
    assert all(set(p.label) == {"en", "ja"} for p in paragraphs)


def test_a_paragraph_without_its_name_twice_is_refused(tmp_path):
    from attention_core.presets import PresetError

    (tmp_path / "heads_ordinary.toml").write_text(
        '[[paragraph]]\nlabel = { en = "a", ja = "a" }\nname = "Quil"\ntext = "Quil went home."\n', encoding="utf-8")
    with pytest.raises(PresetError, match="twice"):
        ot.paragraphs(tmp_path)


def test_a_set_score_matches_naive_loops_over_the_maps():
    """Per paragraph the mean weight on the targets of the name's later tokens that the name goes on after, by the
    naive loop above; the interval over paragraphs by scipy's t, the count's by scipy's Wilson interval."""
    from scipy.stats import binomtest, t as student_t

    rng = np.random.default_rng(7)
    texts = ["ABCxABCy", "qABCzzABCwABC", "ABCABC", "xyABCABCvvABC"]
    trained, raw, expected = [], [], []
    for text in texts:
        ids, n = [ord(ch) for ch in text], len(text)
        maps, untrained_map = causal_map(rng, n), causal_map(rng, n)
        trained.append(ot.name_reading(ids, [1] * n, text, "ABC", maps, None))
        raw.append(ot.name_reading(ids, [1] * n, text, "ABC", untrained_map, None))
        starts = [s for s in range(n - 2) if text[s:s + 3] == "ABC"]
        later = [s + k for s in starts[1:] for k in range(2)]  # "A" and "B" of each later occurrence: the name goes on
        rows = {r["position"]: r for r in naive(ids, maps, np.zeros((n, 130)))}
        rows_raw = {r["position"]: r for r in naive(ids, untrained_map, np.zeros((n, 130)))}
        expected.append({"weight": np.mean([rows[i]["weight"] for i in later]), "tokens": len(later),
                         "top": sum(rows[i]["top"] for i in later),
                         "uniform": np.mean([rows[i]["uniform"] for i in later]),
                         "untrained": np.mean([rows_raw[i]["weight"] for i in later])})
    score = ot.set_score(trained, raw)
    assert score.paragraphs == len(texts) and score.tokens.tolist() == [e["tokens"] for e in expected]
    for name in ("weight", "uniform", "untrained"):
        np.testing.assert_allclose(getattr(score, name), [e[name] for e in expected], atol=1e-12, err_msg=name)
    weights = np.array([e["weight"] for e in expected])
    half = student_t.ppf(0.975, len(weights) - 1) * weights.std(ddof=1) / math.sqrt(len(weights))
    assert score.mean == pytest.approx((weights.mean(), weights.mean() - half, weights.mean() + half), abs=1e-12)
    k, n = sum(e["top"] for e in expected), sum(e["tokens"] for e in expected)
    assert (score.top_count.k, score.top_count.n) == (k, n)
    wilson = binomtest(k, n).proportion_ci(method="wilson")
    assert score.top_count.interval == pytest.approx((wilson.low, wilson.high), abs=1e-9)


def test_a_set_score_refuses_a_name_with_nothing_to_copy_and_unmatched_readings():
    one = ot.name_reading([1, 2, 1], [1, 1, 1], "QxQ", "Q", np.tril(np.ones((3, 3))) / [[1], [2], [3]], None)
    with pytest.raises(ValueError, match="no later token"):
        ot.set_score([one], [one])
    with pytest.raises(ValueError, match="one reading per paragraph"):
        ot.set_score([one], [])


def test_the_held_out_paragraphs_are_many_and_none_is_offered_on_the_page(tmp_path):
    from attention_core.presets import PresetError

    held_out, shown = ot.held_out_paragraphs(), ot.paragraphs()
    assert 12 <= len(held_out) <= 20 and not {p.text for p in held_out} & {p.text for p in shown}
    assert all(len(ot.occurrences(p.text, p.name)) >= 2 for p in held_out)
    text = '[[paragraph]]\nlabel = { en = "a", ja = "a" }\nname = "Quil Ab"\ntext = "Quil Ab met Quil Ab."\n'
    (tmp_path / "heads_ordinary.toml").write_text(text, encoding="utf-8")
    (tmp_path / "heads_ordinary_held_out.toml").write_text(text, encoding="utf-8")
    with pytest.raises(PresetError, match="also a built-in one"):
        ot.held_out_paragraphs(tmp_path)
