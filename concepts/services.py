"""Writes to the concept dictionary."""

from __future__ import annotations

import difflib
import hashlib
import json
import logging
import math
import os
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

import numpy as np

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max
from django.utils import timezone

from concepts import extraction, learned, rule_analysis
from concepts.jobs import job_claim, job_enqueue, job_fail_unfinished, job_resend_if_queued, job_wait
from concepts.models import (
    Concept,
    ConceptRule,
    ConceptRuleVersion,
    ExtractedConcept,
    ExtractionRun,
    ExtractionSource,
    ExtractorReport,
    GroundTruthLabel,
    HeldOutProblem,
    JobStatus,
    LabelResolution,
    LabelSet,
    NeuralExperiment,
    NeuralSuggestion,
)
from concepts.tasks import extract_concepts as extract_concepts_task
from concepts.tasks import extractor_report_build as extractor_report_build_task
from concepts.tasks import nn_extractor_experiment as nn_extractor_experiment_task
from problems.bank_io import LineError, iter_jsonl_objects
from problems.models import Module, Problem

logger = logging.getLogger(__name__)
EXTRACTION_CHUNK = 2000


class DictionaryError(ValueError):
    pass


@transaction.atomic
def concepts_upsert(*, rows: list[dict[str, Any]]) -> int:
    """Create or update concepts from rows with `slug`, `name`, `module` and `description`.

    Every row is checked before anything is written: an unknown module or an empty slug
    rejects the whole dictionary.
    """
    modules = {m.name: m for m in Module.objects.all()}
    errors = []
    for n, row in enumerate(rows, start=2):  # line 1 is the header
        if not row.get("slug", "").strip():
            errors.append(f"row {n}: empty slug")
        if row.get("module") and row["module"] not in modules:
            errors.append(f"row {n}: unknown module {row['module']!r}")
    if errors:
        raise DictionaryError("; ".join(errors))
    existing = {c.slug: c for c in Concept.objects.all()}
    changed = 0
    for row in rows:
        values = {
            "name": row.get("name", "").strip() or row["slug"],
            "module": modules.get(row.get("module", "")),
            "description": row.get("description", "").strip(),
        }
        concept = existing.get(row["slug"].strip())
        if concept is None:
            Concept.objects.create(slug=row["slug"].strip(), **values)
            changed += 1
        elif any(getattr(concept, k) != v for k, v in values.items()):
            for k, v in values.items():
                setattr(concept, k, v)
            concept.save()
            changed += 1
    return changed


class RuleRejected(ValueError):
    """A rule change that cannot be saved; `position` is where the engine found the problem."""

    def __init__(self, message: str, position: int | None = None, field: str = "pattern"):
        self.message, self.position = message, position
        self.field = field  # the box the problem is in: "pattern" or "statement_pattern"
        super().__init__(message + (f" at position {position}" if position is not None else ""))


def _when(moment: Any) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M") if moment else "an unknown time"


def _rule_lines(pattern: str, flags: dict[str, bool], statement_pattern: str = "") -> list[str]:
    # One line per branch, as the editor shows it: a one-line rule's diff would say only "it changed".
    return rule_analysis.branch_lines(pattern, statement_pattern) + [f"[{name} = {'yes' if on else 'no'}]" for name, on in flags.items()]


def rule_diff(*, saved: ConceptRule | None, pattern: str, ignore_case: bool, enabled: bool, statement_pattern: str = "") -> str:
    """A unified diff from the saved rule to a submitted one (what saving it would change).

    The flags appear as extra lines only where they differ, so a pattern-only change reads as one.
    """
    saved_pattern = saved.pattern if saved else ""
    saved_statement = saved.statement_pattern if saved else ""
    saved_flags = {"ignore_case": saved.ignore_case, "enabled": saved.enabled} if saved else {}
    mine = {"ignore_case": ignore_case, "enabled": enabled}
    differ = [name for name in mine if saved is None or saved_flags[name] != mine[name]]
    label = f"saved (version {saved.version})" if saved else "saved (no rule)"
    lines = difflib.unified_diff(
        _rule_lines(saved_pattern, {n: saved_flags[n] for n in differ if saved}, saved_statement),
        _rule_lines(pattern, {n: mine[n] for n in differ}, statement_pattern),
        fromfile=label,
        tofile="yours",
        lineterm="",
    )
    return "\n".join(lines)


class RuleConflict(Exception):
    """The rule changed after the editor loaded `base_version`; nothing was saved.

    `rule` is the saved rule now (None if it is gone) and `diff` goes from it to what was submitted.
    """

    def __init__(self, *, rule: ConceptRule | None, base_version: int, diff: str):
        self.rule, self.base_version, self.diff = rule, base_version, diff
        self.version = rule.version if rule else 0
        who = rule.updated_by.get_username() if rule and rule.updated_by else "someone"
        self.message = (
            f"The rule was changed by {who} at {_when(rule.updated_at if rule else None)} since you opened it "
            f"(you started from version {base_version}; it is now version {self.version}). Nothing was saved."
        )
        super().__init__(self.message)


