"""The next problem for a learner, projected from their attempts through problem similarity. Pure: numpy.

Why the paper exists: performance on one problem says something about every similar problem. For a
learner with attempts (problem a, outcome y_a in [0, 1]) the estimated success on problem j is a
similarity-weighted average, shrunk towards 0.5 where the learner has done nothing similar:

    p_j = (0.5 * prior + sum_a w_aj y_a) / (prior + sum_a w_aj),   w_aj = max(0, cos(a, j)) ** sharpness

Concept mastery is a recency-weighted mean of the learner's outcomes on problems with that concept;
a concept is mastered at >= ``mastery_level``.

Policy (concept continuity):
- after a failure: the problem most similar to the failed one that brings no concept beyond the
  failed problem's and the mastered ones (practise the same mixture again);
- after a success: a problem that mixes mastered concepts with exactly one new concept, the most
  similar to the solved one (then by estimated success); if none, the fewest new concepts;
- never a problem already solved, never the one just shown; only ``eligible`` problems (released,
  in modules the instructor opened: the caller decides).
Every recommendation carries its reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

SOLVED = 0.999  # an outcome at least this high counts as solved


@dataclass(frozen=True)
class Attempt:
    problem: int  # row in the bank arrays
    outcome: float  # 1 solved, 0.5 partly, 0 not solved
    skipped: bool = False


@dataclass(frozen=True)
class Policy:
    sharpness: float = 4.0
    prior: float = 1.0
    mastery_level: float = 0.7


@dataclass
class Recommendation:
    problem: int
    kind: str  # "start", "retry-similar", "new-concept", "similar", "closest"
    reason: str
    because_of: int | None = None  # the attempt's problem the choice builds on
    new_concepts: list[int] = field(default_factory=list)
    similarity: float | None = None
    estimated_success: float | None = None


@dataclass(frozen=True)
class Bank:
    """What the recommender reads about the bank: unit problem vectors and concept sets (same rows)."""

    vectors: np.ndarray  # (n, dim), rows normalised; zero rows have no vector
    concepts: Sequence[frozenset[int]]
    titles: Sequence[str]
    concept_names: Sequence[str]


def estimated_success(bank: Bank, attempts: Sequence[Attempt], policy: Policy = Policy()) -> np.ndarray:
    """p_j for every problem (n,), from the latest outcome per attempted problem (skips ignored)."""
    latest = _latest(attempts)
    n = len(bank.concepts)
    if not latest:
        return np.full(n, 0.5)
    rows = np.fromiter(latest.keys(), dtype=np.int64)
    outcomes = np.fromiter(latest.values(), dtype=np.float64)
    weights = np.clip(bank.vectors @ bank.vectors[rows].T, 0.0, None) ** policy.sharpness  # (n, k)
    return (0.5 * policy.prior + weights @ outcomes) / (policy.prior + weights.sum(1))


def concept_mastery(bank: Bank, attempts: Sequence[Attempt], recency: float = 0.7) -> dict[int, float]:
    """Per concept, an exponentially weighted mean of outcomes on problems with it, newest weighing
    ``recency``: one success after a failure masters a concept, one failure after a success does not keep it."""
    mastery: dict[int, float] = {}
    for a in attempts:
        if a.skipped:
            continue
        for c in bank.concepts[a.problem]:
            mastery[c] = a.outcome if c not in mastery else mastery[c] + recency * (a.outcome - mastery[c])
    return mastery


def _latest(attempts: Sequence[Attempt]) -> dict[int, float]:
    out: dict[int, float] = {}
    for a in attempts:
        if not a.skipped:
            out[a.problem] = a.outcome
    return out


def _names(bank: Bank, concepts: Sequence[int]) -> str:
    return ", ".join(sorted(bank.concept_names[c] for c in concepts))


def recommend(
    bank: Bank,
    attempts: Sequence[Attempt],
    eligible: np.ndarray,
    *,
    mode: str = "next",  # "next", or "similar": the most similar problem to the last one shown
    current: int | None = None,
    policy: Policy = Policy(),
) -> Recommendation | None:
    """The next problem (None when nothing eligible is left)."""
    allowed = np.asarray(eligible, dtype=bool).copy()
    solved = {row for row, outcome in _latest(attempts).items() if outcome >= SOLVED}
    allowed[list(solved)] = False
    last = next((a for a in reversed(attempts) if not a.skipped), None)
    for a in attempts[-1:]:
        allowed[a.problem] = False  # never the problem just attempted or skipped
    if current is not None:
        allowed[current] = False
    if not allowed.any():
        return None
    success = estimated_success(bank, attempts, policy)
    mastery = concept_mastery(bank, attempts)
    mastered = {c for c, m in mastery.items() if m >= policy.mastery_level}
    candidates = np.flatnonzero(allowed)

    anchor = current if mode == "similar" and current is not None else (last.problem if last else None)
    if anchor is None:
        # A first problem: the fewest concepts, earliest in the bank's order.
        best = min(candidates, key=lambda j: (len(bank.concepts[j]), j))
        return Recommendation(int(best), "start", "A first problem to see where you stand.", estimated_success=float(success[best]))
    sims = bank.vectors[candidates] @ bank.vectors[anchor]
    new = [sorted(bank.concepts[j] - mastered - (bank.concepts[anchor] if mode == "similar" or last.outcome < 0.5 else set())) for j in candidates]
    title = bank.titles[anchor]

    if mode == "similar":
        order = np.lexsort((-success[candidates], -sims))
        k = order[0]
        j = int(candidates[k])
        return Recommendation(j, "similar", f"Similar to “{title}” (similarity {sims[k]:.2f}).", anchor, new[k], float(sims[k]), float(success[j]))

    if last.outcome < 0.5:
        same_mixture = [k for k in range(len(candidates)) if not new[k]]
        pool = same_mixture or list(range(len(candidates)))
        k = max(pool, key=lambda k: (sims[k], success[candidates[k]], -candidates[k]))
        j = int(candidates[k])
        extra = "" if same_mixture else f" It also brings {_names(bank, new[k])}."
        return Recommendation(
            j, "retry-similar",
            f"You did not solve “{title}”; this one practises the same ideas (similarity {sims[k]:.2f}).{extra}",
            anchor, new[k], float(sims[k]), float(success[j]),
        )

    one_new = [k for k in range(len(candidates)) if len(new[k]) == 1]
    if one_new:
        k = max(one_new, key=lambda k: (sims[k], success[candidates[k]], -candidates[k]))
        j = int(candidates[k])
        return Recommendation(
            j, "new-concept", f"You solved “{title}”; this one adds {_names(bank, new[k])}.", anchor, new[k], float(sims[k]), float(success[j])
        )
    k = min(range(len(candidates)), key=lambda k: (len(new[k]) == 0, len(new[k]), -sims[k], candidates[k]))
    j = int(candidates[k])
    if new[k]:
        reason = f"You solved “{title}”; this one adds {_names(bank, new[k])}."
    else:
        reason = f"You solved “{title}”; this one practises concepts you have met (similarity {sims[k]:.2f})."
    return Recommendation(j, "closest", reason, anchor, new[k], float(sims[k]), float(success[j]))
