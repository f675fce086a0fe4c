"""Learner and class progress on the recommender's hand-built bank."""

from __future__ import annotations

import numpy as np

from practice.algorithms.progress import class_means, learner_progress, stuck_reason
from practice.algorithms.recommend import Attempt, projected
from tests.practice.algorithms.test_recommend import BANK

MODULES = {"counting": np.array([0, 1, 2, 3]), "bayes": np.array([4, 5, 6]), "empty": np.array([], dtype=np.int64)}


def test_counts_mastery_and_projected_modules() -> None:
    attempts = [Attempt(0, 0.0), Attempt(0, 1.0), Attempt(2, 1.0), Attempt(5, 0.0, skipped=True)]
    progress = learner_progress(BANK, attempts, MODULES)
    assert (progress.attempts, progress.solved, progress.failed, progress.skipped) == (4, 2, 1, 1)
    assert progress.concept_mastery.keys() == {0, 1} and progress.concept_mastery[1] == 1.0
    # Counting is projected from two solved counting problems; Bayes is unlike anything attempted: no figure.
    assert progress.module_mastery.keys() == {"counting"}
    p, evidence = projected(BANK, attempts, rows=MODULES["counting"])
    assert progress.module_mastery["counting"] == float(p.mean()) > 0.7 and evidence.min() > 0
    assert progress.stuck is None


def test_a_learner_with_no_tries_has_no_figures() -> None:
    progress = learner_progress(BANK, [Attempt(0, 0.0, skipped=True)], MODULES)
    assert progress.module_mastery == {} and progress.concept_mastery == {} and progress.solved == 0


def test_stuck_after_failures_in_a_row_or_skips() -> None:
    assert stuck_reason(BANK, [Attempt(i, 0.0) for i in (0, 1, 2)]) is None  # three is not yet stuck
    reason = stuck_reason(BANK, [Attempt(0, 1.0), Attempt(1, 0.0), Attempt(2, 0.5), Attempt(1, 0.0), Attempt(3, 0.0)])
    assert reason == "4 tries in a row without a success (“P3”, “P1”, “P2”)"
    assert stuck_reason(BANK, [Attempt(1, 0.0), Attempt(2, 0.0), Attempt(3, 0.0), Attempt(0, 1.0)]) is None
    assert stuck_reason(BANK, [Attempt(0, 1.0)] + [Attempt(i, 0.0, skipped=True) for i in (1, 2, 3)]) == "skipped the last 3 problems"


def test_class_means_only_over_learners_with_a_figure() -> None:
    assert class_means([{"a": 1.0, "b": 0.0}, {"a": 0.5}, {}]) == {"a": 0.75, "b": 0.0}