@transaction.atomic
def rule_save(
    *,
    concept: Concept,
    pattern: str,
    ignore_case: bool = True,
    enabled: bool = True,
    user: Any = None,
    message: str = "",
    base_version: int | None = None,
    statement_pattern: str = "",
) -> ConceptRule:
    """Save a concept's rule as a new version; refuse invalid or runaway patterns.

    ``pattern`` is matched in everything the rules read of a problem, ``statement_pattern`` in its
    statement alone; either may be empty, not both.

    `base_version` is the version the editor started from (0: no rule yet). When given and the rule
    has moved on since, RuleConflict is raised instead of overwriting someone else's version.
    None skips the check (scripts, the demo loader, API clients that do not send it).
    """
    try:
        engines = extraction.check_rule(pattern, statement_pattern, ignore_case)
        if extraction.ENGINE_BACKTRACKING in engines:
            # A backtracking pattern must prove itself on the whole bank before it may run in a worker.
            from concepts.selectors import bank_texts

            extraction.preview(
                pattern, ignore_case, bank_texts().texts, budget=settings.RULE_FALLBACK_BUDGET_SECONDS, statement_pattern=statement_pattern
            )
    except extraction.RuleError as exc:
        raise RuleRejected(exc.message, exc.position, "statement_pattern" if exc.in_statement else "pattern") from None
    except extraction.RuleBudgetExceeded as exc:
        raise RuleRejected(
            f"the pattern used up its time budget of {exc.seconds:g}s over the bank after {exc.texts_done} problem(s): "
            "RE2 cannot run it (backreferences, lookaround), and backtracking this slowly would tie up a worker"
        ) from None
    except extraction.RuleTimeout as exc:
        raise RuleRejected(
            f"the pattern took longer than {exc.seconds:g}s on one problem of the bank (catastrophic backtracking)"
        ) from None
    # Lock the concept, not just the rule: there is no rule row to lock before the first save, and two
    # first saves must still queue behind each other and compare versions.
    list(Concept.objects.select_for_update().filter(pk=concept.pk).order_by().values_list("pk"))
    rule = ConceptRule.objects.select_related("updated_by").filter(concept=concept).order_by("pk").first()
    if rule is not None and (rule.pattern, rule.statement_pattern, rule.ignore_case, rule.enabled) == (pattern, statement_pattern, ignore_case, enabled):
        return rule  # nothing changed (or both editors typed the same): no new version, nothing to lose
    if base_version is not None and base_version != (rule.version if rule else 0):
        raise RuleConflict(
            rule=rule,
            base_version=base_version,
            diff=rule_diff(saved=rule, pattern=pattern, ignore_case=ignore_case, enabled=enabled, statement_pattern=statement_pattern),
        )
    if rule is None:
        rule = ConceptRule(concept=concept)
    rule.pattern, rule.statement_pattern, rule.ignore_case, rule.enabled = pattern, statement_pattern, ignore_case, enabled
    rule.version += 1
    rule.updated_by = user
    rule.save()
    ConceptRuleVersion.objects.create(
        rule=rule,
        number=rule.version,
        pattern=pattern,
        statement_pattern=statement_pattern,
        ignore_case=ignore_case,
        enabled=enabled,
        message=message[:300],
        author=user,
    )
    return rule


def rule_revert(*, rule: ConceptRule, number: int, user: Any = None, base_version: int | None = None) -> ConceptRule:
    old = rule.versions.filter(number=number).first()
    if old is None:
        raise RuleRejected(f"{rule.concept.slug} has no version {number}")
    return rule_save(
        concept=rule.concept,
        pattern=old.pattern,
        statement_pattern=old.statement_pattern,
        ignore_case=old.ignore_case,
        enabled=old.enabled,
        user=user,
        message=f"Revert to version {number}",
        base_version=base_version,
    )


def rules_load(*, rules: dict[str, dict[str, Any]], user: Any = None, message: str = "") -> int:
    """Create or update many rules (e.g. the demo rules); unknown slugs are an error."""
    concepts = {c.slug: c for c in Concept.objects.filter(slug__in=rules)}
    unknown = sorted(set(rules) - set(concepts))
    if unknown:
        raise RuleRejected(f"rules for unknown concepts: {', '.join(unknown)}")
    changed = 0
    with transaction.atomic():
        for slug, spec in sorted(rules.items()):
            before = ConceptRule.objects.filter(concept=concepts[slug]).values_list("version", flat=True).first()
            try:
                rule = rule_save(
                    concept=concepts[slug],
                    pattern=spec.get("pattern") or "",
                    statement_pattern=spec.get("statement_pattern") or "",
                    ignore_case=spec.get("ignore_case", True),
                    enabled=spec.get("enabled", True),
                    user=user,
                    message=message,
                )
            except RuleRejected as exc:
                raise RuleRejected(f"{slug}: {exc.message}", exc.position) from None
            changed += rule.version != before
    return changed


def _fingerprint(rule_versions: dict[str, int]) -> str:
    state = Problem.objects.aggregate(n=Count("id"), last=Max("updated_at"), top=Max("id"))
    # Reading the solutions is an input of a rules run; off, the fingerprint is what it was before stop 39.
    raw = json.dumps([sorted(rule_versions.items()), state, *(["solutions"] if settings.RULES_READ_SOLUTIONS else [])], default=str)
    return hashlib.sha256(raw.encode()).hexdigest()


def _hybrid_fingerprint(rules_run: ExtractionRun) -> str:
    """A hybrid run depends on its rules run, the bank's labels and the learned model's settings."""
    labels = GroundTruthLabel.objects.aggregate(n=Count("id"), top=Max("id"))
    raw = json.dumps(["hybrid", learned.MODEL_VERSION, asdict(learned.LearnedConfig()), rules_run.pk, rules_run.fingerprint, labels], default=str)
    return hashlib.sha256(raw.encode()).hexdigest()


def extraction_run_latest_done(source: str = ExtractionSource.RULES) -> ExtractionRun | None:
    return ExtractionRun.objects.filter(status=JobStatus.DONE, source=source).order_by("-id").first()


class ExtractionInputError(ValueError):
    """An extraction that cannot start (a hybrid run with no finished rules run to add to)."""


