"""The second 4-bit rounding of lesson 9's caveat (attention_core.gpt_studies.rounding): Q4_1 and Q8_0 against a naive
per-block loop written from llama.cpp's reference C (quantize_row_q4_1_ref / q8_0_ref, float32 arithmetic, fp16
step and minimum), the identity that re-rounding an exactly representable tensor with its own blocks changes nothing
(on random tensors and on the model's own weights), and, slow, the study's stored numbers (what the page shows)
against a recomputation here: the float64 reference forward (tests/reference_gpt.py) for the probabilities and the
top next tokens, the induction scores read from the attention maps with loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.gpt_studies import rounding
from tests.hypothesis_budget import examples

BLOCK = 32


def naive_q4_1(x: np.ndarray, offset: int) -> np.ndarray:
    """x: (rows, n) -> (rows, n): each block (32 numbers from offset + 32 b, wrapping) rounded element by element."""
    out = np.empty_like(x, dtype=np.float32)
    rows, n = x.shape
    f32 = np.float32
    for r in range(rows):
        for b in range(n // BLOCK):
            where = [(offset + BLOCK * b + j) % n for j in range(BLOCK)]
            values = [f32(x[r, i]) for i in where]
            low, high = min(values), max(values)
            d = f32(f32(high - low) / f32(15))
            inverse = f32(f32(1) / d) if d != 0 else f32(0)
            d16, m16 = f32(np.float16(d)), f32(np.float16(low))
            for i, v in zip(where, values):
                code = min(15, int(f32(f32(f32(v - low) * inverse) + f32(0.5))))  # (int8_t)(x0 + 0.5f)
                out[r, i] = f32(f32(d16 * f32(code)) + m16)
    return out


def naive_q8_0(x: np.ndarray, offset: int) -> np.ndarray:
    out = np.empty_like(x, dtype=np.float32)
    rows, n = x.shape
    f32 = np.float32
    for r in range(rows):
        for b in range(n // BLOCK):
            where = [(offset + BLOCK * b + j) % n for j in range(BLOCK)]
            values = [f32(x[r, i]) for i in where]
            d = f32(max(abs(v) for v in values) / f32(127))
            inverse = f32(f32(1) / d) if d != 0 else f32(0)
            d16 = f32(np.float16(d))
            for i, v in zip(where, values):
                scaled = float(f32(v * inverse))
                code = math.copysign(math.floor(abs(scaled) + 0.5), scaled)  # roundf: halves away from 0
                out[r, i] = f32(d16 * f32(code))
    return out


def tensors(seed: int, rows: int, blocks: int, scale: float, ties: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, BLOCK * blocks)).astype(np.float32) * np.float32(scale)
    if ties:  # repeated values, a constant run and exact halves: the edge cases of min/max and of rounding
        x[:, :BLOCK] = np.round(x[:, :BLOCK] * 4) / 4
        x[0, BLOCK // 2: BLOCK + BLOCK // 2] = np.float32(scale)
    return x


shapes = dict(seed=st.integers(0, 2**31), rows=st.integers(1, 3), blocks=st.integers(1, 4),
              scale=st.sampled_from([1e-3, 0.05, 1.0, 300.0]), ties=st.booleans(), offset=st.integers(0, 40))


@settings(max_examples=examples(60))
@given(**shapes)
def test_q4_1_is_the_reference_loop(seed, rows, blocks, scale, ties, offset):
    x = tensors(seed, rows, blocks, scale, ties)
    np.testing.assert_array_equal(rounding.q4_1(x, offset), naive_q4_1(x, offset % BLOCK))


@settings(max_examples=examples(60))
@given(**shapes)
def test_q8_0_is_the_reference_loop(seed, rows, blocks, scale, ties, offset):
    x = tensors(seed, rows, blocks, scale, ties)
    np.testing.assert_array_equal(rounding.q8_0(x, offset), naive_q8_0(x, offset % BLOCK))


@settings(max_examples=examples(60))
@given(**shapes)
def test_rerounding_with_the_same_blocks_changes_nothing(seed, rows, blocks, scale, ties, offset):
    x = tensors(seed, rows, blocks, scale, ties)
    for scheme in (rounding.q4_1, rounding.q8_0):
        once = scheme(x, offset)
        np.testing.assert_array_equal(scheme(once, offset), once)


def test_a_shifted_rounding_moves_numbers_by_about_one_step():
    x = tensors(0, 64, 8, 0.05, False)
    once = rounding.q4_1(x)
    again = rounding.q4_1(once, rounding.SHIFT)
    assert not np.array_equal(again, once)
    step = (once.reshape(64, 8, BLOCK).max(-1) - once.reshape(64, 8, BLOCK).min(-1)) / 15  # the first blocks' steps
    assert np.abs(again - once).max() <= 1.01 * step.max()  # at most half of the larger of two steps, roughly
    measured = np.sqrt(np.mean((again - once) ** 2) / np.mean(once ** 2))
    assert 0.5 < measured / rounding.expected_rms("ffn_up", once.T, rounding.SHIFT) < 1.2


def test_odd_rows_are_refused():
    with pytest.raises(ValueError):
        rounding.q4_1(np.zeros((2, 33), dtype=np.float32))


# ---------------------------------------------------------------- on the model

@pytest.fixture(scope="module")
def model():
    from attention_core import smollm2
    from attention_core.smollm2.weights import GPTUnavailable

    try:
        return smollm2.default_model()
    except GPTUnavailable as missing:
        pytest.skip(f"the model package is absent: {missing}")


def test_the_models_own_blocks_round_back_to_it(model):
    weights, _ = model
    for name in rounding.SCHEMES:
        tensor = getattr(weights, name)
        tensor = tensor[:2048] if name == "embedding" else tensor[17]
        np.testing.assert_array_equal(rounding.rounded_field(name, tensor, 0), tensor)
        assert not np.array_equal(rounding.rounded_field(name, tensor, rounding.SHIFT), tensor)


# ---------------------------------------------------------------- the page's numbers, recomputed (slow)

class Float64Tensors:
    """GPTWeights -> the GGUF-named float64 tensors tests/reference_gpt.forward reads: (out, in), attn_q/attn_k rows
    in Hugging Face's order."""

    def __init__(self, weights):
        self.weights = weights
        self.embedding = np.asarray(weights.embedding, dtype=np.float64)
        self.kept = {}  # converted once: a text after another reads the same tensors (1.1 GB for the model)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.kept:
            self.kept[name] = self.converted(name)
        return self.kept[name]

    def converted(self, name: str) -> np.ndarray:
        from tests import reference_gpt

        if name == "token_embd.weight":
            return self.embedding
        if name == "output_norm.weight":
            return np.asarray(self.weights.output_norm, dtype=np.float64)
        _, layer, field, _ = name.split(".")
        values = np.asarray(getattr(self.weights, field)[int(layer)], dtype=np.float64)
        if values.ndim == 2:
            values = values.T
        return reference_gpt.unpermute(values, {"attn_q": 9, "attn_k": 3}[field]) if field in ("attn_q", "attn_k") \
            else values


