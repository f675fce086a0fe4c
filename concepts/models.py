from __future__ import annotations

from django.conf import settings
from django.db import models


class Concept(models.Model):
    """A mathematical idea a solver has to use (Prob2Vec's abstraction level)."""

    slug = models.CharField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    module = models.ForeignKey("problems.Module", null=True, blank=True, on_delete=models.SET_NULL, related_name="concepts")
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["module__order", "slug"]

    def __str__(self) -> str:
        return self.slug


class GroundTruthLabel(models.Model):
    """The resolved expert label: `concept` is used to solve `problem`."""

    problem = models.ForeignKey("problems.Problem", on_delete=models.CASCADE, related_name="ground_truth_labels")
    concept = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="ground_truth_labels")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["problem", "concept"], name="label_unique_problem_concept")]
        indexes = [models.Index(fields=["concept", "problem"], name="label_concept_problem")]

    def __str__(self) -> str:
        return f"{self.problem_id}:{self.concept_id}"
