"""The plain loops both reference passes use alike (tests/reference_gpt.py, tests/reference_gemma.py): written
separately from attention_core, row by row, in float64."""

from __future__ import annotations

import math

import numpy as np


def rms_norm(x: np.ndarray, gain: np.ndarray, eps: float) -> np.ndarray:
    """x: (n, k) -> each row over its root mean square, times the gain (Gemma's file holds 1 + w already)."""
    out = np.empty_like(x)
    for row in range(x.shape[0]):
        out[row] = x[row] / math.sqrt(float(np.dot(x[row], x[row])) / x.shape[1] + eps) * gain
    return out


def rotate_half_rope(x: np.ndarray, base: float) -> np.ndarray:
    """x: (n, hd) one head's rows at positions 0..n-1 -> x * cos + rotate_half(x) * sin (Hugging Face's form)."""
    n, hd = x.shape
    inverse = np.array([1.0 / base ** (2 * i / hd) for i in range(hd // 2)])
    angles = np.outer(np.arange(n, dtype=np.float64), inverse)
    cos = np.concatenate([np.cos(angles)] * 2, axis=1)
    sin = np.concatenate([np.sin(angles)] * 2, axis=1)
    rotated = np.concatenate([-x[:, hd // 2:], x[:, :hd // 2]], axis=1)
    return x * cos + rotated * sin
