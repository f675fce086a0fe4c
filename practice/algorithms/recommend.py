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
- never a problem already solved, never one seen in the last RECENT steps (shown, tried or skipped)
  while another is left; a reason says what happened (solved / partly solved / did not solve / skipped)
  and calls a problem similar only at a positive cosine, which it states;
  only ``eligible`` problems (released, in modules the instructor opened: the caller decides).
Every recommendation carries its reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Sequence, Union

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
    kind: str  # "start", "retry-similar", "new-concept", "similar", "closest", "try-again"
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

    @cached_property
    def incidence(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The concept sets as flat arrays (row of each entry, concept of each entry, size of each row):
        counting every problem's new concepts is one bincount over ~3 entries per problem, so a
        100,000-problem bank is answered in about a millisecond, not a Python loop over sets."""
        sizes = np.fromiter((len(s) for s in self.concepts), dtype=np.int64, count=len(self.concepts))
        rows = np.repeat(np.arange(len(self.concepts)), sizes)
        concepts = np.fromiter((c for s in self.concepts for c in s), dtype=np.int64, count=int(sizes.sum()))
        return rows, concepts, sizes

    @cached_property
    def rows_by_concept(self) -> tuple[np.ndarray, np.ndarray]:
        """The incidence grouped by concept: (starts, rows), the rows holding concept c being
        ``rows[starts[c]:starts[c + 1]]``. Counting how many of a few known concepts each problem holds
        then reads only those concepts' rows, not every entry of the bank."""
        rows, concepts, _ = self.incidence
        order = np.argsort(concepts, kind="stable")
        starts = np.searchsorted(concepts[order], np.arange(int(concepts.max(initial=-1)) + 2))
        return starts, rows[order]


def estimated_success(bank: Bank, attempts: Sequence[Attempt], policy: Policy = Policy(), rows: np.ndarray | None = None) -> np.ndarray:
    """p_j for every problem (n,), or for ``rows`` only, from the latest outcome per attempted problem (skips ignored)."""
    return projected(bank, attempts, policy, rows)[0]


def projected(bank: Bank, attempts: Sequence[Attempt], policy: Policy = Policy(), rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(p_j, evidence_j): the estimated success and the similarity weight behind it, sum_a w_aj
    (0 where the learner attempted nothing similar, so p_j is only the prior 0.5)."""
    latest = _latest(attempts)
    n = len(bank.concepts) if rows is None else len(rows)
    if not latest:
        return np.full(n, 0.5), np.zeros(n)
    attempted = np.fromiter(latest.keys(), dtype=np.int64)
    outcomes = np.fromiter(latest.values(), dtype=np.float64)
    vectors = bank.vectors if rows is None else bank.vectors[rows]
    weights = np.clip(vectors @ bank.vectors[attempted].T, 0.0, None) ** policy.sharpness  # (n, k)
    evidence = weights.sum(1)
    return (0.5 * policy.prior + weights @ outcomes) / (policy.prior + evidence), evidence


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


def _adds(bank: Bank, new: Sequence[int], anchor: int) -> str:
    """"this one adds Y": after a partial solve the anchor's own concepts are not mastered, so a problem
    "new" in them only practises them again; "adds" names only what the anchor did not hold."""
    again = [c for c in new if c in bank.concepts[anchor]]
    added = [c for c in new if c not in bank.concepts[anchor]]
    parts = ([f"practises {_names(bank, again)} again"] if again else []) + ([f"adds {_names(bank, added)}"] if added else [])
    return "this one " + " and ".join(parts)


def _new_counts(bank: Bank, candidates: np.ndarray, known: set[int]) -> np.ndarray:
    """How many concepts outside ``known`` each candidate brings: its concept count less the known
    concepts it holds (read from the known concepts' rows only; 4 ms -> well under 1 ms at 100,000 problems)."""
    sizes = bank.incidence[2]
    starts, rows = bank.rows_by_concept
    held = [rows[starts[c] : starts[c + 1]] for c in known if 0 <= c < len(starts) - 1]
    known_held = np.bincount(np.concatenate(held), minlength=len(sizes)) if held else np.zeros(len(sizes), dtype=np.int64)
    return (sizes - known_held).astype(np.int64)[candidates]


Key = Union[np.ndarray, Callable[[np.ndarray], np.ndarray]]


def _best(candidates: np.ndarray, *keys: Key) -> int:
    """Index (into candidates) of the largest keys, compared in order; ties go to the earliest problem.
    A key may be a function of the still-tied indices, so costly keys are computed for the few ties only."""
    tied = np.arange(len(candidates))
    for key in keys:
        if len(tied) == 1:
            break
        values = np.asarray(key(tied) if callable(key) else key[tied], dtype=np.float64)
        tied = tied[values == values.max()]
    return int(tied[np.argmin(candidates[tied])])


SKIP_MEMORY = 50
RECENT = 5  # a problem shown (or tried) in the last this many steps is not offered again while others are left


def _verb(outcome: float) -> str:
    if outcome >= SOLVED:
        return "solved"
    return "partly solved" if outcome >= 0.5 else "did not solve"


def recently_seen(attempts: Sequence[Attempt], recent: Sequence[int] = (), current: int | None = None, window: int = RECENT) -> list[int]:
    """Rows seen in the last ``window`` steps, most recent first: the problem on screen, the last problems
    shown (``recent``, oldest first: offers the learner moved past without an attempt, e.g. "similar")
    and the last problems attempted or skipped (for callers that keep no history of offers); then every
    problem skipped in the last SKIP_MEMORY attempts, so that skipping on walks through new problems
    instead of cycling through the window."""
    out: list[int] = []
    skipped = [a.problem for a in attempts[-SKIP_MEMORY:] if a.skipped][::-1]
    for row in [*([current] if current is not None else []), *list(recent)[::-1][:window], *[a.problem for a in attempts][::-1][:window], *skipped]:
        if row not in out:
            out.append(int(row))
    return out


def recommend(
    bank: Bank,
    attempts: Sequence[Attempt],
    eligible: np.ndarray,
    *,
    mode: str = "next",  # "next", or "similar": the most similar problem to the one shown
    current: int | None = None,
    recent: Sequence[int] = (),
    policy: Policy = Policy(),
    window: int = RECENT,
) -> Recommendation | None:
    """The next problem (None when nothing eligible is left).

    Never a solved problem, and never one seen in the last ``window`` steps (``recently_seen``) while
    another open problem is left: then the least recently seen is allowed back first, and the problem
    just seen last of all. ``similarity`` is always the cosine between the chosen problem and the one
    the reason names; a reason calls a problem similar only when that cosine is positive."""
    eligible = np.asarray(eligible, dtype=bool)
    open_ = eligible.copy()
    solved = [row for row, outcome in _latest(attempts).items() if outcome >= SOLVED]
    open_[solved] = False
    # "Similar" again and again walks on through new problems: every offer the caller remembers counts.
    seen = recently_seen(attempts, recent, current, max(window, len(recent)) if mode == "similar" else window)
    allowed = open_.copy()
    for keep in range(len(seen), 0, -1):  # exclude the `keep` most recent; relax from the oldest
        allowed = open_.copy()
        allowed[seen[:keep]] = False
        if allowed.any():
            break
    if not allowed.any():
        # Only the problem just seen is left unsolved: offer it again rather than nothing.
        again = seen[0] if seen else None
        if again is None or not open_[again] or (mode == "similar" and again == current):
            return None
        return Recommendation(
            again, "try-again", f"“{bank.titles[again]}” is the last open problem you have not solved: try it again.",
            again, estimated_success=float(estimated_success(bank, attempts, policy, rows=np.array([again]))[0]),
        )
    mastery = concept_mastery(bank, attempts)
    mastered = {c for c, m in mastery.items() if m >= policy.mastery_level}
    candidates = np.flatnonzero(allowed)
    last = attempts[-1] if attempts else None
    tried = next((a for a in reversed(attempts) if not a.skipped), None)
    skipped = f"You skipped “{bank.titles[last.problem]}”. " if last is not None and last.skipped and mode != "similar" else ""

    anchor = current if mode == "similar" and current is not None else (tried.problem if tried else None)
    if anchor is None:
        # A first problem: the fewest concepts, earliest in the bank's order; one with no concepts only
        # when no other is open (a book imported without labels or rule matches has many: solving one
        # would tell nothing about any concept, and nothing near it to go on to).
        sizes = bank.incidence[2][candidates]
        best = int(candidates[np.lexsort((candidates, sizes, sizes == 0))[0]])
        return Recommendation(best, "start", f"{skipped}A first problem to see where you stand.", estimated_success=0.5)
    title = bank.titles[anchor]
    anchor_vector = bank.vectors[anchor]

    def sims(tied: np.ndarray) -> np.ndarray:
        """Cosines between the anchor and ``candidates[tied]``. A key, so it is computed only for the
        candidates still tied after the cheaper keys before it (the concept counts), not for the whole bank:
        at 100,000 problems the full product reads ~110 MB of vectors, most of a request's time."""
        rows = candidates[tied]
        if 4 * len(rows) > len(bank.vectors):  # most of the bank: one pass over it beats copying the rows out
            return (bank.vectors @ anchor_vector)[rows]
        return bank.vectors[rows] @ anchor_vector

    def positive(tied: np.ndarray) -> np.ndarray:
        return sims(tied) > 0

    def success(tied: np.ndarray) -> np.ndarray:
        return estimated_success(bank, attempts, policy, rows=candidates[tied])

    def chosen(k: int, known: set[int]) -> tuple[int, list[int], float, float]:
        j = int(candidates[k])
        return j, sorted(bank.concepts[j] - known), float(sims(np.array([k]))[0]), float(success(np.array([k]))[0])

    def practises(j: int) -> str:
        return f"this one practises {_names(bank, bank.concepts[j])}" if bank.concepts[j] else "this one is a different problem"

    if mode == "similar":
        j, new, sim, p = chosen(_best(candidates, sims, success), mastered | bank.concepts[anchor])
        if sim > 0:
            return Recommendation(j, "similar", f"Similar to “{title}” (similarity {sim:.2f}).", anchor, new, sim, p)
        return Recommendation(j, "closest", f"No problem you have not just seen is similar to “{title}”; {practises(j)}.", anchor, new, sim, p)

    verb = _verb(tried.outcome)
    if tried.outcome < 0.5:
        known = mastered | bank.concepts[anchor]
        new_counts = _new_counts(bank, candidates, known)
        # The same mixture at a positive cosine first; then the fewest concepts beyond it (the load a
        # retry adds), at a positive cosine before any other, the most similar first.
        same_mixture = new_counts == 0

        def same_mixture_close(tied: np.ndarray) -> np.ndarray:
            out = np.zeros(len(tied), dtype=bool)
            out[same_mixture[tied]] = positive(tied[same_mixture[tied]])
            return out

        j, new, sim, p = chosen(_best(candidates, same_mixture_close, -new_counts, positive, sims, success), known)
        extra = f" It also brings {_names(bank, new)}." if new else ""
        if sim > 0:
            reason = f"{skipped}You {verb} “{title}”; this one practises the same ideas (similarity {sim:.2f}).{extra}"
            return Recommendation(j, "retry-similar", reason, anchor, new, sim, p)
        reason = f"{skipped}You {verb} “{title}” and no open problem is close to it; {practises(j)}."
        return Recommendation(j, "closest", reason, anchor, new, sim, p)

    counts = _new_counts(bank, candidates, mastered)
    one_new = counts == 1
    if one_new.any():
        j, new, sim, p = chosen(_best(candidates, one_new, sims, success), mastered)
        return Recommendation(j, "new-concept", f"{skipped}You {verb} “{title}”; {_adds(bank, new, anchor)}.", anchor, new, sim, p)
    # No single new concept left: the fewest new ones (practice of known ones last), most similar first.
    j, new, sim, p = chosen(_best(candidates, counts > 0, -counts, sims), mastered)
    if new:
        reason = f"{skipped}You {verb} “{title}”; {_adds(bank, new, anchor)}."
    elif sim > 0:
        reason = f"{skipped}You {verb} “{title}”; this one practises concepts you have met (similarity {sim:.2f})."
    else:
        reason = f"{skipped}You {verb} “{title}”; {practises(j)}, concepts you have met."
    return Recommendation(j, "closest", reason, anchor, new, sim, p)
