"""The recommender's policy on a hand-built bank whose similarities are known."""

from __future__ import annotations

import numpy as np

from embeddings.algorithms.recommend import Attempt, Bank, concept_mastery, estimated_success, recommend

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
