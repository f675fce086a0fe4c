"""Reads of the problem bank. Every lookup goes through the user's visible set."""

from __future__ import annotations

from typing import Any, Iterator

from django.core.paginator import Page, Paginator
from django.db import connection, router
from django.db.models import Count, Prefetch, Q, QuerySet
from django.db.models.deletion import Collector
from django.db.models.expressions import RawSQL
from django.http import Http404

from concepts.models import Concept, GroundTruthLabel
from problems.bank_io import ProblemRecord
from problems.models import Module, Problem
from problems.roles import is_course_staff

SORTS = {
    "module": ("module__order", "collection", "source_id"),
    "title": ("title", "id"),
    "updated": ("-updated_at", "-id"),
    "collection": ("collection", "source_id"),
}

# On PostgreSQL the module sort reads problems_problem.module_order, a copy of the module's `order`
# that migration 0003 keeps up to date with triggers, from the index problem_sort_by_module on
# (module_order, collection, source_id): the order of SORTS["module"] (problems without a module
# last), read a page at a time instead of sorting the whole bank on every request.
PG_MODULE_SORT = (RawSQL("problems_problem.module_order", ()).asc(), "collection", "source_id")

# Below this many problems, a list in module order is sorted after filtering (~3 us a problem)
# instead of read from that index until a page is full, which reads up to the whole index when few
# problems match and they sit late in the syllabus (a word or concept of one module).
PG_SORT_MATCHES_BELOW = 10_000

# A loose index scan: one index probe per distinct collection instead of reading every problem.
PG_COLLECTIONS_SQL = """
WITH RECURSIVE c(collection) AS (
    (SELECT collection FROM problems_problem ORDER BY collection LIMIT 1)
    UNION ALL
    SELECT (SELECT p.collection FROM problems_problem p WHERE p.collection > c.collection ORDER BY p.collection LIMIT 1)
    FROM c WHERE c.collection IS NOT NULL
)
SELECT collection FROM c WHERE collection IS NOT NULL
"""

# On PostgreSQL the search matches search_vector, the stored to_tsvector('english', title || ' ' || text)
# that migration 0003 adds and indexes with GIN (and source_id, which 0003 indexes too).
PG_SEARCH_WHERE = (
    "(problems_problem.search_vector @@ websearch_to_tsquery('english'::regconfig, %s)"
    " OR problems_problem.source_id = %s)"
)


def problem_visible_queryset(user: Any) -> QuerySet[Problem]:
    qs = Problem.objects.all()
    if not is_course_staff(user):
        qs = qs.filter(released=True)
    return qs


def problem_get_for_user(user: Any, pk: int, related: tuple[str, ...] = ("module", "author")) -> Problem:
    """The one permission-guarded lookup of a problem: 404 if the user may not see it. ``related``:
    what to join (a caller that never shows the author saves reading the author's row)."""
    problem = problem_visible_queryset(user).select_related(*related).filter(pk=pk).first()
    if problem is None:
        raise Http404("No such problem")
    return problem


def problem_open_for_practice(problem: Problem) -> bool:
    """Released and in a module an instructor opened: where practice may tell a student the answer."""
    return bool(problem.released and problem.module is not None and problem.module.open_for_practice)


def problem_attempt_counts(problem: Problem) -> tuple[int, int]:
    """(attempts, students) at a problem: deleting it deletes them, which its confirmation page says."""
    counts = problem.attempts.aggregate(attempts=Count("id"), students=Count("student", distinct=True))
    return counts["attempts"], counts["students"]


def problem_search(qs: QuerySet[Problem], q: str) -> QuerySet[Problem]:
    q = q.strip()
    if not q:
        return qs
    if connection.vendor == "postgresql":
        return qs.extra(where=[PG_SEARCH_WHERE], params=[q, q])
    cond = Q(source_id=q)
    terms = Q()
    for term in q.split():
        terms &= Q(title__icontains=term) | Q(text__icontains=term)
    return qs.filter(cond | terms)


