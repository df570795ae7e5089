"""The Elman RNN's input Jacobians written out as in the formula, the reference for attention_core.rnn's fast norms.

d h_T / d x_t = D_T W_h D_{T-1} W_h ... D_{t+1} W_h D_t W_x with D_k = diag(1 - h_k^2): explicit diagonal matrices,
multiplied left to right, float64. Slow, and plain (tests/test_rnn_core.py checks it against central differences).
"""

from __future__ import annotations

import numpy as np

from attention_core.rnn import ElmanWeights, rnn_states


def input_jacobians(X, weights: ElmanWeights) -> np.ndarray:
    """X: (T, d_in) -> J: (T, hidden, d_in), J[t] = d h_T / d x_t (h_T the last state)."""
    X = np.asarray(X, dtype=np.float64)
    H = rnn_states(X, weights)
    T = len(X)
    J = np.empty((T, weights.hidden, weights.d_in))
    for t in range(T):
        M = np.diag(1 - H[t] ** 2) @ weights.W_x
        for k in range(t + 1, T):
            M = np.diag(1 - H[k] ** 2) @ weights.W_h @ M
        J[t] = M
    return J