def extraction_run_start(
    *, user: Any = None, source: str = ExtractionSource.RULES, rules_run: ExtractionRun | None = None
) -> ExtractionRun:
    """Queue an extraction of the whole bank, or return the run that already covers the same inputs.

    Source "rules" applies every enabled rule; "hybrid" adds the learned extractor to ``rules_run``
    (a finished rules run), by default the latest finished one (``extract_concepts`` first)."""
    from concepts.selectors import rules_enabled

    if source == ExtractionSource.HYBRID:
        if rules_run is not None and (rules_run.source != ExtractionSource.RULES or rules_run.status != JobStatus.DONE):
            raise ExtractionInputError(f"extraction run #{rules_run.pk} is not a finished rules run: a hybrid cannot add to it")
        rules_run = rules_run or extraction_run_latest_done(ExtractionSource.RULES)
        if rules_run is None:
            raise ExtractionInputError("no finished rule extraction to add to: run `python manage.py extract_concepts` first")
        fingerprint, versions = _hybrid_fingerprint(rules_run), rules_run.rule_versions
    elif source == ExtractionSource.RULES:
        rules_run = None
        versions = {rule.slug: model.version for rule, model in rules_enabled()}
        fingerprint = _fingerprint(versions)
    else:
        raise ExtractionInputError(f"unknown source {source!r}; use rules or hybrid")
    same = (
        ExtractionRun.objects.filter(fingerprint=fingerprint, source=source)
        .exclude(status__in=[JobStatus.FAILED, JobStatus.CANCELLED])
        .order_by("-id")
        .first()
    )
    if same is not None:
        job_resend_if_queued(job=same, task=extract_concepts_task)
        return same
    # What the run's rules read (a hybrid run's learned half reads the same as its rules run).
    details = {"reads_solutions": settings.RULES_READ_SOLUTIONS} if source == ExtractionSource.RULES else {}
    run = ExtractionRun.objects.create(
        source=source, rules_run=rules_run, fingerprint=fingerprint, rule_versions=versions, created_by=user, details=details
    )
    job_enqueue(job=run, task=extract_concepts_task)
    return run


def extraction_run_execute(*, run_id: int, redelivered: bool = False) -> None:
    """Apply every enabled rule to the bank (or build the hybrid source) and store what each problem got. Claimed once."""
    from concepts.selectors import rule_text_rows, rules_enabled

    if not job_claim(model=ExtractionRun, job_id=run_id, redelivered=redelivered):
        return  # another worker got there first, or the run is finished
    started = time.monotonic()
    ExtractedConcept.objects.filter(run_id=run_id).delete()  # the rows of a worker that died mid-run
    if ExtractionRun.objects.filter(id=run_id, source=ExtractionSource.HYBRID).exists():
        _hybrid_execute(run_id, started)
        return
    try:
        pairs = rules_enabled()
        # One budget per fallback rule for the whole run: `compiled` is shared by every chunk.
        compiled = extraction.compile_rules([rule for rule, _ in pairs], budget=settings.RULE_FALLBACK_BUDGET_SECONDS)
        version_ids = {
            rule.slug: v_id
            for rule, model in pairs
            for v_id in model.versions.filter(number=model.version).values_list("id", flat=True)
        }
        concept_ids = dict(Concept.objects.values_list("slug", "id"))
        ids = list(Problem.objects.order_by("id").values_list("id", flat=True))
        ExtractionRun.objects.filter(id=run_id).update(problems_total=len(ids))
        found = 0
        for start in range(0, len(ids), EXTRACTION_CHUNK):
            chunk = ids[start : start + EXTRACTION_CHUNK]
            texts = dict(rule_text_rows(Problem.objects.filter(id__in=chunk)))
            try:
                concept_sets = extraction.extract_many([texts[pid] for pid in chunk], compiled)
            except extraction.RuleBudgetExceeded:
                raise  # names the rule and the budget, for the whole run
            except extraction.RuleTimeout as exc:  # name the problem, not its place in the chunk
                raise extraction.RuleTimeout(exc.slug, chunk[exc.text_index], exc.seconds, what="problem") from None
            rows = [
                ExtractedConcept(run_id=run_id, problem_id=pid, concept_id=concept_ids[slug], rule_version_id=version_ids.get(slug))
                for pid, slugs in zip(chunk, concept_sets)
                for slug in slugs
            ]
            ExtractedConcept.objects.bulk_create(rows, batch_size=5000)
            found += len(rows)
            ExtractionRun.objects.filter(id=run_id).update(problems_done=start + len(chunk), concepts_found=found)
    except Exception as exc:
        # Deterministic failures (a bad or runaway rule) are saved on the run and not retried.
        ExtractedConcept.objects.filter(run_id=run_id).delete()
        ExtractionRun.objects.filter(id=run_id).update(status=JobStatus.FAILED, error=str(exc), finished_at=timezone.now())
        logger.warning("extraction run %s failed: %s", run_id, exc)
        if not isinstance(exc, (extraction.RuleError, extraction.RuleTimeout)):
            raise
        return
    ExtractionRun.objects.filter(id=run_id).update(status=JobStatus.DONE, finished_at=timezone.now())
    logger.info("Extraction run %s: %d problems, %d concepts [%dms]", run_id, len(ids), found, (time.monotonic() - started) * 1000)


def _hybrid_execute(run_id: int, started: float) -> None:
    """The hybrid source: the rules run's concepts, plus what the learned extractor finds where a rule did not.

    The learned model is fitted on the bank's ground-truth labels. A labelled problem's learned concepts
    come from nested cross-validation (a model and thresholds that never saw its labels), so reports on
    labelled problems are honest; unlabelled problems are scored by the model fitted on every label.

    Any exception fails the run with its message (as the rules path does), so nothing is left RUNNING
    for a later request with the same inputs to wait on; it is raised again (nothing here is a rule's
    deterministic error), so a worker logs it."""
    try:
        _hybrid_build(run_id, started)
    except Exception as exc:
        ExtractedConcept.objects.filter(run_id=run_id).delete()
        ExtractionRun.objects.filter(id=run_id, status=JobStatus.RUNNING).update(
            status=JobStatus.FAILED, error=f"the hybrid extraction stopped: {type(exc).__name__}: {exc}"[:2000], finished_at=timezone.now()
        )
        logger.warning("hybrid extraction %s failed: %s", run_id, exc)
        raise


