from __future__ import annotations

from django.conf import settings
from django.db import models


class Module(models.Model):
    """A course module; `order` is the position in the syllabus."""

    name = models.CharField(max_length=200, unique=True)
    order = models.PositiveIntegerField(default=1000)
    description = models.TextField(blank=True)
    open_for_practice = models.BooleanField(default=False, help_text="Students are recommended this module's released problems.")

    class Meta:
        ordering = ["order", "name"]

    def __str__(self) -> str:
        return self.name


class Problem(models.Model):
    collection = models.CharField(max_length=100, db_index=True)
    source_id = models.CharField("id in collection", max_length=300)
    title = models.CharField(max_length=200)
    text = models.TextField(help_text="LaTeX: inline math in $...$, display math in \\[...\\].")
    module = models.ForeignKey(Module, null=True, blank=True, on_delete=models.SET_NULL, related_name="problems")
    level = models.CharField(max_length=50, blank=True)
    answer = models.TextField(blank=True)
    solution = models.TextField(blank=True)
    source = models.CharField("provenance", max_length=500, blank=True)
    released = models.BooleanField("released to students", default=False, db_index=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["module__order", "collection", "source_id"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "source_id"], name="problem_unique_collection_source_id")
        ]
        indexes = [
            models.Index(fields=["module", "collection", "source_id"], name="problem_module_order"),
            models.Index(fields=["-updated_at"], name="problem_updated"),
            models.Index(fields=["title"], name="problem_title"),
        ]
        permissions = [
            ("view_unreleased_problem", "Can see problems not released to students"),
            ("import_problem", "Can import and export problem files"),
        ]

    def __str__(self) -> str:
        return f"{self.collection}/{self.source_id}: {self.title}"


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
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["student", "created_at"], name="attempt_student_time")]
        constraints = [
            models.UniqueConstraint(
                fields=["student", "client_key"], condition=~models.Q(client_key=""), name="attempt_unique_client_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.student} on {self.problem_id}: {self.verdict}"


class LoginFailure(models.Model):
    """A failed sign-in (login form or API token), kept for LOGIN_FAILURE_WINDOW_SECONDS so password
    guessing is throttled per account and per address, across every web process."""

    username = models.CharField(max_length=150)
    ip = models.GenericIPAddressField(null=True, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["username", "at"], name="login_failure_user"),
            models.Index(fields=["ip", "at"], name="login_failure_ip"),
            models.Index(fields=["at"], name="login_failure_at"),
        ]
