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


class HeldOutProblem(models.Model):
    """A problem kept out of rule writing, so its labels measure the rules on text they were not written from.

    Rules written from a book's labelled problems find most of those problems' concepts and far fewer
    of the rest of the book's (README, "Rules on text nobody here wrote"). The rule editor, its
    suggestions, the rules analysis and the report drill-downs treat a held-out problem as unlabelled;
    its labelling page shows no extractor suggestions; `extractor_report --held-out` measures on these
    problems alone, and the fallback's text share follows the recall measured on them."""

    problem = models.OneToOneField("problems.Problem", on_delete=models.CASCADE, related_name="held_out")
    marked_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    marked_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"held out: {self.problem_id}"


class ConceptRule(models.Model):
    """The regex rule of one concept. Every change is kept as a ConceptRuleVersion."""

    concept = models.OneToOneField(Concept, on_delete=models.CASCADE, related_name="rule")
    pattern = models.TextField(blank=True, help_text="Matched in everything the rules read of a problem: its statement and solution.")
    statement_pattern = models.TextField(
        blank=True, help_text="Matched in the statement alone (README \"Where a branch reads\"); either pattern may be empty, not both."
    )
    ignore_case = models.BooleanField(default=True)
    enabled = models.BooleanField(default=True)
    version = models.PositiveIntegerField(default=0, help_text="Number of the current version.")
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["concept__module__order", "concept__slug"]
        permissions = [("preview_conceptrule", "Can preview rules over the bank")]

    def __str__(self) -> str:
        return f"rule {self.concept.slug} v{self.version}"


class ConceptRuleVersion(models.Model):
    rule = models.ForeignKey(ConceptRule, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    pattern = models.TextField(blank=True)
    statement_pattern = models.TextField(blank=True)
    ignore_case = models.BooleanField(default=True)
    enabled = models.BooleanField(default=True)
    message = models.CharField(max_length=300, blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["rule", "-number"]
        constraints = [models.UniqueConstraint(fields=["rule", "number"], name="rule_version_unique_number")]

    def __str__(self) -> str:
        return f"{self.rule.concept.slug} v{self.number}"


class JobStatus(models.TextChoices):
    PENDING = "pending", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


# The error of a job whose message never reached the queue (concepts/jobs.py): pages and the API show it.
QUEUE_UNAVAILABLE = "The job queue (Redis) is unavailable, so this job was not started. Try again later."


class BackgroundJob(models.Model):
    """The fields and facts every background job row shares (extraction runs, reports, experiments, embedding runs)."""

    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.PENDING, db_index=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Times a worker claimed the job; more than 1: a worker died running it.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-id"]

    @property
    def is_active(self) -> bool:
        return self.status in (JobStatus.PENDING, JobStatus.RUNNING)

    @property
    def not_queued(self) -> bool:
        return self.status == JobStatus.FAILED and self.error == QUEUE_UNAVAILABLE

    @property
    def seconds(self) -> float | None:
        started, finished = self.started_at, self.finished_at
        return (finished - started).total_seconds() if started and finished else None


class ExtractionSource(models.TextChoices):
    RULES = "rules", "rules"
    HYBRID = "hybrid", "rules + learned"


class ExtractionRun(BackgroundJob):
    """One application of every enabled rule to the whole bank (source "rules"), or the hybrid source:
    a rules run's concepts plus those a model learned from the ground-truth labels finds (source "hybrid")."""

    source = models.CharField(max_length=10, choices=ExtractionSource.choices, default=ExtractionSource.RULES, db_index=True)
    rules_run = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", help_text="Hybrid: the rules run it adds to."
    )
    details = models.JSONField(default=dict, blank=True, help_text="Hybrid: the learned model, its thresholds and what it added.")
    fingerprint = models.CharField(max_length=64, db_index=True, help_text="Hash of the rule versions and problems used.")
    rule_versions = models.JSONField(default=dict, help_text="slug -> rule version number used.")
    problems_total = models.PositiveIntegerField(default=0)
    problems_done = models.PositiveIntegerField(default=0)
    concepts_found = models.PositiveIntegerField(default=0)

    @property
    def progress(self) -> float:
        return self.problems_done / self.problems_total if self.problems_total else (1.0 if self.status == JobStatus.DONE else 0.0)


class ExtractedConcept(models.Model):
    run = models.ForeignKey(ExtractionRun, on_delete=models.CASCADE, related_name="extracted")
    problem = models.ForeignKey("problems.Problem", on_delete=models.CASCADE, related_name="extracted_concepts")
    concept = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="+")
    rule_version = models.ForeignKey(ConceptRuleVersion, null=True, on_delete=models.SET_NULL, related_name="+")
    probability = models.FloatField(
        null=True, blank=True, help_text="Hybrid: the learned model's probability, where it and not a rule found the concept."
    )

    class Meta:
        indexes = [models.Index(fields=["run", "problem"], name="extracted_run_problem")]
        constraints = [models.UniqueConstraint(fields=["run", "problem", "concept"], name="extracted_unique")]