def _hybrid_build(run_id: int, started: float) -> None:
    run = ExtractionRun.objects.select_related("rules_run").get(id=run_id)
    rules_run = run.rules_run
    if rules_run is None or rules_run.status != JobStatus.DONE:
        ExtractionRun.objects.filter(id=run_id).update(
            status=JobStatus.FAILED, error="its rules run is gone or unfinished: run `extract_concepts` again", finished_at=timezone.now()
        )
        return
    ids = list(Problem.objects.order_by("id").values_list("id", flat=True))
    row = {pid: i for i, pid in enumerate(ids)}
    slugs = list(Concept.objects.order_by("slug").values_list("slug", flat=True))
    col = {slug: j for j, slug in enumerate(slugs)}
    concept_ids = dict(Concept.objects.values_list("slug", "id"))
    ExtractionRun.objects.filter(id=run_id).update(problems_total=len(ids))
    hits = np.zeros((len(ids), len(slugs)), dtype=bool)
    by_rule: list[tuple[int, str, int | None]] = []
    for pid, slug, version in ExtractedConcept.objects.filter(run=rules_run).values_list("problem_id", "concept__slug", "rule_version_id"):
        if pid in row:
            hits[row[pid], col[slug]] = True
            by_rule.append((pid, slug, version))
    truth_sets: dict[int, set[str]] = {}
    for pid, slug in GroundTruthLabel.objects.values_list("problem_id", "concept__slug"):
        if pid in row:
            truth_sets.setdefault(pid, set()).add(slug)
    labelled = sorted(truth_sets)
    truth = np.zeros((len(labelled), len(slugs)), dtype=np.float32)
    for i, pid in enumerate(labelled):
        for slug in truth_sets[pid]:
            truth[i, col[slug]] = 1.0
    # The learned half reads what its rules run read (the statement, and the solution): its thresholds
    # are chosen against the rules' hits on the same text.
    from concepts.selectors import rule_text_rows

    reads_solutions = bool(rules_run.details.get("reads_solutions", False))
    texts = [text for _, text in rule_text_rows(Problem.objects.order_by("id"), reads_solutions=reads_solutions)]

    def on_progress(fraction: float) -> None:
        ExtractionRun.objects.filter(id=run_id, status=JobStatus.RUNNING).update(problems_done=int(fraction * len(ids)))

    config = learned.LearnedConfig()
    result = learned.cross_fit(texts, [row[pid] for pid in labelled], truth, hits, config, on_progress)
    rows = [ExtractedConcept(run_id=run_id, problem_id=pid, concept_id=concept_ids[slug], rule_version_id=v) for pid, slug, v in by_rule]
    for i, added in enumerate(result.predicted):
        for j in added:
            rows.append(ExtractedConcept(run_id=run_id, problem_id=ids[i], concept_id=concept_ids[slugs[j]], probability=float(result.probabilities[i, j])))
    # What the learned half added to labelled problems, each from a model that never saw its labels:
    # the honest measure of whether it helps this bank (shown on the run's page).
    added_to_labelled = [bool(truth[k, j]) for k, pid in enumerate(labelled) for j in result.predicted[row[pid]]]
    right, wrong = sum(added_to_labelled), added_to_labelled.count(False)
    details = {
        "model": learned.MODEL_NAME,
        "config": asdict(config),
        "labelled_problems": len(labelled),
        "features": result.features,
        "learned_concepts": [slugs[j] for j in result.learned_concepts],
        "thresholds": {slugs[j]: round(float(result.thresholds[j]), 4) for j in result.learned_concepts if np.isfinite(result.thresholds[j])},
        "added": len(rows) - len(by_rule),
        "labelled_additions": {"right": right, "wrong": wrong},
    }
    with transaction.atomic():
        ExtractedConcept.objects.bulk_create(rows, batch_size=5000)
        done = ExtractionRun.objects.filter(id=run_id, status=JobStatus.RUNNING).update(
            status=JobStatus.DONE, finished_at=timezone.now(), problems_done=len(ids), concepts_found=len(rows), details=details
        )
        if not done:
            transaction.set_rollback(True)
            return
    logger.info("Hybrid extraction %s: %d problems, %d labelled, %d concepts learned, %d added [%dms]",
                run_id, len(ids), len(labelled), len(result.learned_concepts), details["added"], (time.monotonic() - started) * 1000)


def _unfinished(run: ExtractionRun) -> str:
    """What went wrong with a run that is not DONE, in a few words."""
    if run.status == JobStatus.FAILED:
        return f"failed: {run.error}"
    return f"did not finish (it is {run.get_status_display().lower()}{': ' + run.error if run.error else ''})"


def extraction_run_ensure(*, source: str = ExtractionSource.RULES, user: Any = None) -> ExtractionRun:
    """A finished run of `source` for the current rules (and labels): reused, or built here and now.

    Commands and reports use it; a run that another worker is building is waited for. A hybrid run
    is built on the rules run for the current rules: when that one fails (or does not finish),
    ExtractionInputError says so, rather than a hybrid on older rules."""
    rules_run = None
    if source == ExtractionSource.HYBRID:
        rules_run = extraction_run_ensure(source=ExtractionSource.RULES, user=user)
        if rules_run.status != JobStatus.DONE:
            raise ExtractionInputError(
                f"the rules run #{rules_run.pk} for the current rules {_unfinished(rules_run)}; no hybrid run was built"
            )
    run = extraction_run_start(user=user, source=source, rules_run=rules_run)
    return extraction_run_wait(run=run)


def extraction_run_wait(*, run: ExtractionRun, timeout: float | None = None) -> ExtractionRun:
    """Run a queued extraction here (a no-op if a worker has it), then wait until it is no longer running.

    Here is a worker without a task's on_failure hook: an exception the run's service did not handle
    fails the run with its message (a bug is logged with its traceback) and the failed run is
    returned, so no run is left RUNNING for later requests with the same inputs to wait on. An
    interrupt (Ctrl-C) fails the run too, and goes on."""
    try:
        extraction_run_execute(run_id=run.pk)
    except BaseException as exc:
        job_fail_unfinished(model=ExtractionRun, job_id=run.pk, error=f"The job stopped: {type(exc).__name__}: {exc}")
        if not isinstance(exc, Exception):
            raise
        logger.exception("extraction run %s failed in process", run.pk)
    return job_wait(model=ExtractionRun, job_id=run.pk, timeout=timeout)


