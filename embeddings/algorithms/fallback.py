"""No problem without a vector. Pure: numpy only.

Concept methods give a problem with no concepts (the rules found none, nobody labelled it) a zero
vector, and then it can be compared with nothing: it is never recommended and every triplet it is in
counts as wrong. Two steps, both on unit rows, make every problem comparable, and a third decides how
much the text counts where the concepts are known to be incomplete:

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

3. **Concepts that miss lean on the text** (:func:`text_weights_from_recall`): where the concept
   source is known to miss concepts, a problem's concept vector is a partial picture too. When the
   caller knows, per problem, the *recall* of the concept source (the share of the expert-labelled
   concepts it finds, measured on the labelled problems of the problem's collection, or on its
   problems held out from rule writing where it has enough: :func:`recall_by_collection`), the row's
   weight is ``1 - recall``, kept between ``w`` and ``w_b``: rules tuned on a book (recall 0.9 and
   more) keep ``w``, rules that find half the concepts of a new book get about ``w_b``, like a
   problem that borrowed. Problems whose recall is unknown keep ``w``.
4. **A collection's accepted triplets set its share** (README step 5; :func:`shares_from_triplets`;
   off unless the caller asks, ``triplet_share_min`` in the methods): ``1 - recall`` is a guess at how much the text
   should count; a collection whose experts accepted at least ``TRIPLET_SHARE_MIN`` triplets says
   directly which share orders them best. Its problems (not those that borrowed) take the share of
   ``TRIPLET_SHARES`` or the recall's own share that gets the most of its triplets right, the
   recall's share on a tie. Each of those triplets is also scored with the share chosen on the other
   folds of them, so that a report on the very triplets the share was chosen on stays honest.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from embeddings.algorithms.metrics import triplet_correct

__all__ = [
    "unit_rows", "borrow_missing", "join_text", "fill", "check_weights", "text_weights_from_recall", "recall_by_collection",
    "RECALL_MIN_LABELLED", "Filled", "shares_from_triplets", "TRIPLET_SHARES", "TRIPLET_SHARE_MIN", "TRIPLET_SHARE_FOLDS",
]


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


# A collection needs this many labelled problems before its measured recall changes its text weight:
# with ten problems (about 25 labelled concepts) the estimate is within about 0.1.
RECALL_MIN_LABELLED = 10


def recall_by_collection(
    collections: list[str],
    concept_sets: list[list[int]],
    truth: dict[int, set[int]],
    min_labelled: int = RECALL_MIN_LABELLED,
    held_out: Container[int] = (),
) -> tuple[np.ndarray, dict[str, dict[str, float | int | str | None]]]:
    """How much of the expert labels a concept source finds, per collection.

    Rules written from a collection's labelled problems find far more of those problems' concepts
    than of the rest of the collection (3-9% FN against 31-62% on the dev books' fresh samples), and
    most of a bank is the rest. So where a collection has ``min_labelled`` labelled problems held out
    from rule writing, its recall is measured on them alone.

    Parameters
    ----------
    collections : per problem, its collection (a book, a course)
    concept_sets : per problem, the source's concepts
    truth : row -> expert-labelled concepts, for the labelled problems
    held_out : the rows held out from rule writing

    Returns
    -------
    recall : np.ndarray, shape (n,): labelled concepts found / labelled concepts over the labelled
        (held-out, where enough) problems of the row's collection; NaN where the collection has fewer
        than ``min_labelled`` labelled problems (nothing is known)
    summary : per collection with labels, ``{"labelled": problems, "held_out": of them held out,
        "measured_on": "held-out" or "labelled", "recall": recall or None}``
    """
    counts: dict[str, dict[bool, list[int]]] = {}  # collection -> held out? -> [problems, labelled concepts, found]
    for i, labels in truth.items():
        if not labels:
            continue
        c = counts.setdefault(collections[i], {False: [0, 0, 0], True: [0, 0, 0]})[i in held_out]
        c[0] += 1
        c[1] += len(labels)
        c[2] += len(set(labels) & set(concept_sets[i]))
    summary: dict[str, dict[str, float | int | str | None]] = {}
    for name, by in sorted(counts.items()):
        on_held_out = by[True][0] >= min_labelled
        n, total, found = by[True] if on_held_out else [a + b for a, b in zip(by[False], by[True])]
        summary[name] = {"labelled": by[False][0] + by[True][0], "held_out": by[True][0],
                         "measured_on": "held-out" if on_held_out else "labelled",
                         "recall": round(found / total, 4) if n >= min_labelled else None}
    known = {name: v["recall"] for name, v in summary.items() if v["recall"] is not None}
    recall = np.array([known.get(name, np.nan) for name in collections], dtype=np.float64)
    return recall, summary


def text_weights_from_recall(recall: np.ndarray, weight: float, borrowed_weight: float | None = None) -> np.ndarray:
    """Per row, the text's share of its cosines given the concept source's recall for that row:
    ``1 - recall`` clipped to ``[weight, max(weight, borrowed_weight)]``; ``weight`` where the recall is
    NaN (unknown). See step 3 of the module doc.

    Returns
    -------
    np.ndarray, shape (n,), float64
    """
    check_weights(weight, borrowed_weight)
    recall = np.asarray(recall, dtype=np.float64).reshape(-1)
    if np.any((recall < 0) | (recall > 1)):
        raise ValueError("a recall must be in [0, 1] (NaN: unknown)")
    cap = max(float(weight), float(weight if borrowed_weight is None else borrowed_weight))
    # An unknown recall counts as complete: 1 - 1 = 0, clipped up to the plain weight.
    return np.clip(1.0 - np.nan_to_num(recall, nan=1.0), float(weight), cap)


def join_text(
    vectors: np.ndarray,
    text: np.ndarray,
    weight: float,
    borrowed: list[int] | None = None,
    borrowed_weight: float | None = None,
    row_weights: np.ndarray | None = None,
) -> np.ndarray:
    """``[sqrt(1 - w) * unit(vectors), sqrt(w) * unit(text)]``: cosine = (1 - w) cos_concepts + w cos_text.

    ``row_weights`` (shape (n,), each in [0, 1]; from :func:`text_weights_from_recall`) gives each row
    its own weight in place of ``weight``. The rows in ``borrowed`` (problems whose concept vector was
    borrowed) get ``borrowed_weight`` in either case (None: no change). A row with a zero part keeps
    only the other part (its cosine with others is then that part's, scaled), so a problem with
    neither concepts nor text is the only one left without a vector.

    Returns
    -------
    np.ndarray, shape (n, d + t), float32
    """
    check_weights(weight, borrowed_weight)
    if row_weights is None:
        weights = np.full((len(vectors), 1), float(weight))
    else:
        weights = np.asarray(row_weights, dtype=np.float64).reshape(-1, 1).copy()
        if weights.shape[0] != len(vectors):
            raise ValueError(f"{weights.shape[0]} row weights for {len(vectors)} rows")
        if np.any((weights < 0) | (weights > 1)):
            raise ValueError("row text weights must be in [0, 1]")
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


# Step 4 (README step 5). The candidate shares (with the recall's own share), the triplets a collection needs before they
# choose (with 24 triplets the choice was noise on the test splits' and genre samples' sets, README), and
# the folds of the honest score.
TRIPLET_SHARES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
TRIPLET_SHARE_MIN = 30
TRIPLET_SHARE_FOLDS = 5


def _pick(accuracy: dict[float, float], default: float) -> float:
    """The share with the best accuracy; on a tie the one nearest the recall's share, then the smaller."""
    return min(accuracy, key=lambda s: (-round(accuracy[s], 9), abs(s - default), s))


def shares_from_triplets(
    vectors: np.ndarray,
    text: np.ndarray,
    weight: float,
    borrowed: list[int],
    borrowed_weight: float | None,
    row_weights: np.ndarray,
    groups: Sequence[str],
    triplets: Mapping[str, np.ndarray],
    min_triplets: int = TRIPLET_SHARE_MIN,
    shares: Sequence[float] = TRIPLET_SHARES,
    folds: int = TRIPLET_SHARE_FOLDS,
) -> tuple[np.ndarray, dict[str, dict]]:
    """Step 4 of the module doc: each group (collection) with at least ``min_triplets`` triplets takes
    the text share that orders them best.

    Parameters
    ----------
    vectors : (n, d) concept vectors after borrowing (:func:`borrow_missing`)
    text : (n, t) text vectors
    weight, borrowed, borrowed_weight : as for :func:`join_text`
    row_weights : (n,) the shares so far (:func:`text_weights_from_recall`)
    groups : per row, its collection
    triplets : collection -> (m, 3) rows (anchor, positive, negative), all of them in the collection

    Returns
    -------
    row_weights : (n,) a copy, the chosen share on each choosing collection's rows that did not borrow
    report : collection -> ``{"triplets", "share", "recall_share", "accuracy" (at the share),
        "recall_share_accuracy", "out_of_fold" (per triplet, 0/1: scored with the share chosen on the
        other folds), "out_of_fold_accuracy"}``
    """
    check_weights(weight, borrowed_weight)
    weights = np.asarray(row_weights, dtype=np.float64).reshape(-1).copy()
    group_of = np.asarray(groups, dtype=object)
    if len(group_of) != len(weights) or len(vectors) != len(weights):
        raise ValueError(f"{len(group_of)} groups and {len(vectors)} vectors for {len(weights)} row weights")
    is_borrowed = np.zeros(len(weights), dtype=bool)
    is_borrowed[np.asarray(borrowed, dtype=np.int64)] = True
    report: dict[str, dict] = {}
    for name, group_triplets in sorted(triplets.items()):
        t = np.asarray(group_triplets, dtype=np.int64).reshape(-1, 3)
        if len(t) < max(min_triplets, folds, 1):
            continue
        own = (group_of == name) & ~is_borrowed
        if (group_of[t.ravel()] != name).any():
            raise ValueError(f"a triplet of {name!r} has a problem of another collection")
        if not own.any():
            continue
        default = float(np.median(weights[own]))
        rows, local = np.unique(t, return_inverse=True)
        local = local.reshape(-1, 3)
        sub_borrowed = np.flatnonzero(is_borrowed[rows]).tolist()
        candidates = sorted({*map(float, shares), default})
        correct: dict[float, np.ndarray] = {}
        for share in candidates:
            w = weights[rows].copy()
            w[own[rows]] = share
            joined = join_text(vectors[rows], text[rows], weight, sub_borrowed, borrowed_weight, w)
            correct[share] = triplet_correct(joined, local)
        chosen = _pick({s: float(c.mean()) for s, c in correct.items()}, default)
        out_of_fold = np.zeros(len(t), dtype=bool)
        order = np.random.default_rng(0).permutation(len(t))
        for fold in np.array_split(order, folds):
            rest = np.setdiff1d(order, fold)
            share = _pick({s: float(c[rest].mean()) for s, c in correct.items()}, default)
            out_of_fold[fold] = correct[share][fold]
        weights[own] = chosen
        report[name] = {
            "triplets": int(len(t)), "share": chosen, "recall_share": round(default, 4),
            "accuracy": round(float(correct[chosen].mean()), 4), "recall_share_accuracy": round(float(correct[default].mean()), 4),
            "out_of_fold": out_of_fold.astype(int).tolist(), "out_of_fold_accuracy": round(float(out_of_fold.mean()), 4),
        }
    return weights, report


@dataclass
class Filled:
    """What :func:`fill` gives: the joined vectors and how each row got there."""

    vectors: np.ndarray  # from join_text
    borrowed: list[int]  # the rows that borrowed
    still: list[int]  # the rows in ``missing`` that found nothing to borrow
    row_weights: np.ndarray | None  # the text share of each row, after step 4 where triplets chose it
    shares: dict[str, dict] = field(default_factory=dict)  # shares_from_triplets's report (empty unless step 4 ran)


def fill(
    vectors: np.ndarray,
    missing: list[int],
    text: np.ndarray,
    k: int,
    weight: float,
    borrowed_weight: float | None = None,
    row_weights: np.ndarray | None = None,
    groups: Sequence[str] | None = None,
    triplets: Mapping[str, np.ndarray] | None = None,
    min_triplets: int = 0,
) -> Filled:
    """Every step: the rows in ``missing`` borrow from their ``k`` text neighbours (none when k = 0); where
    ``row_weights`` are given and ``min_triplets`` > 0, each collection of ``groups`` with that many
    ``triplets`` chooses its share (step 4, :func:`shares_from_triplets`); then the text is blended in (at
    ``row_weights`` when given, else ``weight``), the rows that borrowed at ``borrowed_weight``."""
    still = list(missing)
    if k > 0 and still:
        vectors, still = borrow_missing(vectors, still, text, k)
    borrowed = sorted(set(missing) - set(still))
    shares: dict[str, dict] = {}
    if row_weights is not None and min_triplets > 0 and triplets:
        if groups is None or len(groups) != len(vectors):
            raise ValueError("triplets that choose a text share need each problem's collection (groups)")
        row_weights, shares = shares_from_triplets(vectors, text, weight, borrowed, borrowed_weight, row_weights, groups, triplets, min_triplets)
    return Filled(join_text(vectors, text, weight, borrowed, borrowed_weight, row_weights), borrowed, still, row_weights, shares)
