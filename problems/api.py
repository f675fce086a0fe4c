"""Read-only problem API; same selectors as the pages, so students see released problems only."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response

from problems.forms import ProblemFilterForm
from problems.roles import is_course_staff
from problems.selectors import problem_get_for_user, problem_labels, problem_list


class ProblemOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    collection = serializers.CharField()
    source_id = serializers.CharField()
    title = serializers.CharField()
    text = serializers.CharField()
    module = serializers.CharField(source="module.name", allow_null=True, default=None)
    level = serializers.CharField()
    released = serializers.BooleanField()
    updated_at = serializers.DateTimeField()


def _staff_fields(problem: Any) -> dict[str, Any]:
    return {
        "answer": problem.answer,
        "solution": problem.solution,
        "source": problem.source,
        "labels": [c.slug for c in problem_labels(problem)],
    }


@api_view(["GET"])
def problem_list_api(request: Request) -> Response:
    form = ProblemFilterForm(request.query_params or None)
    if form.is_bound and not form.is_valid():
        return Response({"errors": form.errors}, status=400)
    filters = form.filters() if form.is_bound else {}
    paginator = PageNumberPagination()
    page = paginator.paginate_queryset(problem_list(user=request.user, **filters), request)
    return paginator.get_paginated_response(ProblemOutputSerializer(page, many=True).data)


@api_view(["GET"])
def problem_detail_api(request: Request, pk: int) -> Response:
    problem = problem_get_for_user(request.user, pk)
    data = dict(ProblemOutputSerializer(problem).data)
    if is_course_staff(request.user):
        data.update(_staff_fields(problem))
    return Response(data)