def extractor_report_start(
    *, user: Any = None, collection: str = "", source: str = ExtractionSource.RULES, held_out: bool = False
) -> ExtractorReport:
    report = ExtractorReport.objects.create(created_by=user, collection=collection, source=source, held_out=held_out)
    job_enqueue(job=report, task=extractor_report_build_task)
    return report


def _hybrid_predictions(ids: list[int]) -> tuple[ExtractionRun, list[set[str]]]:
    """The hybrid run for the current rules and labels, and its concepts of these problems."""
    run = extraction_run_ensure(source=ExtractionSource.HYBRID)
    if run.status != JobStatus.DONE:
        raise extraction.RuleError(f"the hybrid extraction #{run.pk} {_unfinished(run)}")
    found: dict[int, set[str]] = {pid: set() for pid in ids}
    for pid, slug in ExtractedConcept.objects.filter(run=run, problem_id__in=ids).values_list("problem_id", "concept__slug"):
        found[pid].add(slug)
    return run, [found[pid] for pid in ids]


def _hybrid_report_concepts(run: ExtractionRun) -> list[str]:
    """The concepts a hybrid report judges: those its rules run's rules cover, and those its learned
    half could add (every concept it learned, whether or not it has a rule, and whatever its
    threshold: a labelled problem's additions come from per-fold thresholds). A concept neither can
    find is left out, as the rules report leaves out a concept without a rule."""
    return sorted(set(run.rule_versions) | set(run.details.get("learned_concepts", [])))


def extractor_report_compute(*, report_id: int, redelivered: bool = False) -> ExtractorReport | None:
    """FP/FN of the current rules (or of the hybrid source) against ground-truth labels (of the problems
    held out from rule writing alone, for a ``held_out`` report); saved on the report row."""
    from concepts.selectors import labelled_problems, rules_enabled

    if not job_claim(model=ExtractorReport, job_id=report_id, redelivered=redelivered):
        return None
    report = ExtractorReport.objects.get(id=report_id)
    try:
        pairs = rules_enabled()
        ids, texts, truth = labelled_problems(report.collection, held_out=True if report.held_out else None)
        if not ids:
            where = f" in collection {report.collection!r}" if report.collection else ""
            if report.held_out:
                raise extraction.RuleError(
                    f"no problem{where} is both labelled and held out from rule writing: hold some out "
                    "(hold_out, the labelling pages, or import_labels --held-out) and label them first"
                )
            raise extraction.RuleError(f"no problem{where} has ground-truth labels: label some problems first")
        if report.source == ExtractionSource.HYBRID:
            hybrid, predicted = _hybrid_predictions(ids)
            # The rules it was built on (the current ones: extraction_run_ensure), and what its learned half adds.
            rule_versions, judged = hybrid.rule_versions, _hybrid_report_concepts(hybrid)
        else:
            predicted = extraction.extract_many(
                texts, extraction.compile_rules([rule for rule, _ in pairs], budget=settings.RULE_FALLBACK_BUDGET_SECONDS)
            )
            rule_versions = {rule.slug: model.version for rule, model in pairs}
            judged = [r.slug for r, _ in pairs]
        evaluation = extraction.evaluate(predicted, truth, judged)
    except (extraction.RuleError, extraction.RuleTimeout, ExtractionInputError) as exc:
        report.status, report.error, report.finished_at = JobStatus.FAILED, str(exc), timezone.now()
        report.save()
        return report
    report.rule_versions = rule_versions
    report.problems = evaluation.problems
    report.fp_rate, report.fn_rate = evaluation.fp_rate, evaluation.fn_rate
    report.concepts = evaluation.as_dict()["concepts"]
    report.status, report.finished_at = JobStatus.DONE, timezone.now()
    report.save()
    return report


# --- expert labels ------------------------------------------------------------------------------


class LabelsRejected(ValueError):
    pass


def _ground_truth_write(problem: Problem, concept_ids: set[int], user: Any) -> None:
    current = set(GroundTruthLabel.objects.filter(problem=problem).values_list("concept_id", flat=True))
    if current == concept_ids:
        return
    GroundTruthLabel.objects.filter(problem=problem).exclude(concept_id__in=concept_ids).delete()
    GroundTruthLabel.objects.bulk_create(
        [GroundTruthLabel(problem=problem, concept_id=cid, created_by=user) for cid in concept_ids - current]
    )


def ground_truth_recompute(*, problem: Problem, user: Any = None) -> None:
    """Ground truth = the head TA's resolution, else the annotators' set when they all agree.

    Where annotators disagree and nobody has resolved, the ground truth stays as it was (for
    example the imported labels) and the problem waits in the "disagreement" queue.
    """
    resolution = LabelResolution.objects.filter(problem=problem).first()
    if resolution is not None:
        _ground_truth_write(problem, set(resolution.concepts.values_list("id", flat=True)), resolution.resolved_by)
        return
    sets = [frozenset(ls.concepts.values_list("id", flat=True)) for ls in LabelSet.objects.filter(problem=problem)]
    if sets and len(set(sets)) == 1:
        _ground_truth_write(problem, set(sets[0]), user)


class LabelsConflict(Exception):
    """A label set (or resolution) changed after the page loaded `base_version`; nothing was saved.

    `saved` are the slugs saved now; `add` and `remove` are what saving the submitted set would change.
    """

    def __init__(self, *, what: str, by: Any, at: Any, version: int, base_version: int, saved: set[str], submitted: set[str]):
        self.version, self.base_version = version, base_version
        self.saved = sorted(saved)
        self.add, self.remove = sorted(submitted - saved), sorted(saved - submitted)
        self.updated_by = by.get_username() if by else None
        self.updated_at = at
        self.diff = ", ".join([f"+ {s}" for s in self.add] + [f"− {s}" for s in self.remove])
        self.message = (
            f"{what} changed by {self.updated_by or 'someone'} at {_when(at)} since you opened this page "
            f"(you started from version {base_version}; it is now version {version}). Nothing was saved."
        )
        super().__init__(self.message)