def stated():
    """-> (prompt, target, sequences, period) as the page states them: data/gpt.toml's first prompt, lesson 9's
    induction sets."""
    import tomllib
    from pathlib import Path

    from ui.gpt.study import PERIOD, SEQUENCES

    data = tomllib.loads((Path(__file__).resolve().parent.parent / "data" / "gpt.toml").read_text(encoding="utf-8"))
    return data["presets"][0]["text"], " Paris", SEQUENCES, PERIOD


def loop_induction(weights, sequences, period: int) -> np.ndarray:
    """-> (S, L, H): each head's mean weight from the second copy's rows onto the token after the earlier occurrence."""
    from attention_core import smollm2

    scores = []
    for ids in sequences:
        a = smollm2.forward(weights, [int(i) for i in ids], all_logits=False).attention
        scores.append(np.mean([a[:, :, period + j, j + 1] for j in range(period)], axis=0))
    return np.array(scores)


def wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    centre, spread = k + z * z / 2, z * math.sqrt(k * (n - k) / n + z * z / 4)
    return (centre - spread) / (n + z * z), (centre + spread) / (n + z * z)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # 16 float64 reference passes and 64 passes of the model: minutes on a busy machine
def test_the_pages_numbers_are_recomputed_here(model):
    from attention_core.gpt_studies import heads
    from tests import reference_gpt

    weights, tokenizer = model
    prompt, target, count, period = stated()
    result = rounding.measured_study(prompt, target, count, period)  # what the page reads from disk
    second = rounding.rounded_weights(weights)  # the rounding itself: the loop above holds it

    # the error sizes: one per tensor, the median over the 7 x 30 matrices and the embedding
    measured, first = [], []
    for name in rounding.SCHEMES:
        for a, b in ([(weights.embedding, second.embedding)] if name == "embedding" else
                     [(getattr(weights, name)[i].T, getattr(second, name)[i].T) for i in range(30)]):
            a64 = np.asarray(a, dtype=np.float64)
            measured.append(math.sqrt(np.mean((a64 - b) ** 2) / np.mean(a64 ** 2)))
            blocks = a64.reshape(a64.shape[0], -1, BLOCK)
            step = (np.abs(blocks).max(-1) / 127 if name == "embedding" else (blocks.max(-1) - blocks.min(-1)) / 15)
            first.append(math.sqrt(np.mean(step ** 2) / 12 / np.mean(a64 ** 2)))
    assert result["tensors"] == len(measured) == 211
    assert result["error_second"] == pytest.approx(np.median(measured), rel=1e-6)
    assert result["error_first"] == pytest.approx(np.median(first), rel=1e-6)
    assert 0.8 < result["error_second"] / result["error_first"] < 1.25  # "an error of the same size"

    # the induction heads: picked on one set, scored on the other, read from the maps with loops
    sets = heads.induction_sets(count=count, length=period)
    tops = []
    for k, w in enumerate((weights, second)):
        picking = loop_induction(w, sets.picking, period).mean(axis=0)
        scoring = loop_induction(w, sets.scoring, period).mean(axis=0)
        head = np.unravel_index(int(np.argmax(picking)), picking.shape)
        assert result["heads"][k] == [int(head[0]), int(head[1])]
        assert result["scores"][k] == pytest.approx(scoring[head], abs=1e-4)
        flat = sorted(range(scoring.size), key=lambda j: -scoring.reshape(-1)[j])[:8]
        tops.append({divmod(j, scoring.shape[1]) for j in flat})
        assert {tuple(h) for h in result["top"][k]} == tops[k]
    assert result["shared"] == len(tops[0] & tops[1])

    # p(" Paris") after the prompt and the top next token of the texts: the float64 reference forward
    ids, paris = tokenizer.encode(prompt), tokenizer.encode(target)
    assert len(paris) == 1
    texts = [tokenizer.encode(text) for text in rounding.TEXTS]
    probabilities, tops_per_model = [], []
    for w in (weights, second, *(rounding.rounded_weights(weights, s) for s in result["other_shifts"])):
        tensors = Float64Tensors(w)  # one model's tensors at a time
        last = reference_gpt.forward(tensors, ids)[0][-1]
        e = np.exp(last - last.max())
        probabilities.append(e[paris[0]] / e.sum())
        if len(tops_per_model) < 2:
            tops_per_model.append(np.concatenate([reference_gpt.forward(tensors, t)[0].argmax(axis=1) for t in texts]))
        del tensors
    np.testing.assert_allclose(result["p"] + result["other_p"], probabilities, atol=1e-3)
    differ = int((tops_per_model[0] != tops_per_model[1]).sum())
    assert result["positions"] == tops_per_model[0].size == sum(len(t) for t in texts)
    assert abs(result["differ"] - differ) <= 2  # a near tie may fall either way between float32 and float64
    np.testing.assert_allclose(result["interval"], wilson(result["differ"], result["positions"]), atol=1e-12)
    # the page's "but": one probability moves far under roundings of the same size while the heads stay
    assert max(probabilities) - min(probabilities) > 0.2
