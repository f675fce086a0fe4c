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
