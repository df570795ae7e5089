"""The float32 pieces of BERT's fast forward pass (attention_core/pretrained/bert.py): GELU (exact form, a rational erf),
LayerNorm and a feature-major linear layer, each in place where the pass needs it (the softmax is
attention_core.attention's; the readable pass is attention_core/pretrained/bert_readable.py)."""

from __future__ import annotations

import math

import numpy as np


# Eigen's rational approximation of erf for float32 (an odd numerator over an even denominator, the argument
# clamped to +-4, where float32's erf is already +-1): within 7e-8 of erf in exact arithmetic.
_ERF_CLAMP = 4.0
_ERF_NUMERATOR = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
                  -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02)  # z^13, z^11, ..., z^1
_ERF_DENOMINATOR = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
                    -1.42647390514189e-02)  # z^8, z^6, ..., z^0


def _erf_float32_into(z: np.ndarray, out: np.ndarray, z2: np.ndarray, q: np.ndarray) -> np.ndarray:
    """z: (...) float32, clamped in place -> ``out`` = erf(z); z2 and q: scratch of the same shape."""
    f = np.float32
    np.minimum(z, f(_ERF_CLAMP), out=z)
    np.maximum(z, f(-_ERF_CLAMP), out=z)
    np.multiply(z, z, out=z2)
    np.multiply(z2, f(_ERF_NUMERATOR[0]), out=out)
    out += f(_ERF_NUMERATOR[1])
    for c in _ERF_NUMERATOR[2:]:
        out *= z2
        out += f(c)
    out *= z
    np.multiply(z2, f(_ERF_DENOMINATOR[0]), out=q)
    q += f(_ERF_DENOMINATOR[1])
    for c in _ERF_DENOMINATOR[2:]:
        q *= z2
        q += f(c)
    out /= q
    return out


def _gelu_float32_into(x: np.ndarray, out: np.ndarray, z: np.ndarray, z2: np.ndarray, q: np.ndarray) -> np.ndarray:
    """x: (...) float32 -> ``out`` = gelu(x) (out may be x itself); z, z2, q: scratch of the same shape."""
    np.multiply(x, np.float32(1 / math.sqrt(2)), out=z)
    phi = _erf_float32_into(z, q if out is x else out, z2, z if out is x else q)
    phi += np.float32(1)
    phi *= np.float32(0.5)
    np.multiply(phi, x, out=out)
    return out


def gelu(x: np.ndarray) -> np.ndarray:
    """x: (...) -> same shape x * Phi(x) = x / 2 * (1 + erf(x / sqrt 2)), the exact form BERT uses; a new array.

    float32 goes through the rational erf above (a few ufuncs, no scipy); other dtypes through scipy's erf.
    """
    if x.dtype == np.float32:
        return _gelu_float32_into(x, np.empty_like(x), np.empty_like(x), np.empty_like(x), np.empty_like(x))
    from scipy.special import erf  # only the float64 checks need it: the app's float32 path imports no scipy

    one = x.dtype.type
    return x * (one(0.5) * (one(1) + erf(x * one(1 / math.sqrt(2)))))


def layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """x: (..., d) -> same shape: each row to mean 0 and variance 1 (biased variance), then * gain + bias."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(variance + x.dtype.type(eps)) * gain + bias


def _layer_norm_columns(xt: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float,
                        square: np.ndarray) -> np.ndarray:
    """xt: (d, N) -> the same array, each column (one token) normalised in place as layer_norm does a row;
    square: scratch (d, N)."""
    average = np.full(xt.shape[0], 1 / xt.shape[0], dtype=xt.dtype)  # a BLAS product: faster and closer than mean(0)
    xt -= average @ xt
    scale = average @ np.multiply(xt, xt, out=square)
    scale += xt.dtype.type(eps)
    np.sqrt(scale, out=scale)
    xt /= scale
    xt *= gain[:, None]
    xt += bias[:, None]
    return xt


def _linear(w: np.ndarray, b: np.ndarray, xt: np.ndarray, out: np.ndarray) -> np.ndarray:
    """w: (out, in), b: (out,), xt: (in, N) -> ``out`` (out, N) = W x.T + b: a linear layer, feature-major."""
    np.matmul(w, xt, out=out)
    out += b[:, None]
    return out
