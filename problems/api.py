"""Read-only problem API; same selectors as the pages, so students see released problems only."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
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


class ProblemStaffOutputSerializer(ProblemOutputSerializer):
    """Course staff also see the answer, the solution, the source and the ground-truth labels."""

    answer = serializers.CharField(required=False)
    solution = serializers.CharField(required=False)
    source = serializers.CharField(required=False)
    labels = serializers.ListField(child=serializers.CharField(), required=False)


class ProblemPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = ProblemOutputSerializer(many=True)


def _staff_fields(problem: Any) -> dict[str, Any]:
    return {
        "answer": problem.answer,
        "solution": problem.solution,
        "source": problem.source,
        "labels": [c.slug for c in problem_labels(problem)],
    }


@extend_schema(
    operation_id="problems_list",
    summary="List problems",
    description="Students see released problems only; staff see the whole bank. Paginated by 50; "
    "a page past the last is a 404 {\"detail\": \"Invalid page.\"}.",
    parameters=[
        OpenApiParameter("q", str, description="words in the title or text"),
        OpenApiParameter("module", int, many=True, description="module ids"),
        OpenApiParameter("concepts", str, many=True, description="concept slugs"),
        OpenApiParameter("match", str, enum=["all", "any"]),
        OpenApiParameter("collection", str),
        OpenApiParameter("released", str, enum=["", "yes", "no"]),
        OpenApiParameter("sort", str),
        OpenApiParameter("page", int),
    ],
    responses={200: ProblemPageSerializer, 400: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT},
)
@api_view(["GET"])
def problem_list_api(request: Request) -> Response:
    form = ProblemFilterForm(request.query_params or None)
    if form.is_bound and not form.is_valid():
        return Response({"errors": form.errors}, status=400)
    filters = form.filters() if form.is_bound else {}
    paginator = PageNumberPagination()
    page = paginator.paginate_queryset(problem_list(user=request.user, **filters), request)
    return paginator.get_paginated_response(ProblemOutputSerializer(page, many=True).data)


@extend_schema(summary="One problem", responses={200: ProblemStaffOutputSerializer, 404: OpenApiTypes.OBJECT})
@api_view(["GET"])
def problem_detail_api(request: Request, pk: int) -> Response:
    problem = problem_get_for_user(request.user, pk)
    data = dict(ProblemOutputSerializer(problem).data)
    if is_course_staff(request.user):
        data.update(_staff_fields(problem))
    return Response(data)
