"""The simulated-learner benchmark's core (benchmarks/simulate_learners.py) on a tiny hand-built bank."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.simulate_learners import (
    POLICIES,
    SUMMARY_KEYS,
    Learner,
    LearnerModel,
    SimBank,
    choose_book,
    run_learner,
    simulate,
    summarize,
)
from practice.algorithms.recommend import Attempt, Bank

# Concepts: 0 counting, 1 binomial, 2 conditional, 3 Bayes. Rows in "book order".
NAMES = ["counting", "binomial", "conditional", "Bayes"]
SETS = [{0}, {0}, {0, 1}, {1}, {0, 1}, {2}, {2}, {2, 3}, {3}, {0, 2, 3}]
DIRECTIONS = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.2, 0.98], [0.0, 0.7, 0.7]])  # a made-up vector per concept


def tiny_sim(eligible: np.ndarray | None = None) -> SimBank:
    vectors = np.array([DIRECTIONS[sorted(s)].mean(0) for s in SETS])
    vectors += 0.05 * np.arange(len(SETS))[:, None] / len(SETS)  # problems with the same concepts differ a little
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    bank = Bank(vectors, [frozenset(s) for s in SETS], [f"P{i}" for i in range(len(SETS))], NAMES)
    eligible = np.ones(len(SETS), dtype=bool) if eligible is None else eligible
    target = np.zeros(len(NAMES), dtype=bool)
    for j in np.flatnonzero(eligible):
        target[list(SETS[j])] = True
    return SimBank(bank, eligible, target)


SIM = tiny_sim()
MODEL = LearnerModel()  # the benchmark's defaults


@pytest.mark.parametrize("policy", list(POLICIES))
def test_a_seed_fixes_the_whole_run(policy: str) -> None:
    a = run_learner(SIM, POLICIES[policy], seed=3, learner=1, model=MODEL, max_attempts=60)
    b = run_learner(SIM, POLICIES[policy], seed=3, learner=1, model=MODEL, max_attempts=60)
    assert (a.problems, a.outcomes, a.p_solve, a.stopped) == (b.problems, b.outcomes, b.p_solve, b.stopped)
    first = simulate(SIM, 6, 3, 60, MODEL, policies=[policy], checkpoint=5)[0]
    again = simulate(SIM, 6, 3, 60, MODEL, policies=[policy], checkpoint=5)[0]
    first.pop("seconds"), again.pop("seconds")
    assert first == again
    others = [run_learner(SIM, POLICIES[policy], seed=s, learner=1, model=MODEL, max_attempts=60) for s in range(4, 10)]
    assert any((o.problems, o.outcomes) != (a.problems, a.outcomes) for o in others)


def test_the_same_learner_under_every_policy() -> None:
    starts = {name: run_learner(SIM, fn, seed=0, learner=2, model=MODEL, record=True).skills[0] for name, fn in POLICIES.items()}
    assert all(np.array_equal(s, starts["random"]) for s in starts.values())


@pytest.mark.parametrize("policy", list(POLICIES))
def test_hidden_mastery_only_rises_with_practice(policy: str) -> None:
    for learner in range(5):
        run = run_learner(SIM, POLICIES[policy], seed=1, learner=learner, model=MODEL, max_attempts=80, record=True)
        assert len(run.skills) == run.attempts + 1
        for before, after, j in zip(run.skills, run.skills[1:], run.problems):
            assert (after >= before).all() and (after <= 1.0).all()
            moved = set(np.flatnonzero(after > before))
            assert moved <= SETS[j]  # only the practised problem's concepts change


def test_learning_is_faster_on_success_and_on_problems_with_fewer_new_concepts() -> None:
    def gain(concepts: frozenset[int], solved: bool) -> float:
        person = Learner(np.full(4, 0.3), 1.0, MODEL)
        person.practise(concepts, solved)
        return float(person.skill[0] - 0.3)

    assert gain(frozenset({0}), True) > gain(frozenset({0}), False) > 0
    assert gain(frozenset({0}), True) > gain(frozenset({0, 1, 2}), True) > 0
    person = Learner(np.array([0.5, 0.5, 1.0, 1.0]), 1.0, MODEL)
    assert person.p_solve(frozenset({0, 1})) == pytest.approx(MODEL.guess + (1 - MODEL.slip - MODEL.guess) * 0.25)
    assert person.p_solve(frozenset({2, 3})) == pytest.approx(1 - MODEL.slip)


@pytest.mark.parametrize("policy", list(POLICIES))
def test_no_policy_gives_a_solved_problem_or_an_ineligible_one(policy: str) -> None:
    eligible = np.ones(len(SETS), dtype=bool)
    eligible[[4, 9]] = False
    sim = tiny_sim(eligible)
    hard = LearnerModel(gain_success=0.2, gain_failure=0.05)  # slow learners: long runs that use up the bank
    for learner in range(8):
        run = run_learner(sim, POLICIES[policy], seed=2, learner=learner, model=hard, max_attempts=200)
        solved: set[int] = set()
        for j, ok in zip(run.problems, run.outcomes):
            assert j not in solved and eligible[j]
            if ok:
                solved.add(j)
        if run.stopped == "out of problems" and policy != "recommend":
            assert solved == set(np.flatnonzero(eligible).tolist())


def test_the_book_retries_a_failure_once_then_moves_on_and_wraps_around() -> None:
    rng = np.random.default_rng(0)
    assert choose_book(SIM, [], rng) == 0
    assert choose_book(SIM, [Attempt(0, 1.0)], rng) == 1
    assert choose_book(SIM, [Attempt(0, 1.0), Attempt(1, 0.0)], rng) == 1  # once more
    assert choose_book(SIM, [Attempt(0, 1.0), Attempt(1, 0.0), Attempt(1, 0.0)], rng) == 2  # then on
    solved_but_1 = [Attempt(j, 1.0) for j in range(len(SETS)) if j != 1]
    assert choose_book(SIM, [Attempt(1, 0.0)] + solved_but_1, rng) == 1  # the next pass
    assert choose_book(SIM, [Attempt(j, 1.0) for j in range(len(SETS))], rng) is None


@pytest.mark.parametrize("policy", list(POLICIES))
def test_a_learner_already_at_mastery_needs_no_attempt(policy: str) -> None:
    expert = LearnerModel(init_low=0.95, init_high=0.99)
    run = run_learner(SIM, POLICIES[policy], seed=0, learner=0, model=expert, checkpoint=3)
    assert run.attempts_to_mastery == 0 and run.problems == [] and run.stopped == "mastered"
    assert run.share_at_checkpoint == 1.0


def test_the_figures_have_the_documented_keys_and_censor_at_the_cap() -> None:
    results = simulate(SIM, 5, 0, 40, MODEL, checkpoint=4)
    assert [r["policy"] for r in results] == list(POLICIES)
    for r in results:
        assert set(r) == set(SUMMARY_KEYS) | {"seconds"}
        assert r["learners"] == 5 and r["mastered"] + r["not_mastered"] == 5
        assert r["q1"] <= r["median"] <= r["q3"] <= 40
        assert 0 <= r["success_rate"] <= 1 and 0 <= r["frustrating_share"] <= 1
        assert 0 <= r["mastered_share_at_checkpoint"] <= 1 and r["checkpoint"] == 4
    slow = LearnerModel(gain_success=0.01, gain_failure=0.0)
    runs = [run_learner(SIM, POLICIES["random"], 0, i, slow, max_attempts=7) for i in range(3)]
    figures = summarize("random", runs, 7)
    assert figures["not_mastered"] == 3 and figures["median"] == 7 and figures["mean"] == 7 and figures["mean_mastered"] is None
