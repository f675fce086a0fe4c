"""Writes for similarity triplets and their votes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from embeddings.models import SimilarityTriplet, TripletStatus, TripletVote, VoteChoice
from problems.bank_io import LineError, iter_jsonl_objects
from problems.models import Problem


class TripletRejected(ValueError):
    pass


def _check_triplet(anchor: Problem, positive: Problem, negative: Problem) -> None:
    if len({anchor.pk, positive.pk, negative.pk}) < 3:
        raise TripletRejected("the anchor and the two candidates must be three different problems")
    if anchor.module_id is None or not (anchor.module_id == positive.module_id == negative.module_id):
        raise TripletRejected("all three problems must come from one module")


@transaction.atomic
def triplet_create(
    *, anchor: Problem, positive: Problem, negative: Problem, user: Any = None, note: str = "", status: str = TripletStatus.PROPOSED
) -> SimilarityTriplet:
    _check_triplet(anchor, positive, negative)
    if SimilarityTriplet.objects.filter(anchor=anchor, positive=positive, negative=negative).exists():
        raise TripletRejected("this triplet has already been proposed")
    triplet = SimilarityTriplet.objects.create(
        anchor=anchor, positive=positive, negative=negative, module_id=anchor.module_id, proposed_by=user,
        note=note[:500], status=status,
        decided_at=timezone.now() if status != TripletStatus.PROPOSED else None,
    )
    return triplet


@transaction.atomic
def triplet_vote(*, triplet: SimilarityTriplet, voter: Any, choice: str) -> TripletVote:
    """A blind judgement: `choice` is "positive", "negative" or "cant_tell" for the stored roles."""
    if choice not in VoteChoice.values:
        raise TripletRejected(f"unknown choice {choice!r}")
    if triplet.proposed_by_id == voter.pk:
        raise TripletRejected("the proposer of a triplet does not judge it")
    if triplet.status != TripletStatus.PROPOSED:
        raise TripletRejected("this triplet has already been decided")
    vote, _ = TripletVote.objects.update_or_create(triplet=triplet, voter=voter, defaults={"choice": choice})
    return vote


@transaction.atomic
def triplet_decide(*, triplet: SimilarityTriplet, decision: str, user: Any) -> SimilarityTriplet:
    """The head TA accepts, rejects, or swaps (B and C exchanged, then accepted) a triplet."""
    triplet = SimilarityTriplet.objects.select_for_update().get(pk=triplet.pk)
    if decision == "swap":
        if SimilarityTriplet.objects.filter(anchor=triplet.anchor, positive=triplet.negative, negative=triplet.positive).exists():
            raise TripletRejected("the swapped triplet already exists")
        triplet.positive, triplet.negative = triplet.negative, triplet.positive
        # Votes refer to the roles: after the swap a vote for the old negative supports the new order.
        for vote in triplet.votes.all():
            vote.choice = {"positive": "negative", "negative": "positive"}.get(vote.choice, vote.choice)
            vote.save(update_fields=["choice"])
        status = TripletStatus.ACCEPTED
    elif decision == "accept":
        status = TripletStatus.ACCEPTED
    elif decision == "reject":
        status = TripletStatus.REJECTED
    else:
        raise TripletRejected(f"unknown decision {decision!r}")
    triplet.status, triplet.decided_by, triplet.decided_at = status, user, timezone.now()
    triplet.save()
    return triplet


@dataclass(frozen=True)
class TripletRecord:
    line: int
    anchor: int
    positive: int
    negative: int


def triplets_parse(*, data: bytes, collection: str) -> tuple[list[TripletRecord], list[LineError]]:
    """Validate JSONL lines {"anchor", "positive", "negative"} (ids of `collection`); nothing is written."""
    problems = {sid: (pk, module) for pk, sid, module in Problem.objects.filter(collection=collection).values_list("id", "source_id", "module_id")}
    records, errors, seen = [], [], {}
    for number, obj, error in iter_jsonl_objects(data):
        if error:
            errors.append(LineError(number, error))
            continue
        ids = []
        for role in ("anchor", "positive", "negative"):
            value = obj.get(role)
            if value is None or str(value).strip() == "":
                errors.append(LineError(number, f"missing '{role}'"))
                break
            if str(value) not in problems:
                errors.append(LineError(number, f"no problem {str(value)!r} in collection {collection!r} ({role})"))
                break
            ids.append(problems[str(value)])
        else:
            if len({pk for pk, _ in ids}) < 3:
                errors.append(LineError(number, "the anchor and the two candidates must be three different problems"))
            elif ids[0][1] is None or len({m for _, m in ids}) > 1:
                errors.append(LineError(number, "all three problems must come from one module"))
            elif (key := tuple(pk for pk, _ in ids)) in seen:
                errors.append(LineError(number, f"duplicate triplet (first on line {seen[key]})"))
            else:
                seen[key] = number
                records.append(TripletRecord(number, *key))
    return records, errors


@transaction.atomic
def triplets_import(*, records: list[TripletRecord], status: str = TripletStatus.PROPOSED, user: Any = None) -> tuple[int, int]:
    """Create the triplets (existing ones get the given status when it is not "proposed"). Returns (created, updated)."""
    problems = Problem.objects.in_bulk([pk for r in records for pk in (r.anchor, r.positive, r.negative)])
    created = updated = 0
    for r in records:
        existing = SimilarityTriplet.objects.filter(anchor_id=r.anchor, positive_id=r.positive, negative_id=r.negative).first()
        if existing is None:
            try:
                with transaction.atomic():
                    triplet_create(anchor=problems[r.anchor], positive=problems[r.positive], negative=problems[r.negative], user=user, status=status)
                created += 1
            except IntegrityError as exc:  # a concurrent import created it first
                raise TripletRejected(f"line {r.line}: {exc}") from exc
        elif status != TripletStatus.PROPOSED and existing.status != status:
            existing.status, existing.decided_by, existing.decided_at = status, user, timezone.now()
            existing.save()
            updated += 1
    return created, updated