def problem_list(
    *,
    user: Any,
    q: str = "",
    modules: list[Module] | None = None,
    concepts: list[Concept] | None = None,
    match: str = "all",
    collection: str = "",
    released: str = "",
    sort: str = "module",
) -> QuerySet[Problem]:
    qs = problem_search(problem_visible_queryset(user), q)
    if modules:
        qs = qs.filter(module__in=modules)
    if collection:
        qs = qs.filter(collection=collection)
    if released in {"yes", "no"} and is_course_staff(user):
        qs = qs.filter(released=released == "yes")
    if concepts:
        ids = [c.id for c in concepts]
        labelled = GroundTruthLabel.objects.filter(concept_id__in=ids)
        if match == "any":
            qs = qs.filter(id__in=labelled.values("problem_id"))
        else:
            having_all = (
                labelled.values("problem_id").annotate(n=Count("concept_id", distinct=True)).filter(n=len(set(ids)))
            )
            qs = qs.filter(id__in=having_all.values("problem_id"))
    ordering = SORTS.get(sort, SORTS["module"])
    if ordering == SORTS["module"] and connection.vendor == "postgresql":
        if not modules:
            ordering = PG_MODULE_SORT  # reads the index problem_sort_by_module
        elif len({m.pk for m in modules}) == 1:
            ordering = ordering[1:]  # the module's order is the same on every row: reads problem_module_order
        # several modules: sorting their rows beats reading the whole index for them
    return qs.select_related("module").order_by(*ordering)


def problem_page(qs: QuerySet[Problem], number: Any, per_page: int) -> Page:
    """`Paginator(qs, per_page).get_page(number)`, choosing how PostgreSQL reads the module sort."""
    paginator = Paginator(qs, per_page)
    if qs.query.order_by == PG_MODULE_SORT and paginator.count < PG_SORT_MATCHES_BELOW:
        paginator.object_list = qs.order_by(*SORTS["module"])  # the same order
    return paginator.get_page(number)


def problem_delete_summary(problem: Problem) -> list[str]:
    """What deleting the problem deletes with it, as "3 similarity triplets", "12 attempts": every row of
    another app that cascades from it (a triplet that names it goes whole, with its votes). Read from
    Django's delete collector, as the admin's confirmation page does, so that problems/ need not import
    the apps that point at a problem."""
    collector = Collector(using=router.db_for_write(Problem))
    collector.collect([problem])
    counts: dict[Any, int] = {}
    for model, rows in collector.data.items():
        counts[model] = counts.get(model, 0) + len(rows)
    for qs in collector.fast_deletes:
        counts[qs.model] = counts.get(qs.model, 0) + qs.count()
    return [
        f"{n} {model._meta.verbose_name if n == 1 else model._meta.verbose_name_plural}"
        for model, n in counts.items()
        if n and model is not Problem and not model._meta.auto_created  # a many-to-many table goes with its row
    ]


def problem_labels(problem: Problem) -> list[Concept]:
    return list(Concept.objects.filter(ground_truth_labels__problem=problem).select_related("module"))


def problem_collections() -> list[str]:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(PG_COLLECTIONS_SQL)
            return [row[0] for row in cursor.fetchall()]
    return list(Problem.objects.order_by("collection").values_list("collection", flat=True).distinct())


def unknown_collection(name: str) -> str:
    """"" when the bank has a problem in collection `name`; else a message naming the collections it
    has (a mistyped name is then an error at once, not an empty file or a job that fails later)."""
    if Problem.objects.filter(collection=name).exists():
        return ""
    known = problem_collections()
    shown = ", ".join(repr(c) for c in known[:20]) + (f" and {len(known) - 20} more" if len(known) > 20 else "")
    return f"no collection named {name!r} in the bank; it has {shown or 'no problems'}"


def problem_records(qs: QuerySet[Problem], chunk_size: int = 2000) -> Iterator[ProblemRecord]:
    """Stream a queryset as import-ready records, labels included, in bounded memory."""
    labels = Prefetch(
        "ground_truth_labels", queryset=GroundTruthLabel.objects.select_related("concept").order_by("concept__slug")
    )
    for p in qs.select_related("module").prefetch_related(labels).iterator(chunk_size=chunk_size):
        yield ProblemRecord(
            source_id=p.source_id,
            text=p.text,
            module=p.module.name if p.module else "",
            labels=tuple(label.concept.slug for label in p.ground_truth_labels.all()),
            level=p.level,
            answer=p.answer,
            solution=p.solution,
            source=p.source,
            title=p.title,
            released=p.released,
            collection=p.collection,
        )
