"""SVD baselines on the concept co-occurrence matrix (Prob2Vec appendix). Pure: stdlib + numpy.

The hyperparameters of Levy, Goldberg & Dagan (2015), "Improving distributional similarity with
lessons learned from word embeddings", applied to the N x N concept count matrix ``C`` of
:func:`~embeddings.algorithms.cooccurrence.cooccurrence_counts` (rows: center concept ``i``,
columns: context concept ``j``):

* PPMI with a shift ``k`` (``shift``) and context distribution smoothing ``alpha`` (``cds``);
* subsampling of frequent concepts (``subsample``);
* eigenvalue weighting ``p`` (``eig``): ``W = U_d S_d^p``;
* adding the context vectors (``add_context``, "w+c"): ``W + C`` with ``C = V_d S_d^p``.

Each variant of :data:`SVD_VARIANTS` changes ONE thing relative to plain ``"svd"`` (PPMI,
``eig=1``), except ``"wandc"`` which is ``"eig"`` plus context vectors.
"""

from __future__ import annotations

from typing import Mapping, Union

import numpy as np

__all__ = ["ppmi", "subsample", "svd_vectors", "SVD_VARIANTS", "svd_embed"]


def ppmi(counts: np.ndarray, shift: float = 1.0, cds: float = 1.0) -> np.ndarray:
    """Shifted positive PMI with context distribution smoothing.

    With ``T = sum_ij C_ij``, ``C_i* = sum_j C_ij``, ``C_*j = sum_i C_ij``::

        P(i, j)     = C_ij / T
        P(i)        = C_i* / T
        P_alpha(j)  = C_*j^alpha / sum_j' C_*j'^alpha          (alpha = cds; alpha = 1: C_*j / T)
        PMI(i, j)   = log( P(i, j) / (P(i) P_alpha(j)) ) = log( C_ij / (C_i* P_alpha(j)) )
        SPPMI(i, j) = max(PMI(i, j) - log(shift), 0),  and 0 where C_ij == 0.

    For ``alpha = 1`` this is the usual ``log(C_ij T / (C_i* C_*j))``.

    Parameters
    ----------
    counts : np.ndarray, shape (N, M), non-negative
    shift : float
        ``k`` >= 1 (word2vec's number of negative samples); 1 = no shift.
    cds : float
        ``alpha`` in (0, 1]; 1 = no smoothing, 0.75 in word2vec.

    Returns
    -------
    M : np.ndarray, shape (N, M), float64
    """
    c = np.asarray(counts, dtype=np.float64)
    out = np.zeros_like(c)
    if c.sum() <= 0:
        return out
    row = c.sum(axis=1)
    col_a = c.sum(axis=0) ** cds
    p_ctx = col_a / col_a.sum()
    nz = c > 0
    ii, jj = np.nonzero(nz)
    pmi = np.log(c[nz] / (row[ii] * p_ctx[jj])) - np.log(shift)
    out[nz] = np.maximum(pmi, 0.0)
    return out


def subsample(counts: np.ndarray, t: float = 0.1) -> np.ndarray:
    """Expected counts after word2vec-style subsampling of frequent concepts.

    word2vec keeps each occurrence of a token with frequency ``p`` with probability
    ``min(1, sqrt(t / p))``. Here ``p_c = C_c* / T`` is concept ``c``'s share of the pairs and the
    threshold is RELATIVE to the most frequent concept, ``t_abs = t * max_c p_c`` (an absolute
    1e-5 means nothing for 130 concepts). A pair survives when both its concepts do, so

        keep_c = min(1, sqrt(t_abs / p_c)),   C'_ij = C_ij * keep_i * keep_j.

    Parameters
    ----------
    counts : np.ndarray, shape (N, N)
    t : float
        Relative threshold in (0, 1]; 1 keeps everything. The most frequent concept keeps sqrt(t).

    Returns
    -------
    np.ndarray, shape (N, N), float64
    """
    c = np.asarray(counts, dtype=np.float64)
    total = c.sum()
    if total <= 0:
        return c.copy()
    p = c.sum(axis=1) / total
    t_abs = t * p.max()
    keep = np.ones_like(p)
    pos = p > 0
    keep[pos] = np.minimum(1.0, np.sqrt(t_abs / p[pos]))
    return c * keep[:, None] * keep[None, :]


