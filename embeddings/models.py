from __future__ import annotations

from django.conf import settings
from django.db import models


class TripletStatus(models.TextChoices):
    PROPOSED = "proposed", "proposed"
    ACCEPTED = "accepted", "accepted"
    REJECTED = "rejected", "rejected"


class VoteChoice(models.TextChoices):
    POSITIVE = "positive", "the positive is closer"
    NEGATIVE = "negative", "the negative is closer"
    CANT_TELL = "cant_tell", "can't tell"


class SimilarityTriplet(models.Model):
    """Expert judgement: `anchor` is more similar to `positive` than to `negative` (one module)."""

    anchor = models.ForeignKey("problems.Problem", on_delete=models.CASCADE, related_name="+")
    positive = models.ForeignKey("problems.Problem", on_delete=models.CASCADE, related_name="+")
    negative = models.ForeignKey("problems.Problem", on_delete=models.CASCADE, related_name="+")
    module = models.ForeignKey("problems.Module", null=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=10, choices=TripletStatus.choices, default=TripletStatus.PROPOSED, db_index=True)
    note = models.CharField(max_length=500, blank=True)
    proposed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["anchor", "positive", "negative"], name="triplet_unique"),
            models.CheckConstraint(
                condition=~models.Q(anchor=models.F("positive"))
                & ~models.Q(anchor=models.F("negative"))
                & ~models.Q(positive=models.F("negative")),
                name="triplet_distinct_problems",
            ),
        ]
        permissions = [("decide_similaritytriplet", "Can accept, reject or swap triplets (head TA)")]

    def __str__(self) -> str:
        return f"({self.anchor_id}: {self.positive_id} > {self.negative_id})"


class TripletVote(models.Model):
    triplet = models.ForeignKey(SimilarityTriplet, on_delete=models.CASCADE, related_name="votes")
    voter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    choice = models.CharField(max_length=10, choices=VoteChoice.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["triplet", "voter"], name="vote_unique_voter")]