def _problem_lock(problem: Problem) -> None:
    # One label write per problem at a time: the version check and the ground-truth recompute both
    # read what another annotator's save may be writing, and a first save has no row of its own to lock.
    list(Problem.objects.select_for_update().filter(pk=problem.pk).order_by().values_list("pk"))


def _slugs(concepts: Any) -> set[str]:
    return {c.slug for c in concepts}


@transaction.atomic
def labels_set(*, problem: Problem, annotator: Any, concepts: list[Concept], base_version: int | None = None) -> LabelSet:
    """Save one annotator's labels of a problem and bring the ground truth up to date.

    `base_version` is the version of the annotator's set the page showed (0: none yet). When given and
    the set has changed since (another tab, the API), LabelsConflict is raised and nothing is written.
    """
    if not concepts:
        raise LabelsRejected("an empty label set: choose at least one concept")
    _problem_lock(problem)
    label_set, _ = LabelSet.objects.get_or_create(problem=problem, annotator=annotator)
    saved = _slugs(label_set.concepts.all())
    if saved != _slugs(concepts):
        if base_version is not None and base_version != label_set.version:
            raise LabelsConflict(
                what="Your labels of this problem were", by=annotator, at=label_set.updated_at,
                version=label_set.version, base_version=base_version, saved=saved, submitted=_slugs(concepts),
            )
        label_set.concepts.set(concepts)
        label_set.version += 1
    label_set.save(update_fields=["updated_at", "version"])
    ground_truth_recompute(problem=problem, user=annotator)
    return label_set


@transaction.atomic
def held_out_set(*, problem_ids: list[int], held_out: bool, user: Any = None) -> int:
    """Hold problems out of rule writing, or return them to it; returns how many changed. Marking a
    problem already held out keeps who marked it and when."""
    if held_out:
        known = set(HeldOutProblem.objects.filter(problem_id__in=problem_ids).values_list("problem_id", flat=True))
        new = [HeldOutProblem(problem_id=pid, marked_by=user) for pid in sorted(set(problem_ids) - known)]
        HeldOutProblem.objects.bulk_create(new)
        return len(new)
    return HeldOutProblem.objects.filter(problem_id__in=problem_ids).delete()[0]


class HeldOutRejected(ValueError):
    """A draw of held-out problems that cannot be made (no such collection, nothing left to draw)."""


@transaction.atomic
def held_out_draw(*, collection: str, count: int, seed: int = 0, user: Any = None) -> dict[str, int]:
    """Hold out ``count`` problems of a collection drawn at random over its modules (in proportion to
    their size; concepts.sampling), among those nobody has labelled yet, so they are labelled blind
    (their labelling pages show no suggestions). Returns how many were held out per module, in
    module order. Raises HeldOutRejected saying why nothing was drawn."""
    from concepts.sampling import stratified_sample

    if count < 1:
        raise HeldOutRejected("hold out at least one problem")
    problems = Problem.objects.filter(collection=collection)
    if not problems.exists():
        raise HeldOutRejected(f"no collection {collection!r}")
    free = problems.filter(ground_truth_labels__isnull=True, label_sets__isnull=True, held_out__isnull=True).distinct()
    groups: dict[str, list[int]] = {}
    for pid, module in free.values_list("id", "module__name"):
        groups.setdefault(module or "no module", []).append(pid)
    if not groups:
        raise HeldOutRejected(f"every problem of {collection!r} is labelled or held out already: nothing left to draw")
    drawn = stratified_sample(groups, count, seed)
    held_out_set(problem_ids=drawn, held_out=True, user=user)
    order = {name: i for i, name in enumerate(Module.objects.order_by("order", "name").values_list("name", flat=True))}
    chosen = set(drawn)
    per_module = {name: sum(1 for pid in ids if pid in chosen) for name, ids in groups.items()}
    return {name: n for name, n in sorted(per_module.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])) if n}


@transaction.atomic
def labels_resolve(*, problem: Problem, concepts: list[Concept], user: Any, base_version: int | None = None) -> LabelResolution:
    """The head TA decides a problem's ground truth.

    `base_version` works as in labels_set, against the problem's resolution (0: not resolved yet), so
    two head TAs resolving the same problem from stale pages cannot silently undo each other.
    """
    if not concepts:
        raise LabelsRejected("an empty label set: choose at least one concept")
    _problem_lock(problem)
    resolution = LabelResolution.objects.select_related("resolved_by").filter(problem=problem).first()
    saved = _slugs(resolution.concepts.all()) if resolution else set()
    current = resolution.version if resolution else 0
    if saved != _slugs(concepts) and base_version is not None and base_version != current:
        raise LabelsConflict(
            what="The resolution of this problem was", by=resolution.resolved_by if resolution else None,
            at=resolution.resolved_at if resolution else None, version=current, base_version=base_version,
            saved=saved, submitted=_slugs(concepts),
        )
    if resolution is None:
        resolution = LabelResolution(problem=problem)
    if saved != _slugs(concepts):
        resolution.version += 1
    resolution.resolved_by = user
    resolution.save()
    resolution.concepts.set(concepts)
    ground_truth_recompute(problem=problem, user=user)
    return resolution


@dataclass(frozen=True)
class LabelRecord:
    line: int
    problem_id: int
    concept_ids: frozenset[int]


