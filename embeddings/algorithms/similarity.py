"""Cosine similarity, nearest neighbours and per-concept explanations. Pure: stdlib + numpy.

Zero rows (problems without a usable concept) have no direction: their cosine with anything is
defined as 0 here, and they never appear among neighbours.
"""

from __future__ import annotations

import numpy as np

from .cooccurrence import ConceptSets, ConceptSetsLike
from .problems import concept_weights

__all__ = ["normalize", "cosine", "top_k", "contributions"]


def normalize(E: np.ndarray) -> np.ndarray:
    """Rows scaled to unit Euclidean length; zero rows stay zero.

    Parameters
    ----------
    E : np.ndarray, shape (n, dim)

    Returns
    -------
    U : np.ndarray, shape (n, dim), E's float dtype (float64 for integer input)
    """
    e = np.asarray(E)
    if not np.issubdtype(e.dtype, np.floating):
        e = e.astype(np.float64)
    norms = np.linalg.norm(e, axis=1, keepdims=True)
    return np.divide(e, norms, out=np.zeros_like(e), where=norms > 0)


def cosine(E: np.ndarray, i: int, j: int) -> float:
    """Cosine of rows ``i`` and ``j`` of ``E`` (shape (n, dim)); 0.0 when either row is zero."""
    a = np.asarray(E[i], dtype=np.float64)
    b = np.asarray(E[j], dtype=np.float64)
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return 0.0
    return float(a @ b / (na * nb))


def top_k(E: np.ndarray, i: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` rows most cosine-similar to row ``i``.

    Parameters
    ----------
    E : np.ndarray, shape (n, dim)
    i : int
    k : int

    Returns
    -------
    idx : np.ndarray, shape (<= k,), int64
        Row indices, excluding ``i`` itself and zero rows, by score descending, ties by index
        ascending. Empty when row ``i`` is zero. Fewer than ``k`` when fewer rows qualify.
    scores : np.ndarray, shape (<= k,), float64
        Their cosines with row ``i``.
    """
    u = normalize(np.asarray(E, dtype=np.float64))
    if k <= 0 or not u[i].any():
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    scores = u @ u[i]
    ok = u.any(axis=1)
    ok[i] = False
    idx = np.flatnonzero(ok)
    s = scores[idx]
    if k < idx.shape[0]:
        # Keep everything tied with the k-th best, then order exactly.
        kth = np.partition(s, idx.shape[0] - k)[idx.shape[0] - k]
        keep = s >= kth
        idx, s = idx[keep], s[keep]
    order = np.lexsort((idx, -s))[:k]
    return idx[order].astype(np.int64), s[order]


def _concepts_of(concept_sets: ConceptSetsLike, i: int) -> list[int]:
    if isinstance(concept_sets, ConceptSets):
        b = int(concept_sets.starts[i])
        return concept_sets.flat[b : b + int(concept_sets.lengths[i])].tolist()
    return [int(c) for c in concept_sets[i]]


def contributions(
    concept_vectors: np.ndarray,
    concept_sets: ConceptSetsLike,
    frequencies: np.ndarray,
    i: int,
    j: int,
) -> dict[int, float]:
    """How much each concept of problems ``i`` and ``j`` contributes to ``cos(E_i, E_j)``.

    With ``E_i = sum_{c in C_i} a_c v_c`` (``a_c = 1/(|C_i| f_c)``, see ``problem_vectors``) and
    ``E_j = sum_{d in C_j} b_d v_d``,

        cos(E_i, E_j) = sum_{c in C_i} sum_{d in C_j} t_cd,   t_cd = a_c b_d (v_c . v_d) / (|E_i| |E_j|).

    Each cross term ``t_cd`` is split half to ``c`` and half to ``d``:

        contribution(x) = 1/2 [x in C_i] a_x (v_x . E_j) / (|E_i||E_j|)
                        + 1/2 [x in C_j] b_x (v_x . E_i) / (|E_i||E_j|)

    so the contributions of all concepts of both problems sum exactly to the cosine, a shared
    concept collects both halves, and the result is symmetric in ``i`` and ``j``. Positive values
    pull the problems together, negative ones push them apart.

    Parameters
    ----------
    concept_vectors : np.ndarray, shape (N, dim)
    concept_sets : sequence of sequences of int, or ConceptSets
    frequencies : np.ndarray, shape (N,)
    i, j : int
        Problem indices.

    Returns
    -------
    dict concept id -> contribution, for every concept of either problem. All 0.0 when either
    problem vector is zero (their cosine is defined as 0). Computed in float64: the sum matches the
    cosine of float32 ``problem_vectors`` to about 1e-6.
    """
    v = np.asarray(concept_vectors, dtype=np.float64)
    wi = concept_weights(_concepts_of(concept_sets, i), frequencies)
    wj = concept_weights(_concepts_of(concept_sets, j), frequencies)
    ei = sum((w * v[c] for c, w in wi.items()), np.zeros(v.shape[1]))
    ej = sum((w * v[c] for c, w in wj.items()), np.zeros(v.shape[1]))
    out = {c: 0.0 for c in list(wi) + list(wj)}
    denom = np.linalg.norm(ei) * np.linalg.norm(ej)
    if denom == 0:
        return out
    for c, w in wi.items():
        out[c] += 0.5 * w * float(v[c] @ ej) / denom
    for d, w in wj.items():
        out[d] += 0.5 * w * float(v[d] @ ei) / denom
    return out