def svd_vectors(matrix: np.ndarray, dim: int, eig: float = 0.5, add_context: bool = False) -> np.ndarray:
    """Truncated-SVD embeddings ``W = U_d S_d^eig`` (and ``W + V_d S_d^eig`` with ``add_context``).

    Signs are made deterministic: each singular vector pair is flipped so that the largest-magnitude
    entry of ``U[:, k]`` is positive.

    Parameters
    ----------
    matrix : np.ndarray, shape (N, M)
        Usually ``ppmi(counts)``.
    dim : int
        d <= min(N, M).
    eig : float
        Eigenvalue weighting exponent p (0, 0.5 or 1 in Levy et al.).
    add_context : bool
        Return ``W + C`` with ``C = V_d S_d^eig`` (needs a square matrix).

    Returns
    -------
    np.ndarray, shape (N, dim), float64
    """
    m = np.asarray(matrix, dtype=np.float64)
    if not 0 < dim <= min(m.shape):
        raise ValueError(f"dim must be in 1..{min(m.shape)}, got {dim}")
    u, s, vt = np.linalg.svd(m, full_matrices=False)
    u, s, v = u[:, :dim], s[:dim], vt[:dim].T
    sign = np.sign(u[np.argmax(np.abs(u), axis=0), np.arange(dim)])
    sign[sign == 0] = 1.0
    u, v = u * sign, v * sign
    weight = s**eig
    w = u * weight
    if add_context:
        if m.shape[0] != m.shape[1]:
            raise ValueError("add_context needs a square matrix")
        return w + v * weight
    return w


SVD_VARIANTS: dict[str, dict[str, float]] = {
    "svd": {"eig": 1.0},  # plain: PPMI, U_d S_d
    "eig": {"eig": 0.5},  # eigenvalue weighting p = 0.5
    "wandc": {"eig": 0.5, "add_context": True},  # p = 0.5, W + C
    "sub": {"eig": 1.0, "subsample": 0.1},  # subsampling, relative threshold t = 0.1 (see subsample)
    "shifted": {"eig": 1.0, "shift": 5.0},  # SPPMI, k = 5
    "cds": {"eig": 1.0, "cds": 0.75},  # context distribution smoothing, alpha = 0.75
}


def svd_embed(counts: np.ndarray, dim: int, variant: Union[str, Mapping[str, float]] = "svd") -> np.ndarray:
    """Concept vectors of one SVD baseline: optional subsampling -> (S)PPMI -> truncated SVD.

    Parameters
    ----------
    counts : np.ndarray, shape (N, N)
    dim : int
    variant : str or mapping
        A key of :data:`SVD_VARIANTS`, or a kwargs mapping with keys among ``subsample``,
        ``shift``, ``cds``, ``eig``, ``add_context``.

    Returns
    -------
    np.ndarray, shape (N, dim), float64
    """
    kw = dict(SVD_VARIANTS[variant] if isinstance(variant, str) else variant)
    c = np.asarray(counts, dtype=np.float64)
    if "subsample" in kw:
        c = subsample(c, kw.pop("subsample"))
    m = ppmi(c, shift=kw.pop("shift", 1.0), cds=kw.pop("cds", 1.0))
    eig, add_context = kw.pop("eig", 0.5), bool(kw.pop("add_context", False))
    if kw:
        raise ValueError(f"unknown SVD options: {sorted(kw)}")
    return svd_vectors(m, dim, eig=eig, add_context=add_context)
