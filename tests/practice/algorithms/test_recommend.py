"""The recommender's policy on a hand-built bank whose similarities are known."""

from __future__ import annotations

import numpy as np
import pytest

from practice.algorithms.recommend import Attempt, Bank, concept_mastery, estimated_success, recommend

# Concepts: 0 counting, 1 binomial, 2 Bayes, 3 conditional, 4 normal.
NAMES = ["counting", "binomial", "Bayes", "conditional", "normal"]
SETS = [
    {0},        # 0 counting
    {0},        # 1 counting again, a little different
    {0, 1},     # 2 counting + binomial
    {0, 1, 4},  # 3 counting + binomial + normal: two new after counting
    {2, 3},     # 4 Bayes + conditional
    {3},        # 5 conditional
    {0, 2},     # 6 counting + Bayes
]
VECTORS = np.array([
    [1.0, 0.0, 0.0],
    [0.95, 0.31, 0.0],
    [0.8, 0.6, 0.0],
    [0.6, 0.6, 0.53],
    [0.0, 0.2, 0.98],
    [0.0, 0.0, 1.0],
    [0.6, 0.0, 0.8],
])
VECTORS = VECTORS / np.linalg.norm(VECTORS, axis=1, keepdims=True)
BANK = Bank(VECTORS, [frozenset(s) for s in SETS], [f"P{i}" for i in range(7)], NAMES)
ALL = np.ones(7, dtype=bool)


def test_a_first_problem_has_the_fewest_concepts() -> None:
    rec = recommend(BANK, [], ALL)
    assert rec.problem == 0 and rec.kind == "start"


def test_a_first_problem_has_concepts_while_one_with_concepts_is_open() -> None:
    """A bank with an imported book nobody has labelled holds many problems without concepts: a first
    problem among them would tell nothing about any concept."""
    bank = Bank(np.vstack([np.zeros((1, 3)), VECTORS]), [frozenset()] + [frozenset(s) for s in SETS], ["Bare"] + BANK.titles, NAMES)
    assert recommend(bank, [], np.ones(8, dtype=bool)).problem == 1  # P0, counting alone
    only_bare = np.zeros(8, dtype=bool)
    only_bare[0] = True
    assert recommend(bank, [], only_bare).problem == 0  # nothing else open: still a first problem


def test_after_a_failure_a_similar_problem_with_no_new_concept() -> None:
    rec = recommend(BANK, [Attempt(2, 0.0)], ALL)
    assert rec.kind == "retry-similar" and rec.problem in (0, 1)  # only counting/binomial, most similar to P2
    assert rec.problem == 1 and rec.new_concepts == [] and "You did not solve “P2”" in rec.reason


def test_after_a_success_one_new_concept_and_the_reason_names_it() -> None:
    rec = recommend(BANK, [Attempt(0, 1.0)], ALL)
    assert rec.kind == "new-concept" and rec.problem == 2  # counting mastered + binomial new
    assert rec.new_concepts == [1] and rec.reason == "You solved “P0”; this adds binomial.".replace("this adds", "this one adds")


def test_never_a_solved_problem_and_only_eligible_ones() -> None:
    attempts = [Attempt(0, 1.0), Attempt(2, 1.0), Attempt(1, 1.0)]
    eligible = ALL.copy()
    eligible[3] = False
    for _ in range(3):
        rec = recommend(BANK, attempts, eligible)
        assert rec.problem not in (0, 1, 2, 3)
    assert recommend(BANK, attempts, np.array([1, 1, 1, 0, 0, 0, 0], dtype=bool)) is None
    # The last unsolved problem comes back after a miss or a skip, rather than nothing.
    only_p3 = np.array([1, 1, 1, 1, 0, 0, 0], dtype=bool)
    again = recommend(BANK, attempts + [Attempt(3, 0.0)], only_p3)
    assert again.problem == 3 and again.kind == "try-again" and "last open problem" in again.reason
    assert recommend(BANK, attempts + [Attempt(3, 0.0, skipped=True)], only_p3).problem == 3
    assert recommend(BANK, attempts + [Attempt(3, 1.0)], only_p3) is None
    assert recommend(BANK, attempts + [Attempt(3, 0.0)], only_p3, mode="similar", current=3) is None


def test_skips_and_the_similar_button() -> None:
    skipped = recommend(BANK, [Attempt(0, 1.0), Attempt(2, 0.0, skipped=True)], ALL)
    assert skipped.problem != 2
    similar = recommend(BANK, [Attempt(0, 1.0)], ALL, mode="similar", current=5)
    assert similar.problem == 4 and similar.kind == "similar"


