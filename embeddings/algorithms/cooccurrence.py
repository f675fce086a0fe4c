"""Concept frequencies and concept co-occurrence counts. Pure: stdlib + numpy only.

A problem bank is given as ``concept_sets``: one sequence of concept ids (ints in ``0..N-1``) per
problem. A concept listed twice in one problem counts once everywhere in this package (a problem's
concepts are a *set*); the order inside a problem does not matter.

Everything is vectorised: the ragged input is flattened once (:func:`as_concept_sets`), problems
are grouped by their number of concepts, and each group of ``m`` problems with ``k`` concepts is
one ``(k, m)`` integer array. The only Python loops run over the distinct set sizes and over the
``k * (k - 1) / 2`` position pairs of a size, never over problems. The flattened form can be
passed to every function that takes ``concept_sets``, so a rebuild flattens the bank once.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence, Union

import numpy as np

__all__ = [
    "ConceptSets",
    "as_concept_sets",
    "concept_frequencies",
    "cooccurrence_counts",
    "expand_pairs",
]


@dataclass(frozen=True)
class ConceptSets:
    """A bank's concept sets, flattened and grouped by set size (build with :func:`as_concept_sets`).

    Attributes
    ----------
    flat : np.ndarray, shape (total,), int64
        All concept ids, problem after problem.
    starts : np.ndarray, shape (n_problems,), int64
        Offset of each problem's first concept in ``flat``.
    lengths : np.ndarray, shape (n_problems,), int64
        Number of listed concepts of each problem (duplicates included).
    first : np.ndarray, shape (total,), bool
        True where the entry is the first occurrence of its concept within its problem; the
        duplicates (False) are ignored by every computation.
    n_concepts : int
        N, the number of concepts.
    groups : tuple of (rows, concepts, keep)
        One per distinct set size ``k >= 1``: ``rows`` (m,) the indices of the problems listing
        ``k`` concepts, ascending; ``concepts`` (k, m) their concept ids, TRANSPOSED so that row
        ``q`` (the q-th concept of every such problem) is contiguous; ``keep`` (k, m) the
        ``first`` mask of those entries.
    has_duplicates : bool
        Whether any problem lists a concept twice.
    """

    flat: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    first: np.ndarray
    n_concepts: int
    groups: tuple = ()
    has_duplicates: bool = False

    @property
    def n_problems(self) -> int:
        return int(self.lengths.shape[0])

    @property
    def owner(self) -> np.ndarray:
        """shape (total,): the problem index of each entry of ``flat``."""
        return np.repeat(np.arange(self.n_problems, dtype=np.int64), self.lengths)


ConceptSetsLike = Union[ConceptSets, Sequence[Sequence[int]]]


def as_concept_sets(concept_sets: ConceptSetsLike, n_concepts: int) -> ConceptSets:
    """Flatten ``concept_sets`` (one sequence of concept ids per problem) into :class:`ConceptSets`.

    Parameters
    ----------
    concept_sets : sequence of sequences of int, or ConceptSets
        Concept ids of each problem, each in ``0..n_concepts-1``.
    n_concepts : int
        N.

    Raises
    ------
    ValueError
        If an id is outside ``0..n_concepts-1`` or a ``ConceptSets`` has another N.
    """
    if isinstance(concept_sets, ConceptSets):
        if concept_sets.n_concepts != n_concepts:
            raise ValueError(f"concept sets were built for {concept_sets.n_concepts} concepts, not {n_concepts}")
        return concept_sets
    n = len(concept_sets)
    lengths = np.fromiter(map(len, concept_sets), dtype=np.int64, count=n)
    total = int(lengths.sum())
    flat = np.fromiter(itertools.chain.from_iterable(concept_sets), dtype=np.int64, count=total)
    if total and (flat.min() < 0 or flat.max() >= n_concepts):
        raise ValueError(f"concept ids must lie in 0..{n_concepts - 1}")
    starts = np.zeros(n, dtype=np.int64)
    if n:
        np.cumsum(lengths[:-1], out=starts[1:])
    first = np.ones(total, dtype=bool)
    groups = []
    if n:
        sizes = np.flatnonzero(np.bincount(lengths))
        for k in sizes.tolist():
            if k == 0:
                continue
            rows = np.flatnonzero(lengths == k)
            idx = starts[rows] + np.arange(k, dtype=np.int64)[:, None]  # (k, m)
            conc = flat[idx]
            # Entry q is a duplicate when an earlier position of its problem holds the same id.
            dup = np.zeros(conc.shape, dtype=bool)
            for q in range(1, k):
                for p in range(q):
                    dup[q] |= conc[p] == conc[q]
            if dup.any():
                first[idx[dup]] = False
            groups.append((rows, conc, ~dup))
    return ConceptSets(flat, starts, lengths, first, int(n_concepts), tuple(groups), not bool(first.all()))


def concept_frequencies(concept_sets: ConceptSetsLike, n_concepts: int) -> np.ndarray:
    """Number of problems containing each concept.

    Parameters
    ----------
    concept_sets : sequence of sequences of int, or ConceptSets
    n_concepts : int

    Returns
    -------
    f : np.ndarray, shape (n_concepts,), int64
        ``f[c]`` = number of problems whose set contains ``c`` (a duplicate counts once).
    """
    cs = as_concept_sets(concept_sets, n_concepts)
    flat = cs.flat[cs.first] if cs.has_duplicates else cs.flat
    return np.bincount(flat, minlength=n_concepts).astype(np.int64)


def cooccurrence_counts(concept_sets: ConceptSetsLike, n_concepts: int) -> np.ndarray:
    """Ordered-pair co-occurrence counts, the skip-gram's sufficient statistic.

    Parameters
    ----------
    concept_sets : sequence of sequences of int, or ConceptSets
    n_concepts : int

    Returns
    -------
    C : np.ndarray, shape (n_concepts, n_concepts), float64
        ``C[i, j]`` = number of problems containing both ``i`` and ``j`` (``i != j``): each problem
        with ``k`` distinct concepts contributes its ``k * (k - 1)`` ordered pairs once. ``C`` is
        symmetric with a zero diagonal; ``C.sum()`` is the number of (center, context) training pairs.
    """
    cs = as_concept_sets(concept_sets, n_concepts)
    nn = n_concepts * n_concepts
    upper = np.zeros(nn, dtype=np.int64)
    key_dtype = np.int32 if nn < 2**31 else np.int64
    for _, conc, keep in cs.groups:
        k = conc.shape[0]
        if k < 2:
            continue
        p, q = np.triu_indices(k, 1)
        c = conc.astype(key_dtype)
        keys = c[p] * key_dtype(n_concepts) + c[q]  # (k(k-1)/2, m)
        if cs.has_duplicates:
            keys = keys[keep[p] & keep[q]]
        upper += np.bincount(keys.ravel(), minlength=nn)
    m = upper.reshape(n_concepts, n_concepts).astype(np.float64)
    # Each unordered pair {a, b} was counted once, at (a, b) or (b, a): add the transpose for both orders.
    return m + m.T


def expand_pairs(counts: np.ndarray) -> np.ndarray:
    """The literal list of (center, context) pairs that an integer count matrix stands for.

    Parameters
    ----------
    counts : np.ndarray, shape (N, N), non-negative integer values

    Returns
    -------
    pairs : np.ndarray, shape (counts.sum(), 2), int64
        Pair ``(i, j)`` repeated ``counts[i, j]`` times, in row-major order.
    """
    c = np.asarray(counts)
    reps = np.rint(c).astype(np.int64).ravel()
    if np.any(reps < 0) or not np.allclose(reps, c.ravel()):
        raise ValueError("counts must be non-negative integers")
    cells = np.repeat(np.arange(reps.shape[0], dtype=np.int64), reps)
    return np.stack(np.divmod(cells, c.shape[1]), axis=1)