def labels_parse(*, data: bytes, collection: str) -> tuple[list[LabelRecord], list[LineError]]:
    """Validate a JSONL file of {"id": ..., "concepts": [...]} lines against the bank; nothing is written."""
    problems = dict(Problem.objects.filter(collection=collection).values_list("source_id", "id"))
    concepts = dict(Concept.objects.values_list("slug", "id"))
    records, errors, seen = [], [], {}
    for number, obj, error in iter_jsonl_objects(data):
        if error:
            errors.append(LineError(number, error))
            continue
        source_id = str(obj.get("id", "")).strip() if obj.get("id") is not None else ""
        slugs = obj.get("concepts")
        if not source_id:
            errors.append(LineError(number, "missing 'id'"))
        elif source_id not in problems:
            errors.append(LineError(number, f"no problem {source_id!r} in collection {collection!r}"))
        elif not isinstance(slugs, list) or not all(isinstance(s, str) for s in slugs):
            errors.append(LineError(number, "'concepts' must be a list of concept slugs"))
        elif not slugs:
            errors.append(LineError(number, "an empty label set"))
        elif unknown := sorted({s for s in slugs if s not in concepts}):
            errors.append(LineError(number, f"unknown concept(s): {', '.join(unknown)}"))
        elif source_id in seen:
            errors.append(LineError(number, f"duplicate id {source_id!r} (first on line {seen[source_id]})"))
        else:
            seen[source_id] = number
            records.append(LabelRecord(number, problems[source_id], frozenset(concepts[s] for s in slugs)))
    return records, errors


@transaction.atomic
def labels_import(*, records: list[LabelRecord], annotator: Any = None, held_out: bool = False) -> int:
    """Write imported labels: as `annotator`'s label sets if given, else straight into the ground truth;
    ``held_out`` also holds every imported problem out of rule writing."""
    problems = Problem.objects.in_bulk([r.problem_id for r in records])
    if held_out:
        held_out_set(problem_ids=list(problems), held_out=True, user=annotator)
    concepts = Concept.objects.in_bulk([cid for r in records for cid in r.concept_ids])
    for record in records:
        problem = problems[record.problem_id]
        if annotator is not None:
            labels_set(problem=problem, annotator=annotator, concepts=[concepts[c] for c in record.concept_ids])
        else:
            _ground_truth_write(problem, set(record.concept_ids), None)
    return len(records)


@transaction.atomic
def words_select(*, add: list[str], remove: list[str], user: Any = None) -> int:
    """Add and remove words of the TA-selected list; returns the list's new size."""
    from concepts.models import SelectedWord

    SelectedWord.objects.filter(word__in=[w for w in remove if w not in add]).delete()
    SelectedWord.objects.bulk_create([SelectedWord(word=w[:100], selected_by=user) for w in set(add)], ignore_conflicts=True)
    return SelectedWord.objects.count()


# --- the neural extractor (the paper's Table 3) ---------------------------------------------------

# A training override's name -> (type, what training can run with, that in words).
NEURAL_PARAMS: dict[str, tuple[type, Callable[[float], bool], str]] = {
    "epochs": (int, lambda v: v >= 1, "a whole number of at least 1"),
    "pretrain_epochs": (int, lambda v: v >= 0, "a whole number of at least 0"),
    "lr": (float, lambda v: v > 0, "a positive number"),
    "test_fraction": (float, lambda v: 0 < v < 1, "a number between 0 and 1"),
    "transfer_sources": (int, lambda v: v >= 0, "a whole number of at least 0"),
    "min_count": (int, lambda v: v >= 1, "a whole number of at least 1"),
    "word_dim": (int, lambda v: v >= 1, "a whole number of at least 1"),
}
MAX_ROUNDS = 1000


class ExperimentInputError(ValueError):
    """An experiment that cannot run as asked (unknown concept, too few labels): saved on the row, not retried."""


class _Cancelled(Exception):
    pass


def neural_experiment_start(
    *,
    concepts: list[str],
    schemes: list[str] | None = None,
    rounds: int = 100,
    seed: int = 0,
    params: dict[str, Any] | None = None,
    suggest: bool = True,
    user: Any = None,
) -> NeuralExperiment:
    """Check the request and queue it; raises ExperimentInputError saying what is wrong."""
    from concepts.neural.schemes import SCHEMES

    schemes = list(schemes or SCHEMES)
    if not concepts:
        raise ExperimentInputError("choose at least one concept")
    known = set(Concept.objects.filter(slug__in=concepts).values_list("slug", flat=True))
    missing = [s for s in concepts if s not in known]
    if missing:
        raise ExperimentInputError(f"unknown concepts: {', '.join(missing)}")
    bad = [s for s in schemes if s not in SCHEMES]
    if bad:
        raise ExperimentInputError(f"unknown schemes: {', '.join(bad)}; known: {', '.join(SCHEMES)}")
    if not 1 <= rounds <= MAX_ROUNDS:
        raise ExperimentInputError(f"rounds must be between 1 and {MAX_ROUNDS}, got {rounds}")
    params = dict(params or {})
    for name, value in params.items():
        if name not in NEURAL_PARAMS:
            raise ExperimentInputError(f"unknown parameter {name!r}; known: {', '.join(NEURAL_PARAMS)}")
        kind, allowed, what = NEURAL_PARAMS[name]
        try:
            params[name] = kind(value)
        except (TypeError, ValueError, OverflowError):
            raise ExperimentInputError(f"parameter {name!r} must be a number, got {value!r}") from None
        # Checked here, not when training fails half an hour later (nan, inf and negatives parse as floats).
        if not (math.isfinite(params[name]) and allowed(params[name])):
            raise ExperimentInputError(f"parameter {name!r} must be {what}, got {value!r}")
    counts = dict(
        GroundTruthLabel.objects.filter(concept__slug__in=concepts).values_list("concept__slug").annotate(n=Count("problem", distinct=True))
    )
    labelled = GroundTruthLabel.objects.values("problem").distinct().count()
    few = [f"{s} ({counts.get(s, 0)})" for s in concepts if counts.get(s, 0) < 2 or labelled - counts.get(s, 0) < 2]
    if few:
        raise ExperimentInputError(f"each concept needs at least 2 labelled positive and 2 negative problems: {', '.join(few)}")
    experiment = NeuralExperiment.objects.create(
        concepts=list(concepts), schemes=schemes, rounds=rounds, seed=seed, params=params, suggest=suggest, created_by=user
    )
    job_enqueue(job=experiment, task=nn_extractor_experiment_task)
    return experiment