def test_success_is_projected_through_similarity() -> None:
    p = estimated_success(BANK, [Attempt(0, 1.0), Attempt(5, 0.0)])
    w = float(VECTORS[1] @ VECTORS[0]) ** 4  # P1 is like P0 (solved), unlike P5 (failed, cosine 0)
    assert abs(p[1] - (0.5 + w) / (1 + w)) < 1e-9
    assert p[1] > 0.5 > p[6] > p[4]  # P6 leans towards the failed P5
    assert estimated_success(BANK, []).tolist() == [0.5] * 7
    mastery = concept_mastery(BANK, [Attempt(2, 1.0), Attempt(0, 0.0)])
    assert mastery.keys() == {0, 1} and abs(mastery[0] - 0.3) < 1e-9 and mastery[1] == 1.0
    assert concept_mastery(BANK, [Attempt(0, 0.0), Attempt(1, 1.0)])[0] >= 0.7  # a success after a failure masters it


def reference_choice(bank: Bank, attempts: list[Attempt], eligible: np.ndarray) -> int | None:
    """The policy written as the plain loop over candidates it is specified as (slow, obviously right)."""
    latest = {a.problem: a.outcome for a in attempts if not a.skipped}
    open_ = [j for j in range(len(eligible)) if eligible[j] and latest.get(j, 0.0) < 0.999]
    seen: list[int] = []
    for row in [a.problem for a in reversed(attempts[-5:])] + [a.problem for a in reversed(attempts) if a.skipped]:
        if row not in seen:
            seen.append(row)
    candidates: list[int] = []
    for keep in range(len(seen), 0, -1):  # the most recent `keep` are excluded; relaxed oldest first
        candidates = [j for j in open_ if j not in seen[:keep]]
        if candidates:
            break
    else:
        candidates = open_ if not seen else []
    if not candidates:
        again = seen[0] if seen else None
        return again if again is not None and again in open_ else None
    success = estimated_success(bank, attempts)
    mastered = {c for c, m in concept_mastery(bank, attempts).items() if m >= 0.7}
    last = next((a for a in reversed(attempts) if not a.skipped), None)
    if last is None:
        return min(candidates, key=lambda j: (len(bank.concepts[j]), j))
    sim = {j: float(bank.vectors[j] @ bank.vectors[last.problem]) for j in candidates}
    if last.outcome < 0.5:
        known = mastered | bank.concepts[last.problem]
        extra = {j: len(bank.concepts[j] - known) for j in candidates}
        return max(candidates, key=lambda j: (sim[j] > 0 and extra[j] == 0, -extra[j], sim[j] > 0, sim[j], success[j], -j))
    new = {j: len(bank.concepts[j] - mastered) for j in candidates}
    one = [j for j in candidates if new[j] == 1]
    if one:
        return max(one, key=lambda j: (sim[j], success[j], -j))
    return min(candidates, key=lambda j: (new[j] == 0, new[j], -sim[j], j))


def test_the_vectorised_policy_matches_the_plain_loop_on_random_banks() -> None:
    rng = np.random.default_rng(7)
    for trial in range(200):
        n, n_concepts = int(rng.integers(3, 40)), int(rng.integers(2, 8))
        vectors = rng.normal(size=(n, 4))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        sets = [frozenset(int(c) for c in rng.choice(n_concepts, size=int(rng.integers(1, 4)), replace=True)) for _ in range(n)]
        bank = Bank(vectors, sets, [f"P{i}" for i in range(n)], [f"c{c}" for c in range(n_concepts)])
        eligible = rng.random(n) < 0.8
        attempts = [Attempt(int(rng.integers(n)), float(rng.choice([0.0, 0.5, 1.0])), skipped=bool(rng.random() < 0.1)) for _ in range(int(rng.integers(0, 6)))]
        rec = recommend(bank, attempts, eligible)
        expected = reference_choice(bank, attempts, eligible)
        assert (rec.problem if rec else None) == expected, trial


