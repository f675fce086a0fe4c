"""No problem without a vector. Pure: numpy only.

Concept methods give a problem with no concepts (the rules found none, nobody labelled it) a zero
vector, and then it can be compared with nothing: it is never recommended and every triplet it is in
counts as wrong. Two steps, both on unit rows, make every problem comparable:

1. **Borrowing** (:func:`borrow_missing`): a problem without concepts takes the similarity-weighted
   mean of the concept vectors of its ``k`` nearest problems *by text* that have concepts. Its
   concepts are, in effect, guessed from the problems it reads like.
2. **Text blend** (:func:`join_text`): each problem vector is the concatenation
   ``[sqrt(1 - w) * c_i, sqrt(w) * t_i]`` of its unit concept vector and its unit text vector, so that

       cos(i, j) = (1 - w) * cos_concepts(i, j) + w * cos_text(i, j)

   exactly. A small ``w`` (the default is chosen on the dev triplets, see README) only breaks ties
   between problems with the same concepts; ``w = 0`` leaves the concept method as published.

   A borrowed vector is a guess, so a problem that borrowed leans on its own text more: its row gets
   the weight ``w_b`` (``borrowed_weight``) instead of ``w``. With a weight per row the cosine is

       cos(i, j) = sqrt((1 - w_i)(1 - w_j)) * cos_concepts(i, j) + sqrt(w_i * w_j) * cos_text(i, j)

   (each row still of unit norm), which is the formula above wherever both rows have the same weight.
"""

from __future__ import annotations

import numpy as np

__all__ = ["unit_rows", "borrow_missing", "join_text", "fill", "check_weights"]


def unit_rows(e: np.ndarray) -> np.ndarray:
    """float64 copy of ``e`` with rows of unit norm (zero rows stay zero)."""
    e = np.asarray(e, dtype=np.float64)
    norms = np.linalg.norm(e, axis=1, keepdims=True)
    return np.divide(e, norms, out=np.zeros_like(e), where=norms > 0)


def borrow_missing(vectors: np.ndarray, missing: list[int], text: np.ndarray, k: int = 5) -> tuple[np.ndarray, list[int]]:
    """Give each row in ``missing`` the mean of the unit concept vectors of its ``k`` text neighbours.

    Parameters
    ----------
    vectors : np.ndarray, shape (n, d)
        Concept-method vectors; the rows in ``missing`` are zero.
    missing : list of int
    text : np.ndarray, shape (n, t)
        Text vectors of the same problems (e.g. ``text.lsa_vectors``).
    k : int
        Neighbours among the problems that have concepts, weighted by their positive text cosine.

    Returns
    -------
    filled : np.ndarray, shape (n, d), float32
        Unit rows where something could be borrowed; rows with concepts are the unit input rows.
    still_missing : list of int
        Rows left zero: no text, or no problem with concepts reads anything like them.
    """
    out = unit_rows(vectors)
    t = unit_rows(text)
    if len(missing) == 0:
        return out.astype(np.float32), []
    missing_rows = np.asarray(sorted(set(missing)), dtype=np.int64)
    donors = np.setdiff1d(np.flatnonzero(out.any(axis=1)), missing_rows)
    if len(donors) == 0:
        return out.astype(np.float32), missing_rows.tolist()
    k = max(1, min(k, len(donors)))
    still: list[int] = []
    for start in range(0, len(missing_rows), 1024):  # bounded memory: 1,024 x donors similarities at a time
        rows = missing_rows[start : start + 1024]
        sims = t[rows] @ t[donors].T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        weights = np.clip(np.take_along_axis(sims, top, axis=1), 0.0, None)
        borrowed = np.einsum("mk,mkd->md", weights, out[donors[top]])
        out[rows] = unit_rows(borrowed)
        still.extend(rows[~out[rows].any(axis=1)].tolist())
    return out.astype(np.float32), still


def join_text(vectors: np.ndarray, text: np.ndarray, weight: float, borrowed: list[int] | None = None, borrowed_weight: float | None = None) -> np.ndarray:
    """``[sqrt(1 - w) * unit(vectors), sqrt(w) * unit(text)]``: cosine = (1 - w) cos_concepts + w cos_text.

    The rows in ``borrowed`` (problems whose concept vector was borrowed) get ``borrowed_weight`` in
    place of ``weight`` (None: the same weight). A row with a zero part keeps only the other part (its
    cosine with others is then that part's, scaled), so a problem with neither concepts nor text is the
    only one left without a vector.

    Returns
    -------
    np.ndarray, shape (n, d + t), float32
    """
    check_weights(weight, borrowed_weight)
    weights = np.full((len(vectors), 1), float(weight))
    if borrowed and borrowed_weight is not None:
        weights[np.asarray(borrowed, dtype=np.int64)] = float(borrowed_weight)
    if not weights.any():
        return unit_rows(vectors).astype(np.float32)
    return np.hstack([np.sqrt(1.0 - weights) * unit_rows(vectors), np.sqrt(weights) * unit_rows(text)]).astype(np.float32)


def check_weights(weight: float, borrowed_weight: float | None = None) -> None:
    """Both text weights are shares of a cosine: ValueError, naming which, unless in [0, 1] (None: unset)."""
    for name, w in (("text weight", weight), ("borrowed text weight", borrowed_weight)):
        if w is not None and not 0.0 <= w <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {w}")


def fill(
    vectors: np.ndarray, missing: list[int], text: np.ndarray, k: int, weight: float, borrowed_weight: float | None = None
) -> tuple[np.ndarray, list[int], list[int]]:
    """Both steps: the rows in ``missing`` borrow from their ``k`` text neighbours (none when k = 0), then
    the text is blended in, the rows that borrowed at ``borrowed_weight``.

    Returns
    -------
    (vectors from :func:`join_text`, the rows that borrowed, the rows in ``missing`` that found nothing to borrow)
    """
    still = list(missing)
    if k > 0 and still:
        vectors, still = borrow_missing(vectors, still, text, k)
    borrowed = sorted(set(missing) - set(still))
    return join_text(vectors, text, weight, borrowed, borrowed_weight), borrowed, still
