"""Students' attempts: who tried which problem, with what outcome, and why it was offered.

The table is still `problems_attempt`: the model moved here from problems/ with a state-only migration
(practice/migrations/0001_initial.py), so no row was copied or lost."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from problems.models import Problem


class AttemptVerdict(models.TextChoices):
    CORRECT = "correct", "correct"
    INCORRECT = "incorrect", "incorrect"
    SOLVED = "solved", "solved (self-report)"
    PARTLY = "partly", "partly solved (self-report)"
    NOT_SOLVED = "not_solved", "not solved (self-report)"
    SKIPPED = "skipped", "skipped"


VERDICT_OUTCOME = {"correct": 1.0, "solved": 1.0, "partly": 0.5, "incorrect": 0.0, "not_solved": 0.0, "skipped": 0.0}


class Attempt(models.Model):
    """One student's try at one problem: a checked answer, a self-report, or a skip."""

    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="attempts")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="attempts")
    verdict = models.CharField(max_length=12, choices=AttemptVerdict.choices)
    outcome = models.FloatField(help_text="1 solved, 0.5 partly, 0 not solved (skips are not outcomes).")
    answer = models.TextField(blank=True, help_text="What the student typed, if anything.")
    recommended_because = models.CharField(max_length=300, blank=True, help_text="The reason the problem was offered.")
    client_key = models.CharField(
        max_length=64, blank=True, default="",
        help_text="The submission's own key (the practice form's, or an API client's): the same key is stored once.",
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "problems_attempt"  # the table it had in problems/: moved without copying a row
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["student", "created_at"], name="attempt_student_time")]
        constraints = [
            models.UniqueConstraint(
                fields=["student", "client_key"], condition=~models.Q(client_key=""), name="attempt_unique_client_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.student} on {self.problem_id}: {self.verdict}"
