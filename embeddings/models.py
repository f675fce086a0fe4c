from __future__ import annotations

from django.conf import settings
from django.db import models

from concepts.models import BackgroundJob


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




class ConceptSource(models.TextChoices):
    LABELS = "labels", "expert labels"
    RULES = "rules", "rule extraction"
    HYBRID = "hybrid", "rules + learned extractor"


class EmbeddingRun(BackgroundJob):
    """One embedding of the bank by one method. Vectors live here, in the database, never on a worker's disk."""

    method = models.CharField(max_length=40, db_index=True)
    source = models.CharField(max_length=10, choices=ConceptSource.choices, default=ConceptSource.LABELS)
    params = models.JSONField(default=dict, blank=True)
    fingerprint = models.CharField(max_length=64, db_index=True, help_text="Hash of the method, parameters and inputs.")
    extraction_run = models.ForeignKey("concepts.ExtractionRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    progress = models.FloatField(default=0.0)
    loss = models.FloatField(null=True, blank=True)
    losses = models.JSONField(default=list, blank=True, help_text="Training loss after each epoch, in order (empty for methods that do not train).")
    notes = models.JSONField(default=dict, blank=True, help_text="What the run used, e.g. which word vectors.")
    timings = models.JSONField(default=dict, blank=True, help_text="Milliseconds per step.")
    problems = models.PositiveIntegerField(default=0)
    missing = models.JSONField(default=list, blank=True, help_text="Ids of problems that got no vector (no concepts or words).")
    dim = models.PositiveIntegerField(default=0)
    problem_ids = models.BinaryField(default=b"", help_text="int64 problem ids, row order of `vectors`.")
    vectors = models.BinaryField(default=b"", help_text="float32 problem vectors, row-major (problems, dim).")
    concept_slugs = models.JSONField(default=list, blank=True)
    concept_vectors = models.BinaryField(default=b"", help_text="float32 concept vectors (concepts, dim), if the method has them.")

    class Meta(BackgroundJob.Meta):
        indexes = [models.Index(fields=["method", "source", "status", "-id"], name="embedding_run_latest")]

    def __str__(self) -> str:
        return f"{self.method}/{self.source} #{self.pk} ({self.status})"


class ActiveEmbedding(models.Model):
    """The one embedding that recommendations and similar problems use (a single row, id 1)."""

    run = models.ForeignKey(EmbeddingRun, on_delete=models.PROTECT, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)
    activated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="Who made the run active by hand; empty when it became active as the site default's newest run.",
    )


class EmbeddingDefault(models.Model):
    """The site default the instructor chose (a single row, id 1; without it, Prob2Vec on the expert labels).

    A finished run becomes the active embedding by itself only when it is of this method and source;
    any other run becomes active only when someone makes it so ("make active" in the lab,
    `rebuild_embeddings --activate`). So rebuilding every method never moves practice to another embedding."""

    method = models.CharField(max_length=40, default="prob2vec")
    source = models.CharField(max_length=10, choices=ConceptSource.choices, default=ConceptSource.LABELS)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)


class TextVector(models.Model):
    """A problem's sentence-model vector (all-MiniLM-L6-v2), kept so that a rebuild encodes only new or
    edited texts: the model costs minutes per few thousand problems on a CPU. `text_sha256` is the hash
    of the text it was computed from; a row whose hash no longer matches the problem's text is stale
    and is recomputed by the next rebuild that needs it."""

    problem = models.ForeignKey("problems.Problem", on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=40)
    text_sha256 = models.CharField(max_length=64)
    vector = models.BinaryField(help_text="float32, unit norm.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["problem", "model"], name="text_vector_unique")]

    def __str__(self) -> str:
        return f"{self.model} vector of problem #{self.problem_id}"
