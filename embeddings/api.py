"""JSON API for similarity triplets and their blind votes."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.request import Request
from rest_framework.response import Response

from concepts.api import perm
from embeddings.models import SimilarityTriplet
from embeddings.selectors import (
    candidates_swapped,
    triplet_get,
    triplet_next_to_judge,
    triplet_order_visible,
    triplets_order_visible,
    votes_visible,
)
from embeddings.services import TripletRejected, TripletVoteFinal, triplet_create, triplet_decide, triplet_vote
from prob2vec_site.security import whole_number
from problems.selectors import problem_get_for_user


def _triplet(t: SimilarityTriplet, *, user: Any, order_visible: bool, with_votes: bool = False) -> dict[str, Any]:
    """A triplet as this user may see it: blind (the candidates as `left`/`right` in the user's own
    order, no `positive`/`negative`, no note, no votes) until they may see the proposed order."""
    body: dict[str, Any] = {
        "id": t.pk,
        "anchor": t.anchor_id,
        "positive": t.positive_id if order_visible else None,
        "negative": t.negative_id if order_visible else None,
        "module": t.module.name if t.module else None,
        "status": t.status,
        "note": t.note if order_visible else "",
        "proposed_by": t.proposed_by.get_username() if t.proposed_by else None,
        "blind": not order_visible,
    }
    if not order_visible:
        left, right = (t.negative_id, t.positive_id) if candidates_swapped(t, user) else (t.positive_id, t.negative_id)
        body |= {"left": left, "right": right}
    if with_votes and order_visible:
        body["votes"] = [{"voter": v.voter.get_username(), "choice": v.choice} for v in t.votes.select_related("voter")]
    return body


class VoteOutput(serializers.Serializer):
    voter = serializers.CharField()
    choice = serializers.ChoiceField(choices=["positive", "negative", "cant_tell"])


class TripletOutput(serializers.Serializer):
    """A triplet: `anchor` is closer to `positive` than to `negative`. While a triplet is proposed and
    the caller has not judged it (and did not propose it, and is no head TA), it is `blind`: `positive`,
    `negative` and `note` are hidden and the candidates come as `left` and `right`, in the caller's own
    order. Votes only for those allowed to see them."""

    id = serializers.IntegerField()
    anchor = serializers.IntegerField()
    positive = serializers.IntegerField(allow_null=True)
    negative = serializers.IntegerField(allow_null=True)
    module = serializers.CharField(allow_null=True)
    status = serializers.CharField()
    note = serializers.CharField()
    proposed_by = serializers.CharField(allow_null=True)
    blind = serializers.BooleanField()
    left = serializers.IntegerField(required=False, help_text="blind only: the candidate shown on the left")
    right = serializers.IntegerField(required=False, help_text="blind only: the candidate shown on the right")
    votes = VoteOutput(many=True, required=False)


class BlindTripletOutput(serializers.Serializer):
    id = serializers.IntegerField()
    anchor = serializers.IntegerField()
    left = serializers.IntegerField()
    right = serializers.IntegerField()
    module = serializers.CharField(allow_null=True)


class VoteInput(serializers.Serializer):
    pick = serializers.ChoiceField(choices=["left", "right", "cant_tell"])


class DecisionInput(serializers.Serializer):
    decision = serializers.ChoiceField(choices=["accept", "reject", "swap"])


ERROR = OpenApiTypes.OBJECT  # {"detail": "..."} or {"field": ["..."]}


class ProposeInput(serializers.Serializer):
    anchor = serializers.IntegerField()
    positive = serializers.IntegerField()
    negative = serializers.IntegerField()
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)


@extend_schema(
    methods=["GET"], summary="List triplets",
    parameters=[OpenApiParameter("status", str, description="only triplets with this status")],
    responses={200: TripletOutput(many=True)},
)
@extend_schema(methods=["POST"], summary="Propose a triplet", request=ProposeInput, responses={201: TripletOutput, 400: ERROR, 404: ERROR})
@api_view(["GET", "POST"])
@permission_classes([perm("embeddings.view_similaritytriplet", "embeddings.add_similaritytriplet")])
def triplet_list_api(request: Request) -> Response:
    if request.method == "POST":
        data = ProposeInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        try:
            roles = {r: problem_get_for_user(request.user, v[r]) for r in ("anchor", "positive", "negative")}
            triplet = triplet_create(user=request.user, note=v["note"], **roles)
        except TripletRejected as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        return Response(_triplet(triplet, user=request.user, order_visible=True), status=status.HTTP_201_CREATED)
    qs = SimilarityTriplet.objects.select_related("module", "proposed_by").order_by("id")
    wanted = request.query_params.get("status")
    if wanted:
        qs = qs.filter(status=wanted)
    triplets = list(qs)
    visible = triplets_order_visible(triplets, request.user)
    head = request.user.has_perm("embeddings.view_tripletvote")
    return Response([_triplet(t, user=request.user, order_visible=t.pk in visible, with_votes=head) for t in triplets])


@extend_schema(summary="One triplet", responses={200: TripletOutput, 404: ERROR})
@api_view(["GET"])
@permission_classes([perm("embeddings.view_similaritytriplet")])
def triplet_detail_api(request: Request, pk: int) -> Response:
    triplet = triplet_get(pk)
    visible = triplet_order_visible(triplet, request.user)
    return Response(_triplet(triplet, user=request.user, order_visible=visible, with_votes=votes_visible(triplet, request.user)))


@extend_schema(summary="The next triplet to judge (blind)", responses={200: BlindTripletOutput, 204: None})
@api_view(["GET"])
@permission_classes([perm("embeddings.add_tripletvote")])
def triplet_next_api(request: Request) -> Response:
    """The next triplet to judge, blind: the candidates as `left` and `right`, in this judge's random order."""
    triplet = triplet_next_to_judge(request.user)
    if triplet is None:
        return Response(status=status.HTTP_204_NO_CONTENT)
    swapped = candidates_swapped(triplet, request.user)
    left, right = (triplet.negative_id, triplet.positive_id) if swapped else (triplet.positive_id, triplet.negative_id)
    return Response({"id": triplet.pk, "anchor": triplet.anchor_id, "left": left, "right": right, "module": triplet.module.name if triplet.module else None})


