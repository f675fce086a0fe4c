"""Reads of the problem bank. Every lookup goes through the user's visible set."""

from __future__ import annotations

from typing import Any, Iterator

from django.db import connection
from django.db.models import Count, Prefetch, Q, QuerySet
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

# On PostgreSQL the search uses this exact expression, which the migration indexes with GIN.
PG_SEARCH_WHERE = (
    "(to_tsvector('english'::regconfig, problems_problem.title || ' ' || problems_problem.text)"
    " @@ websearch_to_tsquery('english'::regconfig, %s) OR problems_problem.source_id = %s)"
)


def problem_visible_queryset(user: Any) -> QuerySet[Problem]:
    qs = Problem.objects.all()
    if not is_course_staff(user):
        qs = qs.filter(released=True)
    return qs


def problem_get_for_user(user: Any, pk: int) -> Problem:
    """The one permission-guarded lookup of a problem: 404 if the user may not see it."""
    problem = problem_visible_queryset(user).select_related("module", "author").filter(pk=pk).first()
    if problem is None:
        raise Http404("No such problem")
    return problem


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
    return qs.select_related("module").order_by(*SORTS.get(sort, SORTS["module"]))


def problem_labels(problem: Problem) -> list[Concept]:
    return list(Concept.objects.filter(ground_truth_labels__problem=problem).select_related("module"))


def problem_collections() -> list[str]:
    return list(Problem.objects.order_by("collection").values_list("collection", flat=True).distinct())


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
