"""A learner's progress and a class's, read from attempts with the recommender's estimates. Pure: numpy.

- Concept mastery: the recency-weighted mean of outcomes on problems with the concept
  (`recommend.concept_mastery`), for the concepts a learner has met.
- Module mastery, projected: the mean estimated success p_j over the module's problems, where p_j
  projects every outcome through problem similarity (`recommend.projected`). A module the learner
  has done nothing similar to has no figure (its p_j would only be the prior).
- Stuck: several tries in a row without a success, or a run of skips.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from practice.algorithms.recommend import SOLVED, Attempt, Bank, Policy, concept_mastery, projected

STUCK_FAILURES = 4  # tries in a row without a success
STUCK_SKIPS = 3  # skips in a row
MIN_EVIDENCE = 0.25  # mean similarity weight over a module below which it has no projected figure


@dataclass
class LearnerProgress:
    attempts: int = 0
    solved: int = 0
    failed: int = 0
    skipped: int = 0
    concept_mastery: dict[int, float] = field(default_factory=dict)
    module_mastery: dict[str, float] = field(default_factory=dict)
    stuck: str | None = None


def stuck_reason(bank: Bank, attempts: Sequence[Attempt]) -> str | None:
    """Why a learner looks stuck, or None: judged on their latest attempts only."""
    if len(attempts) >= STUCK_SKIPS and all(a.skipped for a in attempts[-STUCK_SKIPS:]):
        return f"skipped the last {STUCK_SKIPS} problems"
    tried = [a for a in attempts if not a.skipped]
    if len(tried) < STUCK_FAILURES:
        return None
    recent = tried[-STUCK_FAILURES:]
    if any(a.outcome >= SOLVED for a in recent):
        return None
    titles = ", ".join(dict.fromkeys(f"“{bank.titles[a.problem]}”" for a in reversed(recent)))
    return f"{STUCK_FAILURES} tries in a row without a success ({titles})"


def learner_progress(
    bank: Bank, attempts: Sequence[Attempt], module_rows: Mapping[str, np.ndarray], policy: Policy = Policy()
) -> LearnerProgress:
    tried = [a for a in attempts if not a.skipped]
    progress = LearnerProgress(
        attempts=len(attempts),
        solved=len({a.problem for a in tried if a.outcome >= SOLVED}),
        failed=sum(1 for a in tried if a.outcome < 0.5),
        skipped=len(attempts) - len(tried),
        concept_mastery=concept_mastery(bank, attempts),
        stuck=stuck_reason(bank, attempts),
    )
    if tried:
        for module, rows in module_rows.items():
            if len(rows) == 0:
                continue
            p, evidence = projected(bank, attempts, policy, rows)
            if evidence.mean() >= MIN_EVIDENCE:
                progress.module_mastery[module] = float(p.mean())
    return progress


def class_means(values: Iterable[Mapping[object, float]]) -> dict[object, float]:
    """Per key, the mean over the learners that have a figure for it."""
    sums: dict[object, list[float]] = {}
    for learner in values:
        for key, value in learner.items():
            sums.setdefault(key, []).append(value)
    return {key: float(np.mean(v)) for key, v in sums.items()}
