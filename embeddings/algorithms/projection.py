"""2-D projection of vectors for the concept continuity map (pure numpy)."""

from __future__ import annotations

import numpy as np


def pca_2d(vectors: np.ndarray) -> np.ndarray:
    """The first two principal components of the rows of `vectors`.

    Parameters
    ----------
    vectors : np.ndarray, shape (n, dim)

    Returns
    -------
    np.ndarray, shape (n, 2)
        Coordinates on the two directions of largest variance (zeros where there are fewer than two
        directions with variance). Each axis's sign is fixed so that its largest loading is positive,
        so the same vectors always give the same picture.
    """
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"vectors must be 2-D (n, dim), got shape {x.shape}")
    out = np.zeros((x.shape[0], 2))
    if x.shape[0] < 2:
        return out
    centred = x - x.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    k = min(2, int((s > 1e-12 * max(s[0], 1e-300)).sum()))
    for j in range(k):
        axis = vt[j]
        if axis[np.argmax(np.abs(axis))] < 0:
            axis = -axis
        out[:, j] = centred @ axis
    return out
