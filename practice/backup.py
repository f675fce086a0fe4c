"""Backup and restore of a whole course: every row of problems/, concepts/, embeddings/ and practice/,
and the users those rows name, as one JSON document (README "Backup and restore").

Rows refer to each other by natural keys (a module's name, a concept's slug, a problem's
(collection, id), a username), never by database ids, so a restore may give every row a new id.
Jobs without a natural key (extraction runs, reports, embedding runs, experiments) carry a `key`
that only links records inside the file. It lives in `practice`, the app every other one sits
under, because it reads and writes all four apps (like `load_demo`); embeddings/ may not import
practice/, so it cannot live any lower.

Plain columns are copied field by field from the models, so a column added later is carried
without a change here; a new relation or model fails loudly (`_columns`,
tests/practice/test_course_backup.py) instead of being left out of backups silently.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import functools
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, models, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from concepts.models import (
    Concept,
    ConceptRule,
    ConceptRuleVersion,
    ExtractedConcept,
    ExtractionRun,
    ExtractorReport,
    GroundTruthLabel,
    HeldOutProblem,
    LabelResolution,
    LabelSet,
    NeuralExperiment,
    NeuralSuggestion,
    SelectedWord,
)
from embeddings.models import ActiveEmbedding, ConceptSource, EmbeddingDefault, EmbeddingRun, SimilarityTriplet, TextVector, TripletVote
from problems.models import LoginFailure, Module, Problem
from practice.models import Attempt
from problems.roles import ROLES

FORMAT = "prob2vec-course"
VERSION = 1

# Top-level lists of the file, in the order they are written and restored (each refers only to earlier ones).
KINDS = (
    "users", "modules", "concepts", "problems", "rules", "labels", "label_sets", "label_resolutions",
    "held_out", "selected_words", "triplets", "attempts", "extraction_runs", "extractor_reports", "embedding_runs",
    "active_embedding", "embedding_default", "neural_experiments",
)
# Kinds that are one object (or null), not a list. A file written before embedding_default was a kind
# keeps the site default in active_embedding.site_default, and restores as before.
SINGLE_KINDS = ("active_embedding", "embedding_default")
HEADER = ("format", "version", "exported_at", "counts")

# Every model of the four apps but NOT_BACKED_UP; a test fails when a model is added and not listed (and backed up) here.
COURSE_MODELS: tuple[type[models.Model], ...] = (
    Module, Problem, Attempt,
    Concept, ConceptRule, ConceptRuleVersion, GroundTruthLabel, LabelSet, LabelResolution, HeldOutProblem, SelectedWord,
    ExtractionRun, ExtractedConcept, ExtractorReport, NeuralExperiment, NeuralSuggestion,
    SimilarityTriplet, TripletVote, EmbeddingRun, ActiveEmbedding, EmbeddingDefault,
)
# Models of those apps left out on purpose: failed sign-ins live 15 minutes and mean nothing elsewhere;
# text vectors are a cache of the sentence model over the problem texts (the next rebuild that needs
# them encodes them again), and would make the file ~2 kB per problem larger.
NOT_BACKED_UP: tuple[type[models.Model], ...] = (LoginFailure, TextVector)

# Permissions of the models that moved app since a file may have been written (Attempt: problems/ ->
# practice/ in issue 16): a file naming the old label still restores.
MOVED_PERMISSIONS = {f"problems.{verb}_attempt": f"practice.{verb}_attempt" for verb in ("add", "change", "delete", "view")}

# What the one-line summaries count: each top-level list, and the records nested in them.
COUNT_NAMES = (
    "users", "modules", "concepts", "problems", "rules", "rule_versions", "labels", "label_sets",
    "label_resolutions", "held_out", "selected_words", "triplets", "votes", "attempts", "extraction_runs",
    "extracted_concepts", "extractor_reports", "embedding_runs", "active_embedding", "embedding_default", "neural_experiments",
    "neural_suggestions",
)
_NESTED = {"rules": ("versions", "rule_versions"), "triplets": ("votes", "votes"),
           "extraction_runs": ("extracted", "extracted_concepts"), "neural_experiments": ("suggestions", "neural_suggestions")}

_MISSING_PROBLEM = -1  # a run's vector row for a problem deleted before the export: matches no problem

# Keys of an embedding run's `notes` that hold problem ids, written as problem keys like `problem_ids`: each
# entry is [anchor, positive, negative, right] (embeddings/services.py; embeddings/selectors.run_triplets_correct).
# Nothing else in a run's notes, an extraction run's details or an experiment's results names a problem.
NOTES_TRIPLETS = ("triplet_share_out_of_fold",)


class BackupError(ValueError):
    """A file that cannot be restored, or a database that must not be restored into; says what and where."""


@dataclass
class CourseSummary:
    """Records per kind that an export wrote or an import restored (nested ones included)."""

    counts: dict[str, int]
    existing_users: int = 0

    def summary(self) -> str:
        parts = [f"{self.counts.get(name, 0)} {name.replace('_', ' ')}" for name in COUNT_NAMES]
        if self.existing_users:
            parts[0] += f" ({self.existing_users} already here, kept as they were)"
        return ", ".join(parts)


def backup_counts(data: dict[str, Any]) -> dict[str, int]:
    """Records per kind in a backup document, nested ones (rule versions, votes, ...) included."""
    counts = {name: 0 for name in COUNT_NAMES}
    for kind in KINDS:
        value = data.get(kind)
        if kind in SINGLE_KINDS:
            counts[kind] = int(value is not None)
            continue
        counts[kind] = len(value or [])
        if kind in _NESTED:
            nested, name = _NESTED[kind]
            counts[name] = sum(len(r.get(nested) or []) for r in value or [])
    return counts


# --- columns: every plain field of a model, JSON-ready -------------------------------------------


@functools.cache
def _columns(model: type[models.Model], handled: frozenset[str]) -> tuple[models.Field, ...]:
    """The model's plain columns, less `handled` (written by the caller). A relation the caller
    does not handle is a programming error: it would silently be left out of every backup."""
    relations = {f.name for f in model._meta.concrete_fields if f.is_relation} | {f.name for f in model._meta.many_to_many}
    unknown = relations - handled
    if unknown:
        raise RuntimeError(f"course backup does not handle {model._meta.label}.{', '.join(sorted(unknown))}: add it to practice/backup.py")
    return tuple(f for f in model._meta.concrete_fields if not f.primary_key and not f.is_relation and f.name not in handled)


def _encode(f: models.Field, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(f, models.BinaryField):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    return value


def _out(model: type[models.Model], row: dict[str, Any], handled: Iterable[str] = ()) -> dict[str, Any]:
    """One row (from `.values()`) as a record of its plain columns."""
    return {f.name: _encode(f, row[f.attname]) for f in _columns(model, frozenset(handled))}


def _decode(f: models.Field, value: Any, where: str) -> Any:
    what = f"{where}: {f.name!r}"
    if value is None:
        if f.null:
            return None
        raise BackupError(f"{what} must not be null")
    if isinstance(f, models.BinaryField):
        if not isinstance(value, str):
            raise BackupError(f"{what} must be base64 text")
        try:
            return base64.b64decode(value.encode("ascii"), validate=True)
        except (ValueError, binascii.Error):
            raise BackupError(f"{what} is not valid base64") from None
    if isinstance(f, models.JSONField):
        # The model's default says which the code reads: a dict (params, notes, ...) or a list (losses, ...).
        expected = f.default if f.default in (dict, list) else None
        if expected is not None and not isinstance(value, expected):
            raise BackupError(f"{what} must be a JSON {'object' if expected is dict else 'list'}, got {_json_kind(value)}")
        return value
    if isinstance(f, models.DateTimeField):
        try:
            parsed = parse_datetime(value) if isinstance(value, str) else None
        except ValueError:  # well formed, but no such date (month 13)
            parsed = None
        if parsed is None:
            raise BackupError(f"{what} must be an ISO 8601 date and time, got {value!r}")
        return timezone.make_aware(parsed, datetime.timezone.utc) if timezone.is_naive(parsed) else parsed
    if isinstance(f, models.BooleanField):
        ok = isinstance(value, bool)
    elif isinstance(f, models.IntegerField):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(f, models.FloatField):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(f, (models.CharField, models.TextField)):
        ok = isinstance(value, str)
    else:
        try:
            value, ok = f.to_python(value), True
        except ValidationError:
            ok = False
    if not ok:
        raise BackupError(f"{what} has the wrong type: {value!r}")
    if f.choices and value not in {key for key, _ in f.flatchoices}:
        raise BackupError(f"{what}: {value!r} is not one of {', '.join(str(k) for k, _ in f.flatchoices)}")
    try:
        f.run_validators(value)
    except ValidationError as exc:
        raise BackupError(f"{what}: {'; '.join(exc.messages)}") from None
    return value


def _json_kind(value: Any) -> str:
    for kind, name in ((bool, "true/false"), (dict, "an object"), (list, "a list"), (str, "text"), ((int, float), "a number")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _in(model: type[models.Model], record: dict[str, Any], where: str, handled: Iterable[str] = ()) -> dict[str, Any]:
    """Model keyword arguments from a record's plain columns; a column the file leaves out takes its default."""
    handled = frozenset(handled)
    columns = _columns(model, handled)
    unknown = sorted(set(record) - {f.name for f in columns} - handled)
    if unknown:
        raise BackupError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}")
    return {f.attname: _decode(f, record[f.name], where) for f in columns if f.name in record}


