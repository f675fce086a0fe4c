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