class ExtractorReport(BackgroundJob):
    """FP/FN rates of the rule extractor against ground-truth labels, per concept and averaged."""

    collection = models.CharField(max_length=100, blank=True, help_text="Empty: every labelled problem.")
    source = models.CharField(max_length=10, choices=ExtractionSource.choices, default=ExtractionSource.RULES)
    rule_versions = models.JSONField(default=dict)
    problems = models.PositiveIntegerField(default=0)
    fp_rate = models.FloatField(null=True, blank=True)
    fn_rate = models.FloatField(null=True, blank=True)
    concepts = models.JSONField(default=dict, help_text="slug -> {tp, fp, fn, tn, fp_rate, fn_rate}")
    held_out = models.BooleanField(default=False, help_text="Measured on the problems held out from rule writing only.")

    def as_json(self) -> dict[str, object]:
        return {
            "problems": self.problems, "source": self.source,
            "average": {"fp_rate": self.fp_rate, "fn_rate": self.fn_rate}, "concepts": self.concepts,
        }

    def _total(self, key: str) -> int:
        return sum(int(s.get(key, 0)) for s in (self.concepts or {}).values())

    @property
    def precision(self) -> float | None:
        """Of the concepts found on the labelled problems, the share the labels hold (pooled over
        concepts). Per-concept FP rates are small even when many found concepts are wrong, because
        each concept has many negatives; a wrong concept shared by two problems misleads similarity."""
        tp, fp = self._total("tp"), self._total("fp")
        return tp / (tp + fp) if tp + fp else None

    @property
    def recall(self) -> float | None:
        """Of the labelled concepts the report covers, the share found (pooled over concepts)."""
        tp, fn = self._total("tp"), self._total("fn")
        return tp / (tp + fn) if tp + fn else None


class LabelSet(models.Model):
    """One annotator's concept labels for one problem (several annotators may label a problem)."""

    problem = models.ForeignKey("problems.Problem", on_delete=models.CASCADE, related_name="label_sets")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="label_sets")
    concepts = models.ManyToManyField(Concept, blank=True, related_name="+")
    version = models.PositiveIntegerField(default=0, help_text="Bumped whenever the set changes; pages send it back to detect stale saves.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["problem", "annotator"], name="labelset_unique_annotator")]
        indexes = [models.Index(fields=["annotator", "-updated_at"], name="labelset_annotator_recent")]

    def __str__(self) -> str:
        return f"labels of {self.problem_id} by {self.annotator_id}"


class LabelResolution(models.Model):
    """The head TA's decision on a problem's ground truth, which overrides the annotators' sets."""

    problem = models.OneToOneField("problems.Problem", on_delete=models.CASCADE, related_name="label_resolution")
    concepts = models.ManyToManyField(Concept, blank=True, related_name="+")
    version = models.PositiveIntegerField(default=0, help_text="Bumped whenever the set changes; pages send it back to detect stale saves.")
    resolved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    resolved_at = models.DateTimeField(auto_now=True)

    class Meta:
        permissions = [("resolve_labels", "Can resolve annotators' labels into ground truth")]


class SelectedWord(models.Model):
    """A word TAs marked as informative (the paper kept 208 of 2,242); used by text baselines and extractors."""

    word = models.CharField(max_length=100, unique=True)
    selected_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["word"]

    def __str__(self) -> str:
        return self.word


class NeuralExperiment(BackgroundJob):
    """The paper's Table 3 on this bank: R rounds per concept and scheme, then label suggestions."""

    concepts = models.JSONField(default=list, help_text="Concept slugs, in table order.")
    schemes = models.JSONField(default=list, help_text="Scheme keys (concepts.neural.schemes.SCHEMES), in table order.")
    rounds = models.PositiveIntegerField(default=100)
    seed = models.IntegerField(default=0)
    params = models.JSONField(default=dict, blank=True, help_text="Training overrides: epochs, pretrain_epochs, lr, word_dim, ...")
    suggest = models.BooleanField(default=True, help_text="Train each concept's best scheme on every label and suggest labels.")
    progress = models.FloatField(default=0.0)
    results = models.JSONField(default=dict, blank=True, help_text="run_experiment's table (README: nn_extractor_experiment --json).")

    def __str__(self) -> str:
        return f"neural experiment #{self.pk} ({self.status})"


class NeuralSuggestion(models.Model):
    """What an experiment's best extractor says about one problem and concept, where it has something to say:
    it finds the concept, or the labels or the rules do."""

    experiment = models.ForeignKey(NeuralExperiment, on_delete=models.CASCADE, related_name="suggestions")
    problem = models.ForeignKey("problems.Problem", on_delete=models.CASCADE, related_name="+")
    concept = models.ForeignKey(Concept, on_delete=models.CASCADE, related_name="+")
    scheme = models.CharField(max_length=60)
    probability = models.FloatField()
    predicted = models.BooleanField(help_text="The extractor finds the concept (probability >= threshold).")
    in_labels = models.BooleanField(null=True, help_text="The expert labels have the concept; null: the problem is unlabelled.")
    in_rules = models.BooleanField(help_text="The latest extraction run found the concept.")

    class Meta:
        ordering = ["problem_id", "concept__slug"]
        constraints = [models.UniqueConstraint(fields=["experiment", "problem", "concept"], name="neural_suggestion_unique")]

    @property
    def disagrees(self) -> bool:
        return (self.in_labels is not None and self.predicted != self.in_labels) or self.predicted != self.in_rules
