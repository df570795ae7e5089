"""Lesson 6 (c): a 3-D principal-component view of a sentence's word vectors (scikit-learn PCA)."""

from __future__ import annotations

import numpy as np

N_AXES = 3


def pca_3d(X) -> tuple[np.ndarray, np.ndarray]:
    """X: (n, d) -> (coords (n, 3), explained variance ratio (3,)); axes past the data's rank are 0.

    Deterministic (full SVD, scikit-learn's sign convention). One word, or identical words,
    have no spread: all coordinates are then 0.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"pca_3d needs an (n, d) array with n >= 1, got shape {X.shape}")
    n, d = X.shape
    coords = np.zeros((n, N_AXES))
    explained = np.zeros(N_AXES)
    k = min(N_AXES, n - 1, d)
    if k < 1 or np.allclose(X, X[0], rtol=0, atol=1e-12):
        return coords, explained
    from sklearn.decomposition import PCA  # imported on first use: a slow import that no other page needs

    pca = PCA(n_components=k, svd_solver="full")
    coords[:, :k] = pca.fit_transform(X)
    explained[:k] = np.nan_to_num(pca.explained_variance_ratio_)
    return coords, explained
