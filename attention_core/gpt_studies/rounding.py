"""Lesson 9's 4-bit caveat, measured: the same model rounded a second time, with rounding error of the same size that
falls elsewhere, and which of the lesson's findings move.

The GGUF stores every linear matrix as Q4_1 (per block of 32 numbers along the input dimension: a float16 step d and
minimum m, 4-bit codes q, x = d * q + m) and the embedding as Q8_0 (per block: a float16 step d, 8-bit codes,
x = d * q).
The second rounding applies each tensor's own scheme again (llama.cpp's reference quantize_row_q4_1 / q8_0), to the
float32 copy the page runs, with every block shifted by half a block (16 numbers, cyclically along each row: a row's
last 16 numbers and its first 16 form one block). Why this variant: re-rounding with the file's own blocks changes
nothing (the dequantized numbers are exactly representable there: the identity the tests check), so only other block
edges give new error; half a block is the shift farthest from the original edges, and it keeps every block at 32
numbers, so each number is rounded to one of 16 (256) levels spanning 32 numbers, as in the file: the same size of
error (measured below, relative to each tensor's RMS), in different places. The norm gains (float32 in the file) are
kept. The second copy is rounded from the first (the original numbers are not in the file), so the two differ by one
rounding's error, about sqrt(2) less than two independent roundings of the original would: if anything, the findings
move less here than between two 4-bit copies of the original. The second copy is ~540 MB of private float32: build it for the study only (``python -m
attention_core.gpt_studies.rounding`` writes the study's small result to disk; a serving process only reads it).

    rounded = q4_1(x, offset=16)                    # x: (..., n) float32, blocks of 32 along the last axis
    second = rounded_weights(weights, offset=16)    # a GPTWeights whose linear matrices and embedding are re-rounded
    result = rounding_study(weights, tokenizer, prompt, target, texts, sequences, period)
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from attention_core.gpt_studies import heads
from attention_core.smollm2.weights import LINEAR, GPTWeights, gguf_path
from attention_core.measure import head_stats

BLOCK = 32  # numbers per block, Q4_1 and Q8_0
SHIFT = 16  # the second rounding's blocks start half a block later
OTHER_SHIFTS = (8, 24)  # two more roundings, for the spread of one probability (p(target) only)
TOP = 8  # the top induction heads compared between the two roundings
NAME = "rounding-study"  # its file in attention_core.gpt.disk_cache's results folder

# Ordinary English held out from every other measurement of the lesson: the positions whose top next token is compared.
TEXTS = (
    "The bakery on the corner opens at six. By seven there is a queue of people on their way to work, and by nine "
    "most of the bread is gone. The owner says she has tried baking more, but the queue simply grows.",
    "Our neighbours planted three apple trees last spring. This year the smallest one gave more fruit than the other "
    "two together, and nobody can explain why. They have started giving apples to everyone on the street.",
    "The train was twenty minutes late because of a fault with the signals. Most passengers waited calmly on the "
    "platform, reading or looking at their phones, while a few walked to the bus station instead.",
    "When the power went out during the storm, the whole family sat in the kitchen with candles and played cards. "
    "The children later said it was the best evening of the holidays.",
    "Learning to swim as an adult is harder than it looks. You have to trust the water to hold you, and the first "
    "lessons are mostly about breathing slowly and not fighting against it.",
    "The museum has moved its collection of old maps to a new room on the second floor. Visitors can now see how the "
    "coastline of the region was drawn three hundred years ago, long before anyone could measure it from the air.",
)


# ---------------------------------------------------------------- the roundings

def _blocks(x: np.ndarray, offset: int) -> np.ndarray:
    """x: (..., n) -> (..., n // 32, 32) float32: the row rolled so that element `offset` starts the first block."""
    x = np.asarray(x, dtype=np.float32)
    if x.ndim < 1 or x.shape[-1] % BLOCK:
        raise ValueError(f"the last axis must be a multiple of {BLOCK}, got shape {x.shape}")
    return np.roll(x, -(offset % BLOCK), axis=-1).reshape(*x.shape[:-1], x.shape[-1] // BLOCK, BLOCK)


def _unblocks(blocks: np.ndarray, offset: int) -> np.ndarray:
    """_blocks' inverse: (..., n // 32, 32) -> (..., n)."""
    return np.roll(blocks.reshape(*blocks.shape[:-2], -1), offset % BLOCK, axis=-1)


def q4_1(x, offset: int = 0) -> np.ndarray:
    """x: (..., n) float32, n a multiple of 32 -> (..., n) float32: each block of 32 along the last axis (starting at
    `offset`, cyclically) rounded as llama.cpp's quantize_row_q4_1_ref and dequantized as gguf reads it: step
    d = (max - min) / 15, codes q = min(15, floor((x - min) / d + 0.5)), then fp16(d) * q + fp16(min)."""
    blocks = _blocks(x, offset)
    low = blocks.min(axis=-1, keepdims=True)
    step = (blocks.max(axis=-1, keepdims=True) - low) / np.float32(15)
    inverse = np.divide(np.float32(1), step, out=np.zeros_like(step), where=step != 0)
    codes = np.minimum(np.float32(15), np.floor((blocks - low) * inverse + np.float32(0.5)))
    out = step.astype(np.float16).astype(np.float32) * codes + low.astype(np.float16).astype(np.float32)
    return _unblocks(out, offset)


def q8_0(x, offset: int = 0) -> np.ndarray:
    """x: (..., n) float32, n a multiple of 32 -> (..., n) float32: each block of 32 along the last axis (starting at
    `offset`, cyclically) rounded as llama.cpp's quantize_row_q8_0_ref and dequantized: step d = max|x| / 127, codes
    q = round(x / d) (halves away from 0), then fp16(d) * q."""
    blocks = _blocks(x, offset)
    step = np.abs(blocks).max(axis=-1, keepdims=True) / np.float32(127)
    inverse = np.divide(np.float32(1), step, out=np.zeros_like(step), where=step != 0)
    scaled = blocks * inverse
    whole = np.trunc(scaled)  # C's roundf: a half goes away from 0 (np.rint would take it to the even code)
    codes = np.where(np.abs(scaled - whole) == np.float32(0.5), whole + np.sign(scaled), np.rint(scaled))
    return _unblocks(step.astype(np.float16).astype(np.float32) * codes, offset)


SCHEMES = {**{name: q4_1 for name in LINEAR}, "embedding": q8_0}  # each field as the GGUF stores it


def rounded_field(name: str, values, offset: int = SHIFT) -> np.ndarray:
    """A weight field as GPTWeights holds it -> (same shape) float32 rounded again with its GGUF scheme, blocks along
    the input dimension (the GGUF's rows): axis -2 of a linear (L, in, out) matrix, the last of the embedding (V, d)."""
    values = np.asarray(values, dtype=np.float32)
    if name in LINEAR:
        return np.ascontiguousarray(SCHEMES[name](values.swapaxes(-1, -2), offset).swapaxes(-1, -2))
    return SCHEMES[name](values, offset)


def rounded_weights(weights: GPTWeights, offset: int = SHIFT) -> GPTWeights:
    """-> a second float32 model (~540 MB private): every linear matrix and the embedding rounded again with blocks
    shifted by `offset`, layer by layer (no second temporary copy); the norm gains shared with `weights`."""
    changed = {}
    for name in SCHEMES:
        source = getattr(weights, name)
        out = np.empty(source.shape, dtype=np.float32)
        if name in LINEAR:
            for layer in range(source.shape[0]):
                out[layer] = rounded_field(name, source[layer], offset)
        else:
            out[...] = rounded_field(name, source, offset)
        out.flags.writeable = False
        changed[name] = out
    return dataclasses.replace(weights, **changed)


def relative_rms(a, b) -> float:
    """a, b: the same shape -> RMS(a - b) / RMS(a), in float64."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.sqrt(np.mean((a - b) ** 2) / np.mean(a ** 2)))


def expected_rms(name: str, values, offset: int = 0) -> float:
    """A field's tensor (one layer) -> the RMS error that rounding its blocks (at `offset`) would make if each number's
    error were uniform over one step (step / sqrt(12)), relative to the tensor's RMS. With offset 0 it estimates the
    file's own rounding, whose original numbers are lost: its steps are read back from the dequantized blocks."""
    values = np.asarray(values, dtype=np.float32)
    rows = values.swapaxes(-1, -2) if name in LINEAR else values
    blocks = _blocks(rows, offset).astype(np.float64)
    if SCHEMES[name] is q4_1:
        step = (blocks.max(axis=-1) - blocks.min(axis=-1)) / 15
    else:
        step = np.abs(blocks).max(axis=-1) / 127
    return float(np.sqrt(np.mean(step ** 2) / 12 / np.mean(blocks ** 2)))


def error_sizes(first: GPTWeights, second: GPTWeights, offset: int = SHIFT) -> dict:
    """-> per tensor (each layer of each re-rounded field), relative RMS errors: "first" the file's rounding
    (estimated from its steps), "second" the second rounding (measured: second against first) and
    "second_expected" (the same estimate for the second rounding's blocks: checks the estimate)."""
    sizes = {"first": [], "second": [], "second_expected": []}
    for name in SCHEMES:
        a, b = getattr(first, name), getattr(second, name)
        for layer in (range(a.shape[0]) if name in LINEAR else [None]):
            x, y = (a, b) if layer is None else (a[layer], b[layer])
            sizes["first"].append(expected_rms(name, x))
            sizes["second"].append(relative_rms(x, y))
            sizes["second_expected"].append(expected_rms(name, x, offset))
    return {key: np.array(value) for key, value in sizes.items()}


# ---------------------------------------------------------------- the study

def _findings(weights: GPTWeights, prompt_ids, target_id: int, texts_ids, sets: heads.InductionSets) -> dict:
    """One model -> its induction head (picked on one set, scored on the other), every head's mean induction score
    (L, H) on the scoring set, p(target) after the prompt and the top next token at every position of every text."""
    from attention_core import smollm2  # noqa: PLC0415 - the model, run by the study (the measurement imports no model)

    study = heads.head_study(heads.gpt_forward(weights), sets, heads.gpt_forward_many(weights))
    top = [smollm2.forward(weights, list(ids)).logits.argmax(axis=-1) for ids in texts_ids]
    return {"head": tuple(int(i) for i in study.induction.head), "score": float(study.induction_interval[0]),
            "means": study.induction_means, "p": _probability(weights, prompt_ids, target_id),
            "top": np.concatenate(top).astype(np.int64)}


def _probability(weights: GPTWeights, prompt_ids, target_id: int) -> float:
    """-> p(target) as the prompt's next token (temperature 1)."""
    from attention_core import smollm2  # noqa: PLC0415

    last = smollm2.forward(weights, list(prompt_ids), all_logits=False).logits[-1].astype(np.float64)
    probs = np.exp(last - last.max())
    return float(probs[target_id] / probs.sum())


def top_heads(means, k: int = TOP) -> list[tuple[int, int]]:
    """means: (L, H) -> the k heads with the highest means, highest first (the first in C order on ties)."""
    means = np.asarray(means)
    order = np.argsort(-means.reshape(-1), kind="stable")[:k]
    return [tuple(int(i) for i in np.unravel_index(int(j), means.shape)) for j in order]


def rounding_study(weights: GPTWeights, tokenizer, prompt: str, target: str, texts=TEXTS, sequences: int = 8,
                   period: int = 20, offset: int = SHIFT) -> dict:
    """The lesson's findings on the file's rounding ("first") and on a second rounding of the same size ("second"):
    the induction head and its score, the top-8 induction heads and how many both share, p(target) after the prompt,
    how many positions of the held-out texts get a different top next token (with a Wilson 95 % interval),
    p(target) under two more roundings (blocks shifted by OTHER_SHIFTS: how far one probability moves), the
    roundings' error sizes (median relative RMS over tensors) and the study's CPU seconds. Builds the second model."""
    start = time.process_time()
    target_ids = tokenizer.encode(target)
    if len(target_ids) != 1:
        raise ValueError(f"the target {target!r} must be one token, it is {len(target_ids)}")
    prompt_ids, texts_ids = tokenizer.encode(prompt), [tokenizer.encode(text) for text in texts]
    sets = heads.induction_sets(count=sequences, length=period)
    second = rounded_weights(weights, offset)
    sizes = error_sizes(weights, second, offset)
    found = [_findings(w, prompt_ids, target_ids[0], texts_ids, sets) for w in (weights, second)]
    del second
    other = [_probability(rounded_weights(weights, shift), prompt_ids, target_ids[0]) for shift in OTHER_SHIFTS]
    tops = [top_heads(f["means"]) for f in found]
    differ, positions = int((found[0]["top"] != found[1]["top"]).sum()), int(found[0]["top"].size)
    return {"offset": offset, "tensors": int(sizes["first"].size),
            "error_first": float(np.median(sizes["first"])), "error_second": float(np.median(sizes["second"])),
            "error_second_expected": float(np.median(sizes["second_expected"])),
            "heads": [list(f["head"]) for f in found], "scores": [f["score"] for f in found],
            "top": [[list(h) for h in t] for t in tops], "shared": len(set(tops[0]) & set(tops[1])),
            "p": [f["p"] for f in found], "other_shifts": list(OTHER_SHIFTS), "other_p": other,
            "differ": differ, "positions": positions, "texts": len(texts),
            "interval": list(head_stats.wilson_interval(differ, positions)), "sequences": sequences,
            "period": period, "cpu_seconds": time.process_time() - start}


# ---------------------------------------------------------------- on disk, measured in a process of its own

def _sources():
    from attention_core.smollm2 import model, tokenizer, weights  # noqa: PLC0415

    return (sys.modules[__name__], heads, head_stats, model, tokenizer, weights)


def study_params(prompt: str, target: str, sequences: int, period: int) -> dict:
    return {"prompt": prompt, "target": target, "sequences": sequences, "period": period, "offset": SHIFT,
            "other_shifts": list(OTHER_SHIFTS), "texts": list(TEXTS)}


def stored_study(prompt: str, target: str, sequences: int = 8, period: int = 20) -> dict | None:
    """-> the study's result from disk (attention_core.gpt.disk_cache), or None while it has not been measured."""
    from attention_core.gpt import disk_cache  # noqa: PLC0415

    path = disk_cache.result_path(NAME, study_params(prompt, target, sequences, period),
                                  disk_cache.weights_digest(gguf_path()), _sources())
    found, value = disk_cache.read(path)
    return value if found else None


def measured_study(prompt: str, target: str, sequences: int = 8, period: int = 20) -> dict:
    """-> the study's result: read from disk, or measured now (one BLAS thread; one measuring process per machine at
    a time, by a lock file beside the results) and written there."""
    from attention_core import smollm2  # noqa: PLC0415
    from attention_core.blas import single_blas_thread  # noqa: PLC0415
    from attention_core.gpt import disk_cache  # noqa: PLC0415

    digest = disk_cache.weights_digest(gguf_path())
    folder = disk_cache.results_folder(digest)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f".{NAME}.lock", "a") as lock, single_blas_thread():
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process measuring: wait, then read its result
        weights, tokenizer = smollm2.default_model()
        return disk_cache.load_or_compute(
            NAME, study_params(prompt, target, sequences, period),
            lambda: rounding_study(weights, tokenizer, prompt, target, TEXTS, sequences, period),
            sources=_sources(), digest=digest)


def measure_in_background(prompt: str, target: str, sequences: int = 8, period: int = 20,
                          niceness: int = 10) -> subprocess.Popen:
    """Start `python -m attention_core.gpt_studies.rounding` at a lower priority -> the process (it writes the result to disk;
    its 540 MB second model dies with it)."""
    root = Path(__file__).resolve().parents[2]
    return subprocess.Popen([sys.executable, "-m", "attention_core.gpt_studies.rounding", prompt, target, str(sequences),
                             str(period), str(niceness)], cwd=root, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, start_new_session=True)


def main(argv: list[str]) -> None:
    """argv: prompt, target, sequences, period[, niceness] -> the study measured (or read) and printed."""
    prompt, target, sequences, period = argv[0], argv[1], int(argv[2]), int(argv[3])
    os.nice(int(argv[4]) if len(argv) > 4 else 0)  # below the server's own work: a visitor's run comes first
    result = measured_study(prompt, target, sequences, period)
    print({k: v for k, v in result.items()})


if __name__ == "__main__":
    main(sys.argv[1:])