def test_new_concept_counts_match_the_sets_on_random_banks() -> None:
    """_new_counts reads only the known concepts' rows; it must equal |concepts - known| problem by problem."""
    from practice.algorithms.recommend import _new_counts

    rng = np.random.default_rng(1)
    for _ in range(200):
        n, c = int(rng.integers(1, 300)), int(rng.integers(1, 20))
        concepts = [frozenset(rng.choice(c, size=int(rng.integers(0, min(c, 4) + 1)), replace=False).tolist()) for _ in range(n)]
        bank = Bank(np.zeros((n, 2), np.float32), concepts, [""] * n, [""] * c)
        known = set(rng.choice(c + 3, size=int(rng.integers(0, c + 1))).tolist())  # may name concepts no problem has
        candidates = np.flatnonzero(rng.random(n) < 0.7)
        got = _new_counts(bank, candidates, known)
        assert got.dtype == np.int64
        assert got.tolist() == [len(concepts[i] - known) for i in candidates]


class CountingVectors(np.ndarray):
    """Vectors that count the rows every matrix product reads (a view of a plain array)."""

    rows_read: list[int]

    def __matmul__(self, other: np.ndarray) -> np.ndarray:
        CountingVectors.rows_read.append(len(self) if self.ndim == 2 else 1)
        return np.asarray(self) @ np.asarray(other)


def big_bank(n: int = 4000, n_concepts: int = 60, seed: int = 3) -> tuple[Bank, np.ndarray]:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, 8))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    sets = [frozenset(int(c) for c in rng.choice(n_concepts, size=int(rng.integers(1, 4)), replace=False)) for _ in range(n)]
    CountingVectors.rows_read = []
    return Bank(vectors.view(CountingVectors), sets, [f"P{i}" for i in range(n)], [f"c{c}" for c in range(n_concepts)]), rng.random(n) < 0.7


def test_cosines_are_taken_only_for_the_candidates_the_concept_counts_leave() -> None:
    """After a failure the same mixture of concepts comes first, after a success one new concept: the
    cosines to the anchor are needed for those candidates only, so the recommender never reads the
    whole bank's vectors for them (at 100,000 problems that product was most of a request)."""
    bank, eligible = big_bank()
    for attempts in ([Attempt(10, 0.0)], [Attempt(10, 1.0)], [Attempt(10, 1.0), Attempt(11, 0.0), Attempt(12, 0.5)]):
        CountingVectors.rows_read = []
        rec = recommend(bank, attempts, eligible)
        plain = Bank(np.asarray(bank.vectors), bank.concepts, bank.titles, bank.concept_names)
        assert rec is not None and rec.problem == reference_choice(plain, attempts, eligible)
        assert rec.similarity == pytest.approx(float(np.asarray(bank.vectors)[rec.problem] @ np.asarray(bank.vectors)[attempts[-1].problem]))
        assert max(CountingVectors.rows_read) < len(bank.concepts) / 4, CountingVectors.rows_read


def test_the_lazy_cosines_choose_as_the_plain_loop_on_larger_banks() -> None:
    """The policy over banks of a few thousand problems and long histories, against the plain loop."""
    rng = np.random.default_rng(11)
    for trial in range(30):
        bank, eligible = big_bank(int(rng.integers(200, 3000)), int(rng.integers(5, 80)), seed=trial)
        plain = Bank(np.asarray(bank.vectors), bank.concepts, bank.titles, bank.concept_names)
        n = len(plain.concepts)
        attempts = [Attempt(int(rng.integers(n)), float(rng.choice([0.0, 0.5, 1.0])), skipped=bool(rng.random() < 0.1)) for _ in range(int(rng.integers(1, 40)))]
        rec = recommend(bank, attempts, eligible)
        assert (rec.problem if rec else None) == reference_choice(plain, attempts, eligible), trial


def test_after_a_partial_solve_its_own_concepts_are_practised_again_not_added() -> None:
    """A partly solved problem's concepts are not mastered (0.5), so the next problem may hold them: the
    reason says it practises them again, and "adds" only concepts the partly solved problem did not hold."""
    rec = recommend(BANK, [Attempt(0, 0.5)], ALL)
    assert rec.problem == 1 and rec.new_concepts == [0]
    assert rec.reason == "You partly solved “P0”; this one practises counting again."
    # Counting partly solved, then P2 partly solved: P3 holds both again and brings normal.
    rec = recommend(BANK, [Attempt(0, 0.5), Attempt(2, 0.5)], np.array([0, 0, 0, 1, 0, 0, 0], dtype=bool) | np.eye(7, dtype=bool)[2])
    assert rec.problem == 3
    assert rec.reason == "You partly solved “P2”; this one practises binomial, counting again and adds normal."
