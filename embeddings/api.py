"""JSON API for similarity triplets and their blind votes."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers, status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.request import Request
from rest_framework.response import Response

from concepts.api import perm
from embeddings.models import SimilarityTriplet
from embeddings.selectors import candidates_swapped, triplet_get, triplet_next_to_judge, votes_visible
from embeddings.services import TripletRejected, triplet_create, triplet_decide, triplet_vote
from problems.selectors import problem_get_for_user


def _triplet(t: SimilarityTriplet, with_votes: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": t.pk,
        "anchor": t.anchor_id,
        "positive": t.positive_id,
        "negative": t.negative_id,
        "module": t.module.name if t.module else None,
        "status": t.status,
        "note": t.note,
        "proposed_by": t.proposed_by.get_username() if t.proposed_by else None,
    }
    if with_votes:
        body["votes"] = [{"voter": v.voter.get_username(), "choice": v.choice} for v in t.votes.select_related("voter")]
    return body


class ProposeInput(serializers.Serializer):
    anchor = serializers.IntegerField()
    positive = serializers.IntegerField()
    negative = serializers.IntegerField()
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)


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
        return Response(_triplet(triplet, with_votes=False), status=status.HTTP_201_CREATED)
    qs = SimilarityTriplet.objects.select_related("module", "proposed_by").order_by("id")
    wanted = request.query_params.get("status")
    if wanted:
        qs = qs.filter(status=wanted)
    head = request.user.has_perm("embeddings.view_tripletvote")
    return Response([_triplet(t, with_votes=head) for t in qs])


@api_view(["GET"])
@permission_classes([perm("embeddings.view_similaritytriplet")])
def triplet_detail_api(request: Request, pk: int) -> Response:
    triplet = triplet_get(pk)
    return Response(_triplet(triplet, with_votes=votes_visible(triplet, request.user)))


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


@api_view(["POST"])
@permission_classes([perm("embeddings.add_tripletvote", "embeddings.add_tripletvote")])
def triplet_vote_api(request: Request, pk: int) -> Response:
    """Body {"pick": "left" | "right" | "cant_tell"}, as the candidates were shown to this judge."""
    triplet = triplet_get(pk)
    swapped = candidates_swapped(triplet, request.user)
    choice = {"left": "negative" if swapped else "positive", "right": "positive" if swapped else "negative", "cant_tell": "cant_tell"}.get(
        str(request.data.get("pick", ""))
    )
    if choice is None:
        return Response({"pick": ["one of left, right, cant_tell"]}, status=status.HTTP_400_BAD_REQUEST)
    try:
        triplet_vote(triplet=triplet, voter=request.user, choice=choice)
    except TripletRejected as exc:
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    return Response(_triplet(triplet, with_votes=True), status=status.HTTP_201_CREATED)


@api_view(["POST"])
@permission_classes([perm("embeddings.decide_similaritytriplet", "embeddings.decide_similaritytriplet")])
def triplet_decision_api(request: Request, pk: int) -> Response:
    """Body {"decision": "accept" | "reject" | "swap"} (head TA)."""
    try:
        triplet = triplet_decide(triplet=triplet_get(pk), decision=str(request.data.get("decision", "")), user=request.user)
    except TripletRejected as exc:
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    return Response(_triplet(triplet, with_votes=True))
