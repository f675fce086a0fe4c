"""Problem vectors from concept vectors (Prob2Vec's 1/f-weighted average). Pure: stdlib + numpy.

For problem ``i`` with concept set ``C_i`` and concept frequencies ``f`` (number of problems
containing each concept):

    E_i = (1 / |C_i|) * sum_{c in C_i} E(c) / f_c

Conventions (shared with :func:`~embeddings.algorithms.similarity.contributions`):

* ``C_i`` is a set: a concept listed twice counts once.
* A concept with ``f_c == 0`` (possible when ``frequencies`` come from another bank) has no defined
  weight: it is skipped and not counted in ``|C_i|``.
* A problem whose row ends up exactly zero (no concepts, only skipped ones, or only concepts whose
  vector is zero) gets a zero row, never NaN, and is reported.

The methods pass ``f_c ** power`` in place of ``f_c`` (:func:`weighting_frequencies`): power 1 for
expert labels, as in the paper, and 0.5 for concepts an extractor found (``methods.frequency_power``).
"""

from __future__ import annotations

import numpy as np

from .cooccurrence import ConceptSets, ConceptSetsLike, as_concept_sets

__all__ = ["concept_weights", "problem_vectors", "onehot_vectors", "weighting_frequencies"]

_BLOCK = 8192  # problems per block of problem_vectors: 3.2 MB of float32 at 100 dimensions


def weighting_frequencies(frequencies: np.ndarray, power: float = 1.0) -> np.ndarray:
    """``f_c ** power`` where ``f_c > 0``, else 0: what every function here divides by in place of ``f_c``.

    ``power = 1`` is the paper's 1/f weight; ``power = 0.5`` weighs a concept by 1/sqrt(f), so that a
    rare concept counts for more than a common one but no longer outweighs the rest of the problem's
    concepts (the default for extracted concepts, ``methods.FREQUENCY_POWER_EXTRACTED``); 0 weighs
    every concept alike.
    """
    f = np.asarray(frequencies, dtype=np.float64)
    return np.where(f > 0, f**power, 0.0)


def _entry_weights(cs: ConceptSets, frequencies: np.ndarray) -> np.ndarray:
    """shape (total,): the weight ``1 / (|C_i| f_c)`` of each entry of ``cs.flat`` (0 if skipped)."""
    f = np.asarray(frequencies, dtype=np.float64)
    if f.shape != (cs.n_concepts,):
        raise ValueError(f"frequencies must have shape ({cs.n_concepts},), got {f.shape}")
    fc = f[cs.flat]
    usable = cs.first & (fc > 0)
    owner = cs.owner
    n_usable = np.bincount(owner[usable], minlength=cs.n_problems)
    w = np.zeros(fc.shape[0], dtype=np.float64)
    w[usable] = 1.0 / (fc[usable] * n_usable[owner[usable]])
    return w


def concept_weights(concept_set, frequencies: np.ndarray) -> dict[int, float]:
    """The weights ``1 / (|C_i| f_c)`` of one problem's concepts, ``E_i = sum_c w_c E(c)``.

    Parameters
    ----------
    concept_set : sequence of int
    frequencies : np.ndarray, shape (N,)

    Returns
    -------
    dict concept id -> weight; skipped concepts (``f_c == 0``) map to 0.0.
    """
    f = np.asarray(frequencies, dtype=np.float64)
    cs = as_concept_sets([list(concept_set)], f.shape[0])
    w = _entry_weights(cs, f)
    return {int(c): float(x) for c, x, keep in zip(cs.flat, w, cs.first) if keep}


def problem_vectors(
    concept_vectors: np.ndarray, concept_sets: ConceptSetsLike, frequencies: np.ndarray
) -> tuple[np.ndarray, list[int]]:
    """Prob2Vec problem vectors.

    Parameters
    ----------
    concept_vectors : np.ndarray, shape (N, dim)
    concept_sets : sequence of sequences of int, or ConceptSets
        One concept set per problem.
    frequencies : np.ndarray, shape (N,)
        ``f_c``, e.g. from ``concept_frequencies``.

    Returns
    -------
    E : np.ndarray, shape (n_problems, dim), float32
        ``E_i = (1/|C_i|) sum_{c in C_i} concept_vectors[c] / f_c`` (conventions in the module doc).
    zero_rows : list of int
        Indices of the problems whose row is exactly zero (no usable concept); sorted.
    """
    v = np.asarray(concept_vectors, dtype=np.float64)
    n_concepts = v.shape[0]
    cs = as_concept_sets(concept_sets, n_concepts)
    f = np.asarray(frequencies, dtype=np.float64)
    if f.shape != (n_concepts,):
        raise ValueError(f"frequencies must have shape ({n_concepts},), got {f.shape}")
    inv_f = np.divide(1.0, f, out=np.zeros_like(f), where=f > 0)
    u = (v * inv_f[:, None]).astype(np.float32)  # E(c) / f_c, zero for skipped concepts
    e = np.zeros((cs.n_problems, v.shape[1]), dtype=np.float32)
    # Fast path: no duplicates and no skipped concept in any set, so |C_i| = k for a k-set.
    listed = np.bincount(cs.flat, minlength=n_concepts) > 0
    simple = not cs.has_duplicates and not (f[listed] <= 0).any()
    # Per set size k, blocks of at most _BLOCK problems: no Python loop over problems, and each block's
    # temporaries stay in the processor's cache (one block per set size took 2-3x as long at 1M problems
    # and 100 dimensions, waiting on memory; the results are bit for bit the same). float32 throughout:
    # each row sums at most k terms, so the relative error stays ~1e-7.
    for rows, conc, keep in cs.groups:
        k = conc.shape[0]
        usable = None if simple else keep & (inv_f[conc] > 0)
        for start in range(0, rows.shape[0], _BLOCK):
            block = slice(start, start + _BLOCK)
            acc = u[conc[0, block]]
            if usable is None:
                for q in range(1, k):
                    acc += u[conc[q, block]]
                acc *= np.float32(1.0 / k)
            else:
                acc *= usable[0, block][:, None]
                for q in range(1, k):
                    acc += u[conc[q, block]] * usable[q, block][:, None]
                acc /= np.maximum(usable[:, block].sum(axis=0), 1).astype(np.float32)[:, None]
            e[rows[block]] = acc
    maybe_zero = np.flatnonzero(np.einsum("ij,ij->i", e, e) == 0)  # fast filter (squares may underflow)
    zero_rows = maybe_zero[~e[maybe_zero].any(axis=1)].tolist()
    return e, zero_rows


def onehot_vectors(concept_sets: ConceptSetsLike, n_concepts: int, frequencies: np.ndarray) -> np.ndarray:
    """The plain reference: 1/f-weighted bag-of-concepts vectors.

    Same formula as :func:`problem_vectors` with the identity as concept vectors, i.e.
    ``E[i, c] = 1 / (|C_i| f_c)`` for ``c in C_i``, else 0.

    Returns
    -------
    E : np.ndarray, shape (n_problems, n_concepts), float32
    """
    cs = as_concept_sets(concept_sets, n_concepts)
    w = _entry_weights(cs, frequencies)
    e = np.zeros((cs.n_problems, n_concepts), dtype=np.float32)
    keep = w > 0  # duplicates and skipped concepts have weight 0; the kept (problem, concept) are unique
    e[cs.owner[keep], cs.flat[keep]] = w[keep]
    return e
