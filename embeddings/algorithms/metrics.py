"""Evaluation: triplet accuracy, similarity gaps, concept neighbours. Pure: stdlib + numpy.

A triplet ``(a, p, n)`` of problem indices states "a is closer to p than to n".
"""

from __future__ import annotations

import numpy as np

from .similarity import normalize, top_k

__all__ = ["similarity_gaps", "undefined_triplets", "triplet_correct", "triplet_accuracy", "bootstrap_interval", "nearest_concepts"]


def _triplets(triplets) -> np.ndarray:
    t = np.asarray(triplets, dtype=np.int64)
    return t.reshape(-1, 3)


def similarity_gaps(E: np.ndarray, triplets) -> np.ndarray:
    """``cos(E_a, E_p) - cos(E_a, E_n)`` per triplet.

    Parameters
    ----------
    E : np.ndarray, shape (n_problems, dim)
    triplets : array-like, shape (m, 3), int

    Returns
    -------
    gaps : np.ndarray, shape (m,), float64
        A cosine involving a zero row counts as 0 (never NaN); see :func:`undefined_triplets`.
    """
    u = normalize(np.asarray(E, dtype=np.float64))
    t = _triplets(triplets)
    a, p, n = u[t[:, 0]], u[t[:, 1]], u[t[:, 2]]
    return np.einsum("ij,ij->i", a, p) - np.einsum("ij,ij->i", a, n)


def undefined_triplets(E: np.ndarray, triplets) -> np.ndarray:
    """shape (m,), bool: triplets touching a zero row of ``E`` (no direction, no verdict)."""
    zero = ~np.asarray(E).any(axis=1)
    t = _triplets(triplets)
    return zero[t].any(axis=1)


def triplet_correct(E: np.ndarray, triplets) -> np.ndarray:
    """shape (m,), bool: ``cos(E_a, E_p) > cos(E_a, E_n)`` per triplet (ties and zero rows are wrong)."""
    t = _triplets(triplets)
    return (similarity_gaps(E, t) > 1e-12) & ~undefined_triplets(E, t)


def bootstrap_interval(correct, level: float = 0.95, rounds: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of an accuracy: resample the triplets with replacement.

    Parameters
    ----------
    correct : array-like of bool, shape (m,), m >= 1
    level : coverage, e.g. 0.95
    rounds : bootstrap resamples

    Returns
    -------
    (low, high) : floats in [0, 1]
    """
    c = np.asarray(correct, dtype=np.float64)
    if c.size == 0:
        raise ValueError("no triplets")
    rng = np.random.default_rng(seed)
    means = c[rng.integers(0, c.size, size=(rounds, c.size))].mean(axis=1)
    tail = (1.0 - level) / 2.0
    return float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail))


def triplet_accuracy(E: np.ndarray, triplets) -> float:
    """Share of triplets with ``cos(E_a, E_p) > cos(E_a, E_n)``, over ALL ``m`` triplets.

    A tie counts as wrong, and so does a triplet touching a zero row (count those with
    :func:`undefined_triplets`). Gaps within 1e-12 are ties (float round-off).

    Parameters
    ----------
    E : np.ndarray, shape (n_problems, dim)
    triplets : array-like, shape (m, 3), int; m >= 1

    Returns
    -------
    float in [0, 1]

    Raises
    ------
    ValueError
        With no triplets: the accuracy is undefined.
    """
    t = _triplets(triplets)
    if t.shape[0] == 0:
        raise ValueError("no triplets")
    return float(triplet_correct(E, t).mean())


def nearest_concepts(V: np.ndarray, i: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` concepts whose vectors are most cosine-similar to concept ``i`` (concept continuity).

    Parameters
    ----------
    V : np.ndarray, shape (N, dim)
    i, k : int

    Returns
    -------
    idx : np.ndarray (<= k,), int64; scores : np.ndarray (<= k,), float64
        As :func:`~embeddings.algorithms.similarity.top_k`: ``i`` and zero vectors excluded, by
        score descending, ties by index.
    """
    return top_k(V, i, k)
