"""JSON API for practice: a student's next problem and their attempts, for other front ends (an LMS).

The paths and bodies are a contract (README "Practice API"): /api/students/<id>/next and /api/attempts."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from prob2vec_site.security import whole_number
from problems.selectors import problem_get_for_user

ERROR = OpenApiTypes.OBJECT  # {"detail": "..."} or {"field": ["..."]}



def _student_for(request: Request, student_id: int, needed: str) -> Any:
    """The student a call is about: oneself, or anyone for a user holding ``needed``; 403/404 otherwise."""
    from django.contrib.auth import get_user_model
    from rest_framework.exceptions import NotFound, PermissionDenied

    if student_id == request.user.pk:
        return request.user
    if not request.user.has_perm(needed):
        raise PermissionDenied("you may only act for yourself")
    student = get_user_model().objects.filter(pk=student_id, is_active=True).first()
    if student is None:
        raise NotFound(f"no active user with id {student_id}")
    return student


def _next_body(student: Any, *, mode: str = "next", current_id: int | None = None, recent_ids: list[int] | None = None) -> dict[str, Any]:
    from django.urls import reverse

    from practice.selectors import next_problem_offer

    # One read of the bank: the recommendation's rows become ids and slugs through the bank they were
    # computed from (it may have been read again for a deleted problem), never through another read.
    found = next_problem_offer(student, mode=mode, current_id=current_id, recent_ids=recent_ids or [])
    body: dict[str, Any] = {"student": student.pk, "embedding_run": found.practice.run_id}
    problem, rec = found.problem, found.recommendation
    if problem is None:
        return body | {
            "problem": None, "kind": "done", "reason": "Every open problem is solved: well done.", "because_of": None,
            "new_concepts": [], "similarity": None, "estimated_success": None,
        }
    return body | {
        "problem": {
            "id": problem.pk, "title": problem.title, "text": problem.text, "module": problem.module.name if problem.module else None,
            "url": reverse("problems:detail", args=[problem.pk]),
        },
        "kind": rec.kind,
        "reason": rec.reason,
        "because_of": found.because_of_id,
        "new_concepts": found.new_concept_slugs,
        "similarity": rec.similarity,
        "estimated_success": rec.estimated_success,
    }


class NextProblemOutput(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    text = serializers.CharField()
    module = serializers.CharField(allow_null=True)
    url = serializers.CharField()


class NextOutput(serializers.Serializer):
    student = serializers.IntegerField()
    embedding_run = serializers.IntegerField(allow_null=True)
    problem = NextProblemOutput(allow_null=True)
    kind = serializers.ChoiceField(choices=["start", "retry-similar", "new-concept", "closest", "similar", "try-again", "done"])
    reason = serializers.CharField()
    because_of = serializers.IntegerField(allow_null=True)
    new_concepts = serializers.ListField(child=serializers.CharField())
    similarity = serializers.FloatField(allow_null=True)
    estimated_success = serializers.FloatField(allow_null=True)


@extend_schema(
    summary="The recommended next problem for a student",
    parameters=[
        OpenApiParameter("mode", str, enum=["next", "similar"]),
        OpenApiParameter("current", int, description="with mode=similar: the problem to find a similar one for"),
        OpenApiParameter(
            "recent", str,
            description="optional: ids of the problems last shown to the student, oldest first, comma-separated (at most 50): "
            "none of them is offered while another open problem is left",
        ),
    ],
    responses={200: NextOutput, 400: ERROR, 403: ERROR, 404: ERROR},
)
@api_view(["GET"])
def student_next_api(request: Request, student_id: int) -> Response:
    """The recommended next problem for a student, with its reason. `?mode=similar&current=<problem id>`
    asks for the problem most similar to ``current`` instead."""
    student = _student_for(request, student_id, "practice.view_attempt")
    mode = request.query_params.get("mode", "next")
    if mode not in ("next", "similar"):
        return Response({"detail": "mode must be 'next' or 'similar'"}, status=status.HTTP_400_BAD_REQUEST)
    current = request.query_params.get("current")
    if mode == "similar" and whole_number(current) is None:
        return Response({"detail": "mode=similar needs current=<problem id>"}, status=status.HTTP_400_BAD_REQUEST)
    current_id = None
    if mode == "similar":
        # The reason names `current` ("Similar to “…”"): only a problem the student may see, and an
        # unknown id and a draft answer alike (404), so ids cannot be probed for drafts.
        current_id = problem_get_for_user(student, whole_number(current) or 0).pk
    raw_recent = [part for part in request.query_params.get("recent", "").split(",") if part.strip()]
    recent_ids = [whole_number(part.strip()) for part in raw_recent[-50:]]  # oldest first: keep the newest
    if any(pid is None for pid in recent_ids):
        return Response({"detail": "recent must be problem ids separated by commas"}, status=status.HTTP_400_BAD_REQUEST)
    return Response(_next_body(student, mode=mode, current_id=current_id, recent_ids=recent_ids))


class AttemptInput(serializers.Serializer):
    problem = serializers.IntegerField()
    student = serializers.IntegerField(required=False, help_text="Another student's id (needs practice.add_attempt).")
    answer = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    self_report = serializers.ChoiceField(choices=["solved", "partly", "not_solved"], required=False, allow_blank=True, default="")
    skip = serializers.BooleanField(required=False, default=False)
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=300, help_text="Why the problem was offered.")
    client_key = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=64,
        help_text="Your own key for this submission: sending it again returns the stored attempt (200) instead of storing another.",
    )


class CheckOutput(serializers.Serializer):
    verdict = serializers.CharField()
    detail = serializers.CharField()
    read = serializers.CharField(help_text="What was read from the answer: its numbers in order (\"1365; 0.0923\"), or its words.")


class AttemptOutput(serializers.Serializer):
    id = serializers.IntegerField()
    student = serializers.IntegerField()
    problem = serializers.IntegerField()
    verdict = serializers.CharField()
    outcome = serializers.FloatField(allow_null=True)
    answer = serializers.CharField()
    check = CheckOutput(allow_null=True)
    created_at = serializers.DateTimeField()
    next = NextOutput()


@extend_schema(
    summary="Record an attempt",
    request=AttemptInput,
    responses={201: AttemptOutput, 200: AttemptOutput, 400: ERROR, 403: ERROR, 404: ERROR, 413: ERROR},
)
@api_view(["POST"])
def attempt_create_api(request: Request) -> Response:
    """Record an attempt (a checked answer, a self-report or a skip); the reply carries the next problem.

    201 for a new attempt. A submission already stored (the same `client_key`, or without one the same
    attempt within a few seconds: a retry, a double click) is not stored again: 200 with that attempt."""
    from problems.roles import is_course_staff
    from practice.services import AttemptNotOpen, AttemptRejected, attempt_record

    data = AttemptInput(data=request.data)
    data.is_valid(raise_exception=True)
    v = data.validated_data
    student = _student_for(request, v.get("student", request.user.pk), "practice.add_attempt")
    problem = problem_get_for_user(student, v["problem"], related=("module",))
    try:
        recorded = attempt_record(
            student=student, problem=problem, answer=v["answer"], self_report=v["self_report"], skip=v["skip"], because=v["reason"],
            client_key=v["client_key"],
            # Staff know every answer; a student learns one only where practice allows.
            practice_only=not is_course_staff(request.user),
        )
    except AttemptNotOpen as exc:
        return Response({"detail": f"{exc}: its module is closed for practice"}, status=status.HTTP_403_FORBIDDEN)
    except AttemptRejected as exc:
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    attempt, check = recorded.attempt, recorded.check
    body = {
        "id": attempt.pk,
        "student": student.pk,
        "problem": attempt.problem_id,
        "verdict": attempt.verdict,
        "outcome": attempt.outcome,
        "answer": attempt.answer,
        "check": {"verdict": check.verdict, "detail": check.detail, "read": check.read} if check else None,
        "created_at": attempt.created_at.isoformat(),
        "next": _next_body(student),
    }
    return Response(body, status=status.HTTP_200_OK if recorded.duplicate else status.HTTP_201_CREATED)