def neural_experiment_cancel(*, experiment: NeuralExperiment) -> bool:
    """Cancel a queued or running experiment; a running one stops after its current concept and scheme."""
    return bool(
        NeuralExperiment.objects.filter(pk=experiment.pk, status__in=[JobStatus.PENDING, JobStatus.RUNNING]).update(
            status=JobStatus.CANCELLED, finished_at=timezone.now()
        )
    )


def neural_inputs(*, word_dim: int = 300, seed: int = 0) -> tuple[list[int], Any]:
    """Problem ids (bank order) and the pure ExtractorInputs: tokens, expert labels, selected words, word vectors."""
    from concepts.neural.experiment import ExtractorInputs, word_vector_table
    from concepts.selectors import selected_words
    from embeddings.algorithms.text import tokenize

    rows = list(Problem.objects.order_by("id").values_list("id", "text"))
    if not rows:
        raise ExperimentInputError("the bank has no problems")
    labels: dict[int, set[str]] = {}
    for pid, slug in GroundTruthLabel.objects.values_list("problem_id", "concept__slug"):
        labels.setdefault(pid, set()).add(slug)
    tokens = [tokenize(text) for _, text in rows]
    vectors, dim, source = word_vector_table(tokens, os.getenv("GLOVE_PATH") or None, dim=word_dim, seed=seed)
    inputs = ExtractorInputs(
        token_lists=tokens,
        labels=[frozenset(labels[pid]) if pid in labels else None for pid, _ in rows],
        word_vectors=vectors,
        dim=dim,
        selected_words=frozenset(selected_words()),
        word_vectors_source=source,
    )
    return [pid for pid, _ in rows], inputs


def _suggestion_rows(
    experiment: NeuralExperiment, ids: list[int], inputs: Any, probabilities: dict[str, Any], best: dict[str, str], threshold: float
) -> list[NeuralSuggestion]:
    concept_ids = dict(Concept.objects.filter(slug__in=probabilities).values_list("slug", "id"))
    run = extraction_run_latest_done(ExtractionSource.RULES)
    by_rules: set[tuple[int, str]] = set()
    if run is not None:
        by_rules = set(ExtractedConcept.objects.filter(run=run, concept__slug__in=probabilities).values_list("problem_id", "concept__slug"))
    rows = []
    for slug, p in probabilities.items():
        for row, pid in enumerate(ids):
            labels = inputs.labels[row]
            predicted = bool(p[row] >= threshold)
            in_labels = None if labels is None else slug in labels
            in_rules = (pid, slug) in by_rules
            if predicted or in_labels or in_rules:
                rows.append(
                    NeuralSuggestion(
                        experiment=experiment, problem_id=pid, concept_id=concept_ids[slug], scheme=best[slug],
                        probability=float(p[row]), predicted=predicted, in_labels=in_labels, in_rules=in_rules,
                    )
                )
    return rows


def neural_experiment_execute(*, experiment_id: int, redelivered: bool = False) -> None:
    """Run the rounds, store the table, then (if asked) the best extractor's suggestions. Claimed once."""
    from concepts.neural.experiment import Features, TrainConfig, fit_extractor, run_experiment

    if not job_claim(model=NeuralExperiment, job_id=experiment_id, redelivered=redelivered):
        return
    experiment = NeuralExperiment.objects.get(id=experiment_id)
    params = dict(experiment.params)
    word_dim = params.pop("word_dim", 300)
    config = TrainConfig(**params)
    share = 0.9 if experiment.suggest else 1.0

    def report(fraction: float) -> None:
        if not NeuralExperiment.objects.filter(id=experiment_id, status=JobStatus.RUNNING).update(progress=fraction):
            raise _Cancelled()

    started = time.monotonic()
    try:
        ids, inputs = neural_inputs(word_dim=word_dim, seed=experiment.seed)
        features = Features(inputs, config.min_count)  # bags of words shared by the rounds and the suggesting extractors
        report(0.02)
        results = run_experiment(
            inputs, experiment.concepts, experiment.schemes, experiment.rounds, experiment.seed, config,
            on_progress=lambda f: report(0.02 + (share - 0.02) * f), features=features,
        )
        results["seconds"] = round(time.monotonic() - started, 2)
        probabilities = {}
        if experiment.suggest:
            for i, slug in enumerate(experiment.concepts):
                probabilities[slug] = fit_extractor(inputs, slug, results["best"][slug], experiment.seed, config, features=features)
                report(share + (1 - share) * (i + 1) / len(experiment.concepts))
        suggestions = _suggestion_rows(experiment, ids, inputs, probabilities, results["best"], config.threshold)
    except _Cancelled:
        return
    except ValueError as exc:  # too few labels, no selected words, a bad GloVe file: what the user must fix
        # Only a running experiment fails: one cancelled meanwhile stays cancelled, as the user asked.
        NeuralExperiment.objects.filter(id=experiment_id, status=JobStatus.RUNNING).update(
            status=JobStatus.FAILED, error=str(exc), finished_at=timezone.now()
        )
        logger.warning("neural experiment %s failed: %s", experiment_id, exc)
        return
    with transaction.atomic():
        if not NeuralExperiment.objects.filter(id=experiment_id, status=JobStatus.RUNNING).update(
            status=JobStatus.DONE, progress=1.0, results=results, finished_at=timezone.now()
        ):
            return  # cancelled meanwhile: nothing of it is kept
        NeuralSuggestion.objects.bulk_create(suggestions, batch_size=5000)
    logger.info("Neural experiment %s: %d concepts x %d schemes x %d rounds [%.1fs]", experiment_id, len(experiment.concepts), len(experiment.schemes), experiment.rounds, time.monotonic() - started)
