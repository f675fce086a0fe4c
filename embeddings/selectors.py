"""Reads for similarity triplets."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from embeddings.algorithms.triplets import Tally, find_contradictions, tally
from embeddings.models import SimilarityTriplet, TripletStatus, TripletVote


def triplet_get(pk: int) -> SimilarityTriplet:
    triplet = SimilarityTriplet.objects.select_related("anchor", "positive", "negative", "module", "proposed_by").filter(pk=pk).first()
    if triplet is None:
        raise Http404("No such triplet")
    return triplet


def candidates_swapped(triplet: SimilarityTriplet, user: Any) -> bool:
    """Whether this judge sees the negative on the left: fixed per (triplet, judge), random across them."""
    digest = hashlib.sha256(f"{triplet.pk}:{user.pk}".encode()).digest()
    return digest[0] % 2 == 1


def triplet_next_to_judge(user: Any) -> SimilarityTriplet | None:
    voted = TripletVote.objects.filter(voter=user).values("triplet_id")
    return (
        SimilarityTriplet.objects.filter(status=TripletStatus.PROPOSED)
        .exclude(proposed_by=user)
        .exclude(id__in=voted)
        .select_related("anchor", "positive", "negative", "module")
        .order_by("id")
        .first()
    )


def votes_visible(triplet: SimilarityTriplet, user: Any) -> bool:
    """Judging is blind: a TA sees others' votes only after voting (head TAs always do)."""
    if user.has_perm("embeddings.view_tripletvote"):
        return True
    return TripletVote.objects.filter(triplet=triplet, voter=user).exists()


@dataclass
class ConsensusRow:
    triplet: SimilarityTriplet
    tally: Tally
    voters: list[tuple[str, str]]
    contradiction: bool


def consensus_rows(status: str = "") -> list[ConsensusRow]:
    """Every triplet with its votes and whether it is on a contradiction cycle (among the non-rejected)."""
    triplets = list(
        SimilarityTriplet.objects.select_related("anchor", "positive", "negative", "module", "proposed_by", "decided_by")
        .prefetch_related("votes__voter")
        .order_by("module__order", "id")
    )
    live = [t for t in triplets if t.status != TripletStatus.REJECTED]
    flagged = {live[i].pk for i in find_contradictions([(t.anchor_id, t.positive_id, t.negative_id) for t in live])}
    rows = []
    for t in triplets:
        if status and t.status != status:
            continue
        votes = list(t.votes.all())
        rows.append(
            ConsensusRow(t, tally([v.choice for v in votes]), [(v.voter.get_username(), v.choice) for v in votes], t.pk in flagged)
        )
    return rows


def triplets_accepted() -> QuerySet[SimilarityTriplet]:
    return SimilarityTriplet.objects.filter(status=TripletStatus.ACCEPTED).order_by("id")


def triplet_counts() -> dict[str, int]:
    counts = {s: 0 for s in TripletStatus.values}
    for s in SimilarityTriplet.objects.values_list("status", flat=True):
        counts[s] += 1
    counts["votes"] = TripletVote.objects.count()
    return counts