@extend_schema(summary="Vote on a triplet", request=VoteInput, responses={201: TripletOutput, 400: ERROR, 404: ERROR, 409: ERROR})
@api_view(["POST"])
@permission_classes([perm("embeddings.add_tripletvote", "embeddings.add_tripletvote")])
def triplet_vote_api(request: Request, pk: int) -> Response:
    """Body {"pick": "left" | "right" | "cant_tell"}, as the candidates were shown to this judge. Votes are
    final: a second vote on the same triplet is 409."""
    data = VoteInput(data=request.data)
    data.is_valid(raise_exception=True)
    triplet = triplet_get(pk)
    swapped = candidates_swapped(triplet, request.user)
    choice = {"left": "negative" if swapped else "positive", "right": "positive" if swapped else "negative", "cant_tell": "cant_tell"}[
        data.validated_data["pick"]
    ]
    try:
        triplet_vote(triplet=triplet, voter=request.user, choice=choice)
    except TripletVoteFinal as exc:
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
    except TripletRejected as exc:
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    return Response(_triplet(triplet, user=request.user, order_visible=True, with_votes=True), status=status.HTTP_201_CREATED)


@extend_schema(summary="Decide a triplet (head TA)", request=DecisionInput, responses={200: TripletOutput, 400: ERROR, 404: ERROR})
@api_view(["POST"])
@permission_classes([perm("embeddings.decide_similaritytriplet", "embeddings.decide_similaritytriplet")])
def triplet_decision_api(request: Request, pk: int) -> Response:
    """Body {"decision": "accept" | "reject" | "swap"} (head TA)."""
    data = DecisionInput(data=request.data)
    data.is_valid(raise_exception=True)
    try:
        triplet = triplet_decide(triplet=triplet_get(pk), decision=data.validated_data["decision"], user=request.user)
    except TripletRejected as exc:
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    return Response(_triplet(triplet, user=request.user, order_visible=True, with_votes=True))


# --- practice: the next problem and attempts, for other front ends (an LMS) -------------------------


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

    from embeddings.selectors import next_problem_for, practice_bank

    practice = practice_bank()
    found = next_problem_for(student, mode=mode, current_id=current_id, recent_ids=recent_ids or [])
    body: dict[str, Any] = {"student": student.pk, "embedding_run": practice.run_id}
    if found is None:
        return body | {
            "problem": None, "kind": "done", "reason": "Every open problem is solved: well done.", "because_of": None,
            "new_concepts": [], "similarity": None, "estimated_success": None,
        }
    problem, rec = found
    return body | {
        "problem": {
            "id": problem.pk, "title": problem.title, "text": problem.text, "module": problem.module.name if problem.module else None,
            "url": reverse("problems:detail", args=[problem.pk]),
        },
        "kind": rec.kind,
        "reason": rec.reason,
        "because_of": int(practice.ids[rec.because_of]) if rec.because_of is not None else None,
        "new_concepts": [practice.concept_slugs[c] for c in rec.new_concepts],
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
    student = _student_for(request, student_id, "problems.view_attempt")
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
    recent_ids = [whole_number(part.strip()) for part in raw_recent[:50]]
    if any(pid is None for pid in recent_ids):
        return Response({"detail": "recent must be problem ids separated by commas"}, status=status.HTTP_400_BAD_REQUEST)
    return Response(_next_body(student, mode=mode, current_id=current_id, recent_ids=recent_ids))


class AttemptInput(serializers.Serializer):
    problem = serializers.IntegerField()
    student = serializers.IntegerField(required=False, help_text="Another student's id (needs problems.add_attempt).")
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
    from problems.services import AttemptNotOpen, AttemptRejected, attempt_record

    data = AttemptInput(data=request.data)
    data.is_valid(raise_exception=True)
    v = data.validated_data
    student = _student_for(request, v.get("student", request.user.pk), "problems.add_attempt")
    problem = problem_get_for_user(student, v["problem"])
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
