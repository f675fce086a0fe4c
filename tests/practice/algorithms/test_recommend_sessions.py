"""Property tests of the recommender over the demo bank: random practice sessions as the practice page
drives them (the offers it has shown are passed back as ``recent``), checked step by step."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from benchmarks.simulate_learners import demo_sim_bank
from practice.algorithms.recommend import RECENT, SOLVED, Attempt, Bank, recommend
from problems.demo_course import read_tsv

SESSIONS, STEPS = 50, 30
ACTIONS = ["solved", "partly", "not_solved", "skip", "similar"]
OUTCOME = {"solved": 1.0, "partly": 0.5, "not_solved": 0.0}
VERB = {1.0: "You solved", 0.5: "You partly solved", 0.0: "You did not solve"}
SLUGS: list[str] = []
STATED = re.compile(r"\(similarity (-?\d+\.\d\d)\)")


@pytest.fixture(scope="module")
def demo() -> tuple[Bank, dict[int, np.ndarray]]:
    sim, _ = demo_sim_bank(modules=12)
    names = {r["slug"]: r["name"] for r in read_tsv("concepts.tsv")}
    SLUGS[:] = sim.bank.concept_names
    bank = replace(sim.bank, concept_names=[names.get(s, s) for s in sim.bank.concept_names])
    # Small course (1 module open: few problems, so sessions run out and must relax), and a big one.
    return bank, {modules: sim.module <= modules for modules in (1, 4, 12)}


def _run_session(bank: Bank, eligible: np.ndarray, rng: np.random.Generator) -> None:
    attempts: list[Attempt] = []
    shown: list[int] = []
    rec = recommend(bank, attempts, eligible)
    last_action = None
    for step in range(STEPS):
        if rec is None:
            solved = {a.problem for a in attempts if not a.skipped and a.outcome >= SOLVED}
            assert set(np.flatnonzero(eligible)) <= solved, "None while an open problem is unsolved"
            return
        j = rec.problem
        assert eligible[j], "an ineligible problem"
        assert not any(a.problem == j and not a.skipped and a.outcome >= SOLVED for a in attempts), "a solved problem again"
        window = shown[-RECENT:]
        if j in window:  # allowed only when every other open problem is in the window too
            solved = {a.problem for a in attempts if not a.skipped and a.outcome >= SOLVED}
            others = set(np.flatnonzero(eligible)) - solved - set(window)
            assert not others, f"step {step}: {j} repeated within {RECENT} steps while {len(others)} others are open"
        # The stated similarity is the cosine to the problem the reason names, positive when called similar.
        if rec.because_of is not None and rec.kind != "try-again":
            cosine = float(bank.vectors[j] @ bank.vectors[rec.because_of])
            assert rec.similarity == pytest.approx(cosine, abs=1e-9)
            assert f"“{bank.titles[rec.because_of]}”" in rec.reason
        for stated in STATED.findall(rec.reason):
            assert stated == f"{rec.similarity:.2f}", rec.reason
        if rec.kind in ("similar", "retry-similar") or "same ideas" in rec.reason or rec.reason.startswith("Similar"):
            assert rec.similarity is not None and rec.similarity > 0, rec.reason
        # The reason says what happened.
        if last_action == "skip":
            assert rec.reason.startswith(f"You skipped “{bank.titles[attempts[-1].problem]}”") or rec.kind == "try-again", rec.reason
        elif last_action in OUTCOME and rec.kind != "try-again":
            assert VERB[OUTCOME[last_action]] + " “" in rec.reason, (last_action, rec.reason)
        elif last_action == "similar" and rec.kind != "try-again":
            assert rec.reason.startswith("Similar to") or rec.reason.startswith("No problem you have not just seen"), rec.reason
        for c in rec.new_concepts if ("adds" in rec.reason or "brings" in rec.reason) else []:  # names, never slugs
            assert bank.concept_names[c] in rec.reason
            assert SLUGS[c] == bank.concept_names[c] or f" {SLUGS[c]}." not in rec.reason, rec.reason
        shown.append(j)
        action = ACTIONS[int(rng.integers(len(ACTIONS)))]
        last_action = action
        if action == "similar":
            rec = recommend(bank, attempts, eligible, mode="similar", current=j, recent=shown[:-1]) or recommend(
                bank, attempts, eligible, recent=shown
            )
            continue
        attempts.append(Attempt(j, OUTCOME.get(action, 0.0), skipped=action == "skip"))
        rec = recommend(bank, attempts, eligible, recent=shown)


def test_random_sessions_never_loop_and_state_true_similarities(demo: tuple[Bank, dict[int, np.ndarray]]) -> None:
    bank, eligible = demo
    rng = np.random.default_rng(16)
    for session in range(SESSIONS):
        modules = (1, 4, 12)[session % 3]
        _run_session(bank, eligible[modules], rng)


def test_reasons_name_concepts_not_slugs(demo: tuple[Bank, dict[int, np.ndarray]]) -> None:
    bank, eligible = demo
    first = recommend(bank, [], eligible[12])
    rec = recommend(bank, [Attempt(first.problem, 1.0)], eligible[12])
    assert rec.kind == "new-concept"
    for c in rec.new_concepts:
        assert bank.concept_names[c] in rec.reason
        assert " " in bank.concept_names[c]  # a name, e.g. "Population, sample, parameter and statistic"


def test_skip_and_similar_walk_new_problems(demo: tuple[Bank, dict[int, np.ndarray]]) -> None:
    bank, eligible = demo
    open_ = eligible[12]
    shown: list[int] = []
    attempts: list[Attempt] = []
    rec = recommend(bank, attempts, open_)
    for _ in range(10):  # "Not solved", then skip, skip, ...: ten different problems
        shown.append(rec.problem)
        attempts.append(Attempt(rec.problem, 0.0, skipped=len(attempts) > 0))
        rec = recommend(bank, attempts, open_, recent=shown)
    assert len(set(shown[1:])) == 9  # a skipped problem never comes back while new ones are left
    assert all(shown[i] not in shown[max(0, i - RECENT):i] for i in range(len(shown)))
    shown = [rec.problem]
    for _ in range(10):  # "Show me a similar problem" ten times in a row
        rec = recommend(bank, attempts, open_, mode="similar", current=shown[-1], recent=shown[:-1])
        shown.append(rec.problem)
    assert len(set(shown[-RECENT - 1:])) == RECENT + 1
    assert all(shown[i] not in shown[max(0, i - RECENT):i] for i in range(len(shown)))
