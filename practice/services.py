"""Writes for practice: a student's attempt, checked and stored once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from practice.answers import check_answer
from practice.models import VERDICT_OUTCOME, Attempt
from problems.models import Problem
from problems.selectors import problem_open_for_practice


class AttemptRejected(ValueError):
    pass


class AttemptNotOpen(AttemptRejected):
    """A student's attempt at a problem outside practice: its answer is not theirs to learn."""


SELF_REPORTS = ("solved", "partly", "not_solved")


@dataclass
class RecordedAttempt:
    attempt: Attempt
    check: Any  # practice.answers.AnswerCheck, or None for self-reports and skips
    duplicate: bool  # the submission was stored before (same client key, or the same attempt just now)


def attempt_record(
    *,
    student: Any,
    problem: Problem,
    answer: str = "",
    self_report: str = "",
    skip: bool = False,
    because: str = "",
    client_key: str = "",
    practice_only: bool = False,
) -> RecordedAttempt:
    """Store one attempt, once.

    A typed answer is checked against the problem's answer where that answer can be checked; where
    it cannot (free text, no answer stored), the student's self-report decides, and is required.
    `practice_only` refuses a problem outside practice (unreleased, or in a module not open for
    practice; AttemptNotOpen): the check's feedback would tell a student its answer.

    A submission is stored once: one with the `client_key` of a stored attempt returns that attempt,
    and without a key, the same attempt (problem, verdict, answer) within
    ATTEMPT_DUPLICATE_WINDOW_SECONDS does (a double click, a client's retry). A student's submissions
    queue behind a lock on their user row, so two sent at the same moment find each other.
    """
    if practice_only and not problem_open_for_practice(problem):
        raise AttemptNotOpen(f"problem {problem.pk} is not open for practice")
    check = None
    unchecked = "this answer cannot be checked automatically: compare it with the solution and say how you did"
    if skip:
        verdict = "skipped"
    elif answer.strip() and problem.answer.strip():
        check = check_answer(answer, problem.answer)
        verdict = check.verdict if check.verdict in ("correct", "incorrect") else ""
        if not verdict:
            if self_report not in SELF_REPORTS:
                raise AttemptRejected(unchecked)
            verdict = self_report
    elif self_report in SELF_REPORTS:
        verdict = self_report
    elif answer.strip():  # typed, but the problem stores no answer to check it against
        raise AttemptRejected(unchecked)
    else:
        raise AttemptRejected("type an answer, or say whether you solved the problem")
    stored_answer = answer.strip()[:2000]
    with transaction.atomic():
        list(get_user_model().objects.select_for_update().filter(pk=student.pk).values_list("pk"))
        if client_key:
            twin = Attempt.objects.filter(student=student, client_key=client_key).first()
        else:
            since = timezone.now() - timedelta(seconds=settings.ATTEMPT_DUPLICATE_WINDOW_SECONDS)
            twin = (
                Attempt.objects.filter(student=student, problem=problem, verdict=verdict, answer=stored_answer, created_at__gte=since)
                .order_by("-id")
                .first()
            )
        if twin is not None:  # its feedback, as it was given the first time
            checked = twin.verdict != "skipped" and twin.answer and twin.problem.answer.strip()
            return RecordedAttempt(twin, check_answer(twin.answer, twin.problem.answer) if checked else None, duplicate=True)
        attempt = Attempt.objects.create(
            student=student, problem=problem, verdict=verdict, outcome=VERDICT_OUTCOME[verdict], answer=stored_answer,
            recommended_because=because[:300], client_key=client_key[:64],
        )
    return RecordedAttempt(attempt, check, duplicate=False)
