"""Writes to the problem bank."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, Iterator

from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from concepts.models import Concept, GroundTruthLabel
from problems.bank_io import LineError, ProblemRecord, collection_errors, import_collection
from problems.models import Module, Problem

_CHUNK = 900  # below SQLite's bound-variable limit
_COMPARED_FIELDS = ("title", "text", "level", "answer", "solution", "source")
_INSERTED_FIELDS = (
    "collection", "source_id", "module_id", "released", "author_id", "created_at", "updated_at", *_COMPARED_FIELDS
)
_COPY_READ_SIZE = 64 * 1024


class ImportRejected(Exception):
    """A file with any bad line imports nothing; `errors` says what and where."""

    def __init__(self, errors: list[LineError]):
        self.errors = errors
        super().__init__(f"{len(errors)} bad line(s); nothing was imported")


@dataclass
class ImportReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    labelled: int = 0
    collections: list[str] = field(default_factory=list)
    modules_created: list[str] = field(default_factory=list)
    unknown_labels: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged

    def counts(self) -> str:
        return (
            f"{self.total} problems in {', '.join(self.collections) or '-'}: "
            f"{self.created} created, {self.updated} updated, {self.unchanged} unchanged; "
            f"{self.labelled} label sets set"
        )

    def summary(self) -> str:
        """One line, as `import_problems` prints it (course staff script against it)."""
        text = self.counts()
        if self.modules_created:
            text += f"; new modules: {', '.join(self.modules_created)}"
        if self.unknown_labels:
            text += f"; unknown labels (ignored): {self.unknown_labels_text()}"
        return text

    def unknown_labels_text(self) -> str:
        return ", ".join(f"{k} ({v})" for k, v in sorted(self.unknown_labels.items()))


def _chunks(items: list[Any], size: int = _CHUNK) -> Iterable[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _modules_ensure(names: list[str], report: ImportReport) -> dict[str, Module]:
    """The modules named, created where missing. New ones join the end of the syllabus in the order
    the file first names them, which is a book's own order: sorted by name, a book's chapters 10 to
    13 came before its chapter 2."""
    existing = {m.name: m for m in Module.objects.filter(name__in=names)}
    missing = [name for name in names if name not in existing]
    if missing:
        next_order = (Module.objects.aggregate(m=Max("order"))["m"] or 0) + 1
        created = Module.objects.bulk_create(
            [Module(name=name, order=next_order + i) for i, name in enumerate(missing)]
        )
        existing.update({m.name: m for m in Module.objects.filter(name__in=missing)})
        report.modules_created = [m.name for m in created]
    return existing


@transaction.atomic
def problems_import(
    *,
    records: list[ProblemRecord],
    default_collection: str,
    collection: str | None = None,
    release: bool | None = None,
    author: Any = None,
) -> ImportReport:
    """Create or update problems identified by (collection, id); set ground-truth labels.

    `collection` overrides every record's; otherwise a record's own `collection` key, then
    `default_collection`, is used. `release` sets the released flag of every imported problem;
    otherwise a record's `released` key does, and new problems without one stay unreleased.
    A record with a non-empty `labels` list replaces that problem's ground-truth labels by the
    ones that name known concept slugs; an empty list leaves existing labels alone.
    Records without a collection, a collection name longer than the column, or an id given twice
    in the collection it goes to (`bank_io.collection_errors`) raise ImportRejected before any write.
    """
    report = ImportReport()
    keyed: dict[tuple[str, str], ProblemRecord] = {}
    for rec in records:
        coll = import_collection(rec, collection, default_collection)
        if not coll:
            raise ImportRejected([LineError(rec.line, "no collection: pass a collection name")])
        keyed[(coll, rec.source_id)] = rec
    errors = collection_errors(records, collection, default_collection)
    if errors:  # parsing with the same collections reports these with the file's other bad lines
        raise ImportRejected(sorted(errors, key=lambda e: e.line))
    report.collections = sorted({c for c, _ in keyed})
    modules = _modules_ensure(list(dict.fromkeys(r.module for r in records if r.module)), report)

    existing: dict[tuple[str, str], Problem] = {}
    for coll in report.collections:
        ids = [sid for c, sid in keyed if c == coll]
        for chunk in _chunks(ids):
            for p in Problem.objects.filter(collection=coll, source_id__in=chunk):
                existing[(coll, p.source_id)] = p

    now = timezone.now()
    author_id = author.pk if author is not None else None
    to_create: list[tuple[Any, ...]] = []  # values in _INSERTED_FIELDS order
    to_update: list[Problem] = []
    for key, rec in keyed.items():
        module = modules.get(rec.module) if rec.module else None
        released = release if release is not None else rec.released
        values = {f: getattr(rec, f) for f in _COMPARED_FIELDS}
        problem = existing.get(key)
        if problem is None:
            to_create.append(
                (key[0], key[1], module.id if module else None, bool(released), author_id, now, now, *values.values())
            )
            continue
        changed = any(getattr(problem, f) != v for f, v in values.items())
        changed |= problem.module_id != (module.id if module else None)
        changed |= released is not None and problem.released != released
        if changed:
            for f, v in values.items():
                setattr(problem, f, v)
            problem.module = module
            if released is not None:
                problem.released = released
            problem.updated_at = now
            to_update.append(problem)
        else:
            report.unchanged += 1
    _problems_insert(to_create)
    Problem.objects.bulk_update(
        to_update, ["module", "released", "updated_at", *_COMPARED_FIELDS], batch_size=2000
    )
    report.created, report.updated = len(to_create), len(to_update)

    labelled = {key: rec.labels for key, rec in keyed.items() if rec.labels}
    if labelled:
        _labels_replace(labelled, author, report)
    return report


def _problems_insert(rows: list[tuple[Any, ...]]) -> None:
    """Insert new problems given as value tuples in `_INSERTED_FIELDS` order (no signals, like bulk_create).

    On PostgreSQL with psycopg2 the rows are streamed with COPY and encoded as PostgreSQL reads them,
    so Python prepares the next rows while the server computes the full-text index entries of the
    previous ones (most of an import's time). Elsewhere this is a plain bulk_create.
    """
    if not rows:
        return
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            raw = cursor.cursor
            if hasattr(raw, "copy_expert"):  # psycopg2
                table = connection.ops.quote_name(Problem._meta.db_table)
                columns = ", ".join(
                    connection.ops.quote_name(Problem._meta.get_field(f).column) for f in _INSERTED_FIELDS
                )
                with connection.wrap_database_errors:
                    raw.copy_expert(f"COPY {table} ({columns}) FROM STDIN", _CopyRows(rows), size=_COPY_READ_SIZE)
                return
    Problem.objects.bulk_create([Problem(**dict(zip(_INSERTED_FIELDS, row))) for row in rows], batch_size=2000)


def _copy_value(value: Any) -> str:
    """One field in COPY's text format."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, str):
        return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return str(value)


class _CopyRows:
    """A file-like object over rows in COPY's text format, encoded lazily as `read` is called."""

    def __init__(self, rows: Iterable[tuple[Any, ...]]):
        self._lines: Iterator[str] = ("\t".join(map(_copy_value, row)) + "\n" for row in rows)

    def read(self, size: int = -1) -> bytes:
        chunk: list[str] = []
        length = 0
        for line in self._lines:
            chunk.append(line)
            length += len(line)
            if 0 <= size <= length:
                break
        return "".join(chunk).encode("utf-8")


def _labels_replace(labelled: dict[tuple[str, str], tuple[str, ...]], author: Any, report: ImportReport) -> None:
    concept_ids = dict(Concept.objects.values_list("slug", "id"))
    unknown: Counter[str] = Counter()
    problem_ids: dict[tuple[str, str], int] = {}
    for coll in {c for c, _ in labelled}:
        ids = [sid for c, sid in labelled if c == coll]
        for chunk in _chunks(ids):
            for pk, sid in Problem.objects.filter(collection=coll, source_id__in=chunk).values_list("id", "source_id"):
                problem_ids[(coll, sid)] = pk
    wanted: dict[int, set[int]] = {}
    for key, slugs in labelled.items():
        known = set()
        for slug in slugs:
            if slug in concept_ids:
                known.add(concept_ids[slug])
            else:
                unknown[slug] += 1
        if known:
            wanted[problem_ids[key]] = known
    current: dict[int, set[int]] = {}
    pids = list(wanted)
    for chunk in _chunks(pids):
        for pid, cid in GroundTruthLabel.objects.filter(problem_id__in=chunk).values_list("problem_id", "concept_id"):
            current.setdefault(pid, set()).add(cid)
    changed = [pid for pid, cids in wanted.items() if current.get(pid, set()) != cids]
    for chunk in _chunks(changed):
        GroundTruthLabel.objects.filter(problem_id__in=chunk).delete()
    GroundTruthLabel.objects.bulk_create(
        [GroundTruthLabel(problem_id=pid, concept_id=cid, created_by=author) for pid in changed for cid in wanted[pid]],
        batch_size=5000,
    )
    report.labelled = len(changed)
    report.unknown_labels = dict(unknown)


@transaction.atomic
def problem_save(*, problem: Problem, labels: Iterable[Concept] | None = None, user: Any = None) -> Problem:
    """Save a problem created or edited by course staff, with its ground-truth labels when given."""
    if problem.pk is None:
        problem.author = user
        if not problem.collection:
            problem.collection = "course"
        if not problem.source_id:
            problem.source_id = uuid.uuid4().hex[:12]
    problem.save()
    if labels is not None:
        wanted = {c.id for c in labels}
        current = set(problem.ground_truth_labels.values_list("concept_id", flat=True))
        problem.ground_truth_labels.exclude(concept_id__in=wanted).delete()
        GroundTruthLabel.objects.bulk_create(
            [GroundTruthLabel(problem=problem, concept_id=cid, created_by=user) for cid in wanted - current]
        )
    return problem


def problem_delete(*, problem: Problem) -> None:
    problem.delete()


@transaction.atomic
def modules_upsert(*, rows: list[dict[str, Any]]) -> int:
    """Create or update modules from rows with `module`, `order` and `description`."""
    existing = {m.name: m for m in Module.objects.all()}
    changed = 0
    for row in rows:
        name, order, description = row["module"].strip(), int(row["order"]), row.get("description", "").strip()
        module = existing.get(name)
        if module is None:
            Module.objects.create(name=name, order=order, description=description)
            changed += 1
        elif (module.order, module.description) != (order, description):
            module.order, module.description = order, description
            module.save(update_fields=["order", "description"])
            changed += 1
    return changed