# --- export ---------------------------------------------------------------------------------------


def course_export() -> dict[str, Any]:
    """Everything of the course as one JSON-ready document (read in one snapshot on PostgreSQL)."""
    outer = connection.in_atomic_block
    with transaction.atomic():
        if not outer and connection.vendor == "postgresql":
            with connection.cursor() as cursor:  # one snapshot for every query, not one per query
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        return _Exporter().run()


class _Exporter:
    def __init__(self) -> None:
        User = get_user_model()
        self.usernames: dict[int, str] = dict(User.objects.values_list("id", User.USERNAME_FIELD))
        self.referenced: set[int] = set()
        self.modules = dict(Module.objects.values_list("id", "name"))
        self.concepts = dict(Concept.objects.values_list("id", "slug"))
        self.problems = {pid: [c, s] for pid, c, s in Problem.objects.values_list("id", "collection", "source_id")}
        self.versions = {vid: [slug, n] for vid, slug, n in ConceptRuleVersion.objects.values_list("id", "rule__concept__slug", "number")}

    def embedding_default(self) -> dict[str, Any] | None:
        """The instructor's site default embedding, whether or not a run is active yet (null: never chosen)."""
        row = EmbeddingDefault.objects.filter(pk=1).values().first()
        if row is None:
            return None
        return {**_out(EmbeddingDefault, row, {"updated_by"}), "updated_by": self.user(row["updated_by_id"])}

    def user(self, user_id: int | None) -> str | None:
        if user_id is None:
            return None
        self.referenced.add(user_id)
        return self.usernames[user_id]

    def run(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": FORMAT, "version": VERSION, "exported_at": timezone.now().isoformat()}
        data |= {
            "modules": [_out(Module, row) for row in Module.objects.order_by("id").values()],
            "concepts": [
                {**_out(Concept, row, {"module"}), "module": self.modules.get(row["module_id"])}
                for row in Concept.objects.order_by("id").values()
            ],
            "problems": [
                {**_out(Problem, row, {"module", "author"}), "module": self.modules.get(row["module_id"]), "author": self.user(row["author_id"])}
                for row in Problem.objects.order_by("id").values().iterator(chunk_size=2000)
            ],
            "rules": self.rules(),
            "labels": [
                {**_out(GroundTruthLabel, row, {"problem", "concept", "created_by"}), "problem": self.problems[row["problem_id"]],
                 "concept": self.concepts[row["concept_id"]], "created_by": self.user(row["created_by_id"])}
                for row in GroundTruthLabel.objects.order_by("id").values().iterator(chunk_size=5000)
            ],
            "label_sets": self.label_sets(),
            "label_resolutions": self.label_resolutions(),
            "held_out": [
                {**_out(HeldOutProblem, row, {"problem", "marked_by"}), "problem": self.problems[row["problem_id"]],
                 "marked_by": self.user(row["marked_by_id"])}
                for row in HeldOutProblem.objects.order_by("id").values()
            ],
            "selected_words": [
                {**_out(SelectedWord, row, {"selected_by"}), "selected_by": self.user(row["selected_by_id"])}
                for row in SelectedWord.objects.order_by("id").values()
            ],
            "triplets": self.triplets(),
            "attempts": [
                {**_out(Attempt, row, {"student", "problem"}), "student": self.user(row["student_id"]), "problem": self.problems[row["problem_id"]]}
                for row in Attempt.objects.order_by("id").values().iterator(chunk_size=5000)
            ],
            "extraction_runs": self.extraction_runs(),
            "extractor_reports": [
                {"key": row["id"], **_out(ExtractorReport, row, {"created_by"}), "created_by": self.user(row["created_by_id"])}
                for row in ExtractorReport.objects.order_by("id").values()
            ],
            "embedding_runs": self.embedding_runs(),
            "active_embedding": next(
                (
                    {**_out(ActiveEmbedding, row, {"run", "activated_by"}), "run": row["run_id"], "activated_by": self.user(row["activated_by_id"])}
                    for row in ActiveEmbedding.objects.filter(pk=1).values()
                ),
                None,
            ),
            "embedding_default": self.embedding_default(),
            "neural_experiments": self.neural_experiments(),
        }
        data["users"] = self.users()  # last: it holds everyone the records above named
        data["counts"] = backup_counts(data)
        return {key: data[key] for key in (*HEADER, *KINDS)}

    def users(self) -> list[dict[str, Any]]:
        """Everyone a record names, and everyone holding a course role (a TA who has not acted yet)."""
        User = get_user_model()
        members = set(User.objects.filter(groups__name__in=ROLES).values_list("id", flat=True))
        ids = sorted(self.referenced | members)
        groups: dict[int, list[str]] = {}
        for uid, name in User.groups.through.objects.filter(user_id__in=ids).values_list("user_id", "group__name"):
            groups.setdefault(uid, []).append(name)
        perms: dict[int, list[str]] = {}
        rows = User.user_permissions.through.objects.filter(user_id__in=ids).values_list(
            "user_id", "permission__content_type__app_label", "permission__codename"
        )
        for uid, app, codename in rows:
            perms.setdefault(uid, []).append(f"{app}.{codename}")
        return [
            {**_out(User, row, {"groups", "user_permissions"}), "groups": sorted(groups.get(row["id"], [])),
             "user_permissions": sorted(perms.get(row["id"], []))}
            for row in User.objects.filter(id__in=ids).order_by("id").values()
        ]

    def rules(self) -> list[dict[str, Any]]:
        versions: dict[int, list[dict[str, Any]]] = {}
        for row in ConceptRuleVersion.objects.order_by("rule_id", "number").values():
            versions.setdefault(row["rule_id"], []).append(
                {**_out(ConceptRuleVersion, row, {"rule", "author"}), "author": self.user(row["author_id"])}
            )
        return [
            {**_out(ConceptRule, row, {"concept", "updated_by"}), "concept": self.concepts[row["concept_id"]],
             "updated_by": self.user(row["updated_by_id"]), "versions": versions.get(row["id"], [])}
            for row in ConceptRule.objects.order_by("id").values()
        ]

    def _concept_lists(self, through: Any, owner: str) -> dict[int, list[str]]:
        lists: dict[int, list[str]] = {}
        for owner_id, concept_id in through.objects.values_list(owner, "concept_id"):
            lists.setdefault(owner_id, []).append(self.concepts[concept_id])
        return {key: sorted(slugs) for key, slugs in lists.items()}

    def label_sets(self) -> list[dict[str, Any]]:
        concepts = self._concept_lists(LabelSet.concepts.through, "labelset_id")
        return [
            {**_out(LabelSet, row, {"problem", "annotator", "concepts"}), "problem": self.problems[row["problem_id"]],
             "annotator": self.user(row["annotator_id"]), "concepts": concepts.get(row["id"], [])}
            for row in LabelSet.objects.order_by("id").values()
        ]

    def label_resolutions(self) -> list[dict[str, Any]]:
        concepts = self._concept_lists(LabelResolution.concepts.through, "labelresolution_id")
        return [
            {**_out(LabelResolution, row, {"problem", "resolved_by", "concepts"}), "problem": self.problems[row["problem_id"]],
             "resolved_by": self.user(row["resolved_by_id"]), "concepts": concepts.get(row["id"], [])}
            for row in LabelResolution.objects.order_by("id").values()
        ]

    def triplets(self) -> list[dict[str, Any]]:
        votes: dict[int, list[dict[str, Any]]] = {}
        for row in TripletVote.objects.order_by("id").values():
            votes.setdefault(row["triplet_id"], []).append({**_out(TripletVote, row, {"triplet", "voter"}), "voter": self.user(row["voter_id"])})
        handled = {"anchor", "positive", "negative", "module", "proposed_by", "decided_by"}
        return [
            {**_out(SimilarityTriplet, row, handled), "anchor": self.problems[row["anchor_id"]], "positive": self.problems[row["positive_id"]],
             "negative": self.problems[row["negative_id"]], "module": self.modules.get(row["module_id"]),
             "proposed_by": self.user(row["proposed_by_id"]), "decided_by": self.user(row["decided_by_id"]), "votes": votes.get(row["id"], [])}
            for row in SimilarityTriplet.objects.order_by("id").values()
        ]

    def extraction_runs(self) -> list[dict[str, Any]]:
        current = _extraction_fingerprint()
        extracted: dict[int, list[dict[str, Any]]] = {}
        rows = ExtractedConcept.objects.order_by("run_id", "id").values().iterator(chunk_size=5000)
        for row in rows:
            extracted.setdefault(row["run_id"], []).append({
                **_out(ExtractedConcept, row, {"run", "problem", "concept", "rule_version"}),
                "problem": self.problems[row["problem_id"]], "concept": self.concepts[row["concept_id"]],
                "rule_version": self.versions.get(row["rule_version_id"]),
            })
        runs = {run.pk: run for run in ExtractionRun.objects.all()}

        def up_to_date(row: dict[str, Any]) -> bool:
            if row["source"] == "hybrid":  # a hybrid run is current for its rules run and today's labels
                rules_run = runs.get(row["rules_run_id"])
                return rules_run is not None and row["fingerprint"] == _hybrid_fingerprint(rules_run)
            return row["fingerprint"] == current

        return [
            {"key": row["id"], **_out(ExtractionRun, row, {"created_by", "rules_run"}), "created_by": self.user(row["created_by_id"]),
             "rules_run": row["rules_run_id"], "fingerprint_current": up_to_date(row), "extracted": extracted.get(row["id"], [])}
            for row in ExtractionRun.objects.order_by("id").values()
        ]

    def embedding_runs(self) -> list[dict[str, Any]]:
        out = []
        handled = {"created_by", "extraction_run", "problem_ids", "missing", "notes"}
        for row in EmbeddingRun.objects.order_by("id").values().iterator(chunk_size=20):
            ids = np.frombuffer(bytes(row["problem_ids"]), dtype=np.int64).tolist()
            out.append({
                "key": row["id"], **_out(EmbeddingRun, row, handled), "created_by": self.user(row["created_by_id"]),
                "extraction_run": row["extraction_run_id"],
                # Rows of problems deleted since the run was built have no key left: null.
                "problem_ids": [self.problems.get(pid) for pid in ids],
                "missing": [self.problems.get(pid) for pid in row["missing"]],
                "notes": self.run_notes(row["notes"]),
                "fingerprint_current": row["fingerprint"] == _embedding_fingerprint(row["method"], row["source"], row["params"]),
            })
        return out

    def run_notes(self, notes: Any) -> Any:
        """A run's notes, with the problem ids of NOTES_TRIPLETS as problem keys (null: deleted since)."""
        if not isinstance(notes, dict) or not any(isinstance(notes.get(name), list) for name in NOTES_TRIPLETS):
            return notes
        notes = dict(notes)
        for name in NOTES_TRIPLETS:
            if isinstance(notes.get(name), list):
                notes[name] = [[*(self.problems.get(pid) for pid in entry[:3]), *entry[3:]] for entry in notes[name]]
        return notes

    def neural_experiments(self) -> list[dict[str, Any]]:
        suggestions: dict[int, list[dict[str, Any]]] = {}
        for row in NeuralSuggestion.objects.order_by("experiment_id", "id").values().iterator(chunk_size=5000):
            suggestions.setdefault(row["experiment_id"], []).append({
                **_out(NeuralSuggestion, row, {"experiment", "problem", "concept"}),
                "problem": self.problems[row["problem_id"]], "concept": self.concepts[row["concept_id"]],
            })
        return [
            {"key": row["id"], **_out(NeuralExperiment, row, {"created_by"}), "created_by": self.user(row["created_by_id"]),
             "suggestions": suggestions.get(row["id"], [])}
            for row in NeuralExperiment.objects.order_by("id").values()
        ]


def _extraction_fingerprint() -> str:
    """What `extraction_run_start` would look for now: a run with it needs no new work."""
    # The services' private fingerprints are reused on purpose: a restore must agree with them exactly.
    from concepts.selectors import rules_enabled
    from concepts.services import _fingerprint

    return _fingerprint({rule.slug: model.version for rule, model in rules_enabled()})


def _hybrid_fingerprint(rules_run: ExtractionRun) -> str:
    from concepts.services import _hybrid_fingerprint as fingerprint

    return fingerprint(rules_run)


def _embedding_fingerprint(method: str, source: str, params: dict[str, Any]) -> str | None:
    from embeddings.algorithms.methods import METHODS
    from embeddings.services import _state_fingerprint

    if method not in METHODS:
        return None
    return _state_fingerprint(method, source, params)[0]


# --- import ---------------------------------------------------------------------------------------


@transaction.atomic
def course_import(*, data: Any, replace: bool = False) -> CourseSummary:
    """Restore a course_export document into a database with no course in it (or, with `replace`,
    after deleting the course there). One transaction: on any BackupError nothing is written."""
    if not isinstance(data, dict):
        raise BackupError("not a course backup: the document is not a JSON object")
    if data.get("format") != FORMAT:
        raise BackupError(f"not a course backup: format is {data.get('format')!r}, expected {FORMAT!r}")
    if data.get("version") != VERSION:
        raise BackupError(f"unsupported {FORMAT} version {data.get('version')!r}: this version reads version {VERSION}")
    unknown = sorted(set(data) - set(HEADER) - set(KINDS))
    if unknown:
        raise BackupError(f"unknown top-level key(s) {', '.join(map(repr, unknown))}")
    held = [m._meta.label for m in COURSE_MODELS if m.objects.exists()]
    if held and not replace:
        raise BackupError(
            f"the database already holds a course ({', '.join(held)}): import_course restores into an empty "
            "database; pass --replace to delete the course there first"
        )
    if held:
        course_wipe()
    return _Importer(data).run()


def course_wipe() -> None:
    """Delete every course row (users stay): children first, so no cascade has much to collect."""
    for model in (
        ActiveEmbedding, EmbeddingDefault, EmbeddingRun, NeuralSuggestion, NeuralExperiment, ExtractorReport, ExtractedConcept, ExtractionRun,
        TripletVote, SimilarityTriplet, Attempt, LabelResolution, LabelSet, GroundTruthLabel, ConceptRuleVersion,
        ConceptRule, SelectedWord, TextVector, Problem, Concept, Module,
    ):
        model.objects.all().delete()


def _records(value: Any, where: str) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise BackupError(f"{where} must be a list of records")
    for i, record in enumerate(value):
        if not isinstance(record, dict):
            raise BackupError(f"{where}[{i}] is not an object")
    return value


def _text(record: dict[str, Any], name: str, where: str) -> str:
    value = record.get(name)
    if not isinstance(value, str) or not value:
        raise BackupError(f"{where}: {name!r} is missing or not text")
    return value


def _key(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _ref(table: dict[Any, int], record: dict[str, Any], name: str, what: str, where: str, *, null: bool = True) -> int | None:
    """The new id of the row a record names by natural key."""
    value = record.get(name)
    if value is None:
        if null:
            return None
        raise BackupError(f"{where}: {name!r} is missing")
    try:
        return table[_key(value)]
    except (KeyError, TypeError):
        raise BackupError(f"{where}: {name!r} names an unknown {what} {value!r}") from None


def _unique(seen: set[Any], key: Any, where: str, what: str) -> None:
    if key in seen:
        raise BackupError(f"{where}: duplicate {what} {key!r}")
    seen.add(key)


def _create(model: type[models.Model], objs: list[models.Model], where: str) -> list[models.Model]:
    """Insert rows in file order, keeping the file's timestamps (auto_now fields set themselves on insert)."""
    stamped = [f.attname for f in model._meta.concrete_fields if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)]
    stamps = [[getattr(obj, name) for name in stamped] for obj in objs]
    try:
        model.objects.bulk_create(objs, batch_size=2000)
        if stamped and objs:
            for obj, values in zip(objs, stamps):
                for name, value in zip(stamped, values):
                    if value is not None:
                        setattr(obj, name, value)
            model.objects.bulk_update(objs, stamped, batch_size=1000)
    except DatabaseError as exc:
        raise BackupError(f"{where}: the database refused a record: {str(exc).strip()}") from None
    return objs


def _create_children(
    model: type[models.Model], parents: list[models.Model], children: list[list[models.Model]], parent_field: str, where: str
) -> list[models.Model]:
    """Insert each parent's children (``children[k]`` belongs to ``parents[k]``, already inserted), pointing
    ``parent_field`` at the parent's new id; returns them all, in file order."""
    flat = []
    for parent, rows in zip(parents, children):
        for row in rows:
            setattr(row, parent_field, parent.pk)
            flat.append(row)
    return _create(model, flat, where)


class _Importer:
    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.counts: dict[str, int] = {name: 0 for name in COUNT_NAMES}
        self.users: dict[str, int] = {}
        self.existing_users = 0
        self.modules: dict[str, int] = {}
        self.concepts: dict[str, int] = {}
        self.problems: dict[tuple[str, str], int] = {}
        self.versions: dict[tuple[str, int], int] = {}
        self.extraction_runs: dict[Any, int] = {}
        self.embedding_runs: dict[Any, int] = {}
        self.current_extraction: list[int] = []
        self.current_embedding: dict[int, str] = {}  # new id -> where in the file
        self.legacy_default: dict[str, Any] | None = None  # active_embedding.site_default of a file written before embedding_default

    def records(self, kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
        for i, record in enumerate(_records(self.data.get(kind), kind)):
            yield f"{kind}[{i}]", record

    def run(self) -> CourseSummary:
        for kind in KINDS:
            getattr(self, f"import_{kind}")()
        self.refresh_fingerprints()
        return CourseSummary(self.counts, self.existing_users)

    def user(self, record: dict[str, Any], name: str, where: str, *, null: bool = True) -> int | None:
        return _ref(self.users, record, name, "user", where, null=null)

    def problem(self, record: dict[str, Any], name: str, where: str) -> int:
        return _ref(self.problems, record, name, "problem", where, null=False)  # type: ignore[return-value]

    def concept(self, record: dict[str, Any], name: str, where: str) -> int:
        return _ref(self.concepts, record, name, "concept", where, null=False)  # type: ignore[return-value]

    def concept_list(self, record: dict[str, Any], where: str) -> list[int]:
        slugs = record.get("concepts", [])
        if not isinstance(slugs, list):
            raise BackupError(f"{where}: 'concepts' must be a list of concept slugs")
        out = []
        for slug in slugs:
            if not isinstance(slug, str) or slug not in self.concepts:
                raise BackupError(f"{where}: 'concepts' names an unknown concept {slug!r}")
            out.append(self.concepts[slug])
        return out

    def job_key(self, record: dict[str, Any], seen: dict[Any, int], where: str) -> Any:
        key = record.get("key")
        if not isinstance(key, (int, str)) or isinstance(key, bool):
            raise BackupError(f"{where}: 'key' is missing (a number or text that other records use to name this one)")
        if key in seen:
            raise BackupError(f"{where}: duplicate key {key!r}")
        return key

    def flag(self, record: dict[str, Any], name: str, where: str) -> bool:
        value = record.get(name, False)
        if not isinstance(value, bool):
            raise BackupError(f"{where}: {name!r} must be true or false")
        return value

    # One method per kind, in KINDS order.

    def import_users(self) -> None:
        User = get_user_model()
        key_field = User.USERNAME_FIELD
        existing = dict(User.objects.values_list(key_field, "id"))
        groups = dict(Group.objects.values_list("name", "id"))
        perms = {f"{a}.{c}": pid for a, c, pid in Permission.objects.values_list("content_type__app_label", "codename", "id")}
        new: list[tuple[str, Any, list[str], list[int]]] = []
        seen: set[str] = set()
        for where, record in self.records("users"):
            name = _text(record, key_field, where)
            _unique(seen, name, where, "user")
            if name in existing:  # an account made on this site before the restore stays as it is
                self.users[name] = existing[name]
                self.existing_users += 1
                continue
            user = User(**_in(User, record, where, {"groups", "user_permissions"}))
            names, codes = record.get("groups", []), record.get("user_permissions", [])
            if isinstance(codes, list):  # files written before Attempt moved say problems.add_attempt
                codes = [MOVED_PERMISSIONS.get(c, c) if isinstance(c, str) else c for c in codes]
            if not isinstance(names, list) or not all(isinstance(g, str) and g for g in names):
                raise BackupError(f"{where}: 'groups' must be a list of group names")
            if not isinstance(codes, list) or any(c not in perms for c in codes):
                bad = [c for c in codes if c not in perms] if isinstance(codes, list) else codes
                raise BackupError(f"{where}: 'user_permissions' names unknown permission(s) {bad!r}")
            new.append((name, user, names, [perms[c] for c in codes]))
        _create(User, [u for _, u, _, _ in new], "users")
        memberships, grants = [], []
        for name, user, names, perm_ids in new:
            self.users[name] = user.pk
            for group in names:
                if group not in groups:  # a role is made by migrate; any other group is restored by name only
                    groups[group] = Group.objects.create(name=group).pk
                memberships.append(User.groups.through(user_id=user.pk, group_id=groups[group]))
            grants += [User.user_permissions.through(user_id=user.pk, permission_id=pid) for pid in perm_ids]
        User.groups.through.objects.bulk_create(memberships)
        User.user_permissions.through.objects.bulk_create(grants)
        self.counts["users"] = len(seen)

    def import_modules(self) -> None:
        objs = []
        seen: set[str] = set()
        for where, record in self.records("modules"):
            _unique(seen, _text(record, "name", where), where, "module")
            objs.append(Module(**_in(Module, record, where)))
        self.modules = {m.name: m.pk for m in _create(Module, objs, "modules")}
        self.counts["modules"] = len(objs)

    def import_concepts(self) -> None:
        objs = []
        seen: set[str] = set()
        for where, record in self.records("concepts"):
            _unique(seen, _text(record, "slug", where), where, "concept")
            module = _ref(self.modules, record, "module", "module", where)
            objs.append(Concept(**_in(Concept, record, where, {"module"}), module_id=module))
        self.concepts = {c.slug: c.pk for c in _create(Concept, objs, "concepts")}
        self.counts["concepts"] = len(objs)

    def import_problems(self) -> None:
        objs = []
        seen: set[tuple[str, str]] = set()
        for where, record in self.records("problems"):
            key = (_text(record, "collection", where), _text(record, "source_id", where))
            _unique(seen, key, where, "problem (collection, source_id)")
            objs.append(Problem(
                **_in(Problem, record, where, {"module", "author"}),
                module_id=_ref(self.modules, record, "module", "module", where),
                author_id=self.user(record, "author", where),
            ))
        self.problems = {(p.collection, p.source_id): p.pk for p in _create(Problem, objs, "problems")}
        self.counts["problems"] = len(objs)

    def import_rules(self) -> None:
        rules, versions = [], []
        seen: set[str] = set()
        for where, record in self.records("rules"):
            concept = self.concept(record, "concept", where)
            _unique(seen, record["concept"], where, "rule of concept")
            rules.append(ConceptRule(
                **_in(ConceptRule, record, where, {"concept", "updated_by", "versions"}),
                concept_id=concept, updated_by_id=self.user(record, "updated_by", where),
            ))
            numbers: set[int] = set()
            vs = []
            for i, v in enumerate(_records(record.get("versions"), f"{where}.versions")):
                at = f"{where}.versions[{i}]"
                if not isinstance(v.get("number"), int):
                    raise BackupError(f"{at}: 'number' is missing")
                _unique(numbers, v["number"], at, f"version number of rule {record['concept']!r}:")
                vs.append(ConceptRuleVersion(**_in(ConceptRuleVersion, v, at, {"rule", "author"}), author_id=self.user(v, "author", at)))
            versions.append(vs)
        _create(ConceptRule, rules, "rules")
        flat = _create_children(ConceptRuleVersion, rules, versions, "rule_id", "rules[].versions")
        slugs = {c: s for s, c in self.concepts.items()}
        self.versions = {(slugs[rule.concept_id], v.number): v.pk for rule, vs in zip(rules, versions) for v in vs}
        self.counts["rules"], self.counts["rule_versions"] = len(rules), len(flat)

    def import_labels(self) -> None:
        objs = []
        seen: set[tuple[Any, str]] = set()
        for where, record in self.records("labels"):
            problem, concept = self.problem(record, "problem", where), self.concept(record, "concept", where)
            _unique(seen, (_key(record["problem"]), record["concept"]), where, "label (problem, concept)")
            objs.append(GroundTruthLabel(
                **_in(GroundTruthLabel, record, where, {"problem", "concept", "created_by"}),
                problem_id=problem, concept_id=concept, created_by_id=self.user(record, "created_by", where),
            ))
        _create(GroundTruthLabel, objs, "labels")
        self.counts["labels"] = len(objs)

    def import_label_sets(self) -> None:
        objs, concepts = [], []
        seen: set[tuple[Any, str]] = set()
        for where, record in self.records("label_sets"):
            problem, annotator = self.problem(record, "problem", where), self.user(record, "annotator", where, null=False)
            _unique(seen, (_key(record["problem"]), record["annotator"]), where, "label set (problem, annotator)")
            concepts.append(self.concept_list(record, where))
            objs.append(LabelSet(**_in(LabelSet, record, where, {"problem", "annotator", "concepts"}), problem_id=problem, annotator_id=annotator))
        _create(LabelSet, objs, "label_sets")
        through = LabelSet.concepts.through
        _create(through, [through(labelset_id=o.pk, concept_id=c) for o, cs in zip(objs, concepts) for c in cs], "label_sets[].concepts")
        self.counts["label_sets"] = len(objs)

    def import_label_resolutions(self) -> None:
        objs, concepts = [], []
        seen: set[Any] = set()
        for where, record in self.records("label_resolutions"):
            problem = self.problem(record, "problem", where)
            _unique(seen, _key(record["problem"]), where, "resolution of problem")
            concepts.append(self.concept_list(record, where))
            objs.append(LabelResolution(
                **_in(LabelResolution, record, where, {"problem", "resolved_by", "concepts"}),
                problem_id=problem, resolved_by_id=self.user(record, "resolved_by", where),
            ))
        _create(LabelResolution, objs, "label_resolutions")
        through = LabelResolution.concepts.through
        _create(through, [through(labelresolution_id=o.pk, concept_id=c) for o, cs in zip(objs, concepts) for c in cs], "label_resolutions[].concepts")
        self.counts["label_resolutions"] = len(objs)

    def import_held_out(self) -> None:
        objs = []
        seen: set[Any] = set()
        for where, record in self.records("held_out"):
            problem = self.problem(record, "problem", where)
            _unique(seen, _key(record["problem"]), where, "held-out problem")
            objs.append(HeldOutProblem(
                **_in(HeldOutProblem, record, where, {"problem", "marked_by"}),
                problem_id=problem, marked_by_id=self.user(record, "marked_by", where),
            ))
        _create(HeldOutProblem, objs, "held_out")
        self.counts["held_out"] = len(objs)

    def import_selected_words(self) -> None:
        objs = []
        seen: set[str] = set()
        for where, record in self.records("selected_words"):
            _unique(seen, _text(record, "word", where), where, "word")
            objs.append(SelectedWord(**_in(SelectedWord, record, where, {"selected_by"}), selected_by_id=self.user(record, "selected_by", where)))
        _create(SelectedWord, objs, "selected_words")
        self.counts["selected_words"] = len(objs)

    def import_triplets(self) -> None:
        objs, votes = [], []
        seen: set[tuple[Any, ...]] = set()
        handled = {"anchor", "positive", "negative", "module", "proposed_by", "decided_by", "votes"}
        for where, record in self.records("triplets"):
            a, b, c = (self.problem(record, role, where) for role in ("anchor", "positive", "negative"))
            if len({a, b, c}) < 3:
                raise BackupError(f"{where}: anchor, positive and negative must be three different problems")
            _unique(seen, tuple(_key(record[role]) for role in ("anchor", "positive", "negative")), where, "triplet")
            objs.append(SimilarityTriplet(
                **_in(SimilarityTriplet, record, where, handled), anchor_id=a, positive_id=b, negative_id=c,
                module_id=_ref(self.modules, record, "module", "module", where),
                proposed_by_id=self.user(record, "proposed_by", where), decided_by_id=self.user(record, "decided_by", where),
            ))
            voters: set[str] = set()
            vs = []
            for i, v in enumerate(_records(record.get("votes"), f"{where}.votes")):
                at = f"{where}.votes[{i}]"
                voter = self.user(v, "voter", at, null=False)
                _unique(voters, v["voter"], at, "vote by")
                vs.append(TripletVote(**_in(TripletVote, v, at, {"triplet", "voter"}), voter_id=voter))
            votes.append(vs)
        _create(SimilarityTriplet, objs, "triplets")
        flat = _create_children(TripletVote, objs, votes, "triplet_id", "triplets[].votes")
        self.counts["triplets"], self.counts["votes"] = len(objs), len(flat)

    def import_attempts(self) -> None:
        objs = []
        for where, record in self.records("attempts"):
            attempt = Attempt(
                **_in(Attempt, record, where, {"student", "problem"}),
                student_id=self.user(record, "student", where, null=False), problem_id=self.problem(record, "problem", where),
            )
            # json reads NaN and Infinity; an outcome outside 0..1 (NaN included) breaks every recommendation for the student.
            if not 0.0 <= attempt.outcome <= 1.0:
                raise BackupError(f"{where}: 'outcome' must be a number from 0 to 1, got {attempt.outcome!r}")
            objs.append(attempt)
        _create(Attempt, objs, "attempts")
        self.counts["attempts"] = len(objs)

    def import_extraction_runs(self) -> None:
        runs, keys, rows = [], [], []
        rules_runs: list[tuple[Any, str]] = []  # (the rules run a hybrid run adds to, where), linked once all runs exist
        for where, record in self.records("extraction_runs"):
            key = self.job_key(record, self.extraction_runs, where)
            self.extraction_runs[key] = -1
            current = self.flag(record, "fingerprint_current", where)
            run = ExtractionRun(
                **_in(ExtractionRun, record, where, {"key", "created_by", "fingerprint_current", "extracted", "rules_run"}),
                created_by_id=self.user(record, "created_by", where),
            )
            rules_runs.append((record.get("rules_run"), where))
            seen: set[tuple[Any, str]] = set()
            found = []
            for i, e in enumerate(_records(record.get("extracted"), f"{where}.extracted")):
                at = f"{where}.extracted[{i}]"
                problem, concept = self.problem(e, "problem", at), self.concept(e, "concept", at)
                _unique(seen, (_key(e["problem"]), e["concept"]), at, "(problem, concept)")
                version = _ref(self.versions, e, "rule_version", "rule version [concept, number]", at)
                found.append(ExtractedConcept(
                    **_in(ExtractedConcept, e, at, {"run", "problem", "concept", "rule_version"}),
                    problem_id=problem, concept_id=concept, rule_version_id=version,
                ))
            runs.append(run)
            keys.append((key, current))
            rows.append(found)
        _create(ExtractionRun, runs, "extraction_runs")
        flat = []
        for run, (key, current), found in zip(runs, keys, rows):
            self.extraction_runs[key] = run.pk
            if current:
                self.current_extraction.append(run.pk)
            for e in found:
                e.run_id = run.pk
                flat.append(e)
        _create(ExtractedConcept, flat, "extraction_runs[].extracted")
        for run, (rules_key, where) in zip(runs, rules_runs):
            if rules_key is not None:
                rules_id = _ref(self.extraction_runs, {"rules_run": rules_key}, "rules_run", "extraction run key", where)
                ExtractionRun.objects.filter(pk=run.pk).update(rules_run_id=rules_id)
        self.counts["extraction_runs"], self.counts["extracted_concepts"] = len(runs), len(flat)

    def import_extractor_reports(self) -> None:
        objs = []
        seen: dict[Any, int] = {}
        for where, record in self.records("extractor_reports"):
            seen[self.job_key(record, seen, where)] = 0
            objs.append(ExtractorReport(**_in(ExtractorReport, record, where, {"key", "created_by"}), created_by_id=self.user(record, "created_by", where)))
        _create(ExtractorReport, objs, "extractor_reports")
        self.counts["extractor_reports"] = len(objs)

    def _problem_id_list(self, record: dict[str, Any], name: str, where: str) -> list[int]:
        keys = record.get(name, [])
        if not isinstance(keys, list):
            raise BackupError(f"{where}: {name!r} must be a list of problem keys [collection, id]")
        return [self._problem_id(key, f"{where}: {name}[{i}]") for i, key in enumerate(keys)]

    def _problem_id(self, key: Any, what: str) -> int:
        """This database's id of a problem key [collection, id]; null (a problem deleted before the
        export) gives an id that matches no problem."""
        if key is None:
            return _MISSING_PROBLEM
        try:
            return self.problems[_key(key)]
        except (KeyError, TypeError):
            raise BackupError(f"{what} names an unknown problem {key!r}") from None

    def _run_notes(self, record: dict[str, Any], where: str) -> tuple[dict[str, Any], bool]:
        """A run's notes with the problem keys of NOTES_TRIPLETS back as this database's ids, and whether
        the file held them as the exporting database's ids (written before they were keys): those match
        no problem here, so they are left out, and the caller restores the run as out of date."""
        notes = dict(_decode(EmbeddingRun._meta.get_field("notes"), record["notes"], where))
        old_ids = False
        for name in NOTES_TRIPLETS:
            if name not in notes:
                continue
            at = f"{where}: 'notes' {name}"
            entries = notes[name]
            if not isinstance(entries, list):
                raise BackupError(f"{at} must be a list of [anchor, positive, negative, right]")
            mapped, raw = [], 0
            for i, entry in enumerate(entries):
                if not isinstance(entry, list) or len(entry) != 4 or entry[3] not in (0, 1) or isinstance(entry[3], float):
                    raise BackupError(f"{at}[{i}] must be [anchor, positive, negative, right]: three problem keys and 0 or 1, got {entry!r}")
                if all(isinstance(v, int) and not isinstance(v, bool) for v in entry[:3]):
                    raw += 1  # an old file's database ids
                    continue
                ids = [self._problem_id(key, f"{at}[{i}][{j}]") for j, key in enumerate(entry[:3])]
                mapped.append([*ids, int(entry[3])])
            if raw and mapped:
                raise BackupError(f"{at} mixes problem keys [collection, id] with bare ids")
            if raw:
                del notes[name]
                old_ids = True
            else:
                notes[name] = mapped
        return notes, old_ids

    def import_embedding_runs(self) -> None:
        objs, keys = [], []
        handled = {"key", "created_by", "extraction_run", "problem_ids", "missing", "fingerprint_current", "notes"}
        for where, record in self.records("embedding_runs"):
            key = self.job_key(record, self.embedding_runs, where)
            self.embedding_runs[key] = -1
            ids = self._problem_id_list(record, "problem_ids", where)
            fields = _in(EmbeddingRun, record, where, handled)
            old_ids = False
            if "notes" in record:
                fields["notes"], old_ids = self._run_notes(record, where)
            run = EmbeddingRun(
                **fields,
                created_by_id=self.user(record, "created_by", where),
                extraction_run_id=_ref(self.extraction_runs, record, "extraction_run", "extraction run key", where),
                problem_ids=np.asarray(ids, dtype=np.int64).tobytes(),
                missing=self._problem_id_list(record, "missing", where),
            )
            if len(bytes(run.vectors)) != len(ids) * run.dim * 4:
                raise BackupError(
                    f"{where}: 'vectors' holds {len(bytes(run.vectors))} bytes, but {len(ids)} problems x dim {run.dim} float32 need {len(ids) * run.dim * 4}"
                )
            objs.append(run)
            # A run whose out-of-fold judgements were lost is not reused: the next rebuild makes them again.
            keys.append((key, self.flag(record, "fingerprint_current", where) and not old_ids, where))
        _create(EmbeddingRun, objs, "embedding_runs")
        for run, (key, current, where) in zip(objs, keys):
            self.embedding_runs[key] = run.pk
            if current:
                self.current_embedding[run.pk] = where
        self.counts["embedding_runs"] = len(objs)

    def import_active_embedding(self) -> None:
        record = self.data.get("active_embedding")
        if record is None:
            return
        where = "active_embedding"
        if not isinstance(record, dict):
            raise BackupError(f"{where} must be an object or null")
        run = _ref(self.embedding_runs, record, "run", "embedding run key", where, null=False)
        activated_by = self.user(record, "activated_by", where)
        _create(
            ActiveEmbedding,
            [ActiveEmbedding(pk=1, run_id=run, activated_by_id=activated_by, **_in(ActiveEmbedding, record, where, {"run", "activated_by", "site_default"}))],
            where,
        )
        # A file written before embedding_default was a kind keeps the site default here (import_embedding_default).
        default = record.get("site_default")
        if default is not None:
            if not isinstance(default, dict):
                raise BackupError(f"{where}.site_default must be an object")
            self.legacy_default = default
        self.counts["active_embedding"] = 1

    def import_embedding_default(self) -> None:
        record, where = self.data.get("embedding_default"), "embedding_default"
        if self.legacy_default is not None:
            if record is not None:
                raise BackupError("the site default is given twice, in embedding_default and in active_embedding.site_default: keep one")
            record, where = self.legacy_default, "active_embedding.site_default"
        if record is None:
            return
        if not isinstance(record, dict):
            raise BackupError(f"{where} must be an object or null")
        updated_by = self.user(record, "updated_by", where)
        fields = _in(EmbeddingDefault, record, where, {"updated_by"})
        if not isinstance(fields.get("method"), str) or fields.get("source") not in ConceptSource.values:
            raise BackupError(f"{where}: needs a 'method' and a 'source' (labels, rules or hybrid)")
        _create(EmbeddingDefault, [EmbeddingDefault(pk=1, updated_by_id=updated_by, **fields)], where)
        self.counts["embedding_default"] = 1

    def import_neural_experiments(self) -> None:
        objs, suggestions = [], []
        seen: dict[Any, int] = {}
        for where, record in self.records("neural_experiments"):
            seen[self.job_key(record, seen, where)] = 0
            objs.append(NeuralExperiment(
                **_in(NeuralExperiment, record, where, {"key", "created_by", "suggestions"}), created_by_id=self.user(record, "created_by", where),
            ))
            pairs: set[tuple[Any, str]] = set()
            rows = []
            for i, s in enumerate(_records(record.get("suggestions"), f"{where}.suggestions")):
                at = f"{where}.suggestions[{i}]"
                problem, concept = self.problem(s, "problem", at), self.concept(s, "concept", at)
                _unique(pairs, (_key(s["problem"]), s["concept"]), at, "(problem, concept)")
                rows.append(NeuralSuggestion(**_in(NeuralSuggestion, s, at, {"experiment", "problem", "concept"}), problem_id=problem, concept_id=concept))
            suggestions.append(rows)
        _create(NeuralExperiment, objs, "neural_experiments")
        flat = _create_children(NeuralSuggestion, objs, suggestions, "experiment_id", "neural_experiments[].suggestions")
        self.counts["neural_experiments"], self.counts["neural_suggestions"] = len(objs), len(flat)

    def refresh_fingerprints(self) -> None:
        """Runs that were up to date at export are up to date here too, so rebuilding them reuses them.
        Their fingerprints hash ids and row counts, which a restore changes: compute them again now."""
        if self.current_extraction:
            ExtractionRun.objects.filter(pk__in=self.current_extraction, source="rules").update(fingerprint=_extraction_fingerprint())
            # A hybrid run's fingerprint hashes its rules run's: refresh those first, then the hybrid runs'.
            for run in ExtractionRun.objects.filter(pk__in=self.current_extraction, source="hybrid").select_related("rules_run"):
                if run.rules_run is not None:
                    ExtractionRun.objects.filter(pk=run.pk).update(fingerprint=_hybrid_fingerprint(run.rules_run))
        for run in EmbeddingRun.objects.filter(pk__in=self.current_embedding).only("method", "source", "params"):
            try:  # params is an object (_decode), but a value in it may not be what the method reads
                fingerprint = _embedding_fingerprint(run.method, run.source, run.params)
            except (TypeError, ValueError) as exc:
                raise BackupError(f"{self.current_embedding[run.pk]}: 'params' has a value of the wrong type ({exc})") from None
            if fingerprint is not None:
                EmbeddingRun.objects.filter(pk=run.pk).update(fingerprint=fingerprint)
