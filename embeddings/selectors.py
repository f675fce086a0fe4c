"""Reads for similarity triplets."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Iterable, NamedTuple

import numpy as np
from django.db.models import QuerySet
from django.http import Http404

from embeddings.algorithms.triplets import Tally, find_contradictions, tally
from concepts.models import JobStatus
from embeddings.models import (
    ActiveEmbedding,
    ConceptSource,
    EmbeddingRun,
    SimilarityTriplet,
    TripletStatus,
    TripletVote,
)


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


def triplet_candidates_for(triplet: SimilarityTriplet, user: Any) -> tuple[Any, Any]:
    """The two candidates (problems) as this judge sees them: (left, right)."""
    if candidates_swapped(triplet, user):
        return triplet.negative, triplet.positive
    return triplet.positive, triplet.negative


def triplets_order_visible(triplets: Iterable[SimilarityTriplet], user: Any) -> set[int]:
    """Ids of the triplets whose proposed order (which candidate is closer) this user may see.

    Judging is blind: while a triplet is proposed, a TA sees only the anchor and the candidates in
    their own random order, until they have voted on it. The proposer knows the order, and head TAs
    (who decide) see it; once a triplet is decided there is nothing left to judge."""
    triplets = list(triplets)
    if user.has_perm("embeddings.view_tripletvote"):
        return {t.pk for t in triplets}
    open_ = [t.pk for t in triplets if t.status == TripletStatus.PROPOSED and t.proposed_by_id != user.pk]
    voted = set(TripletVote.objects.filter(voter=user, triplet_id__in=open_).values_list("triplet_id", flat=True))
    return {t.pk for t in triplets if t.pk not in open_ or t.pk in voted}


def triplet_order_visible(triplet: SimilarityTriplet, user: Any) -> bool:
    return triplet.pk in triplets_order_visible([triplet], user)


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


# --- embedding runs -----------------------------------------------------------------------------


TEXT_SOURCE = "text"  # how text methods appear in the triplet table: they read no concepts


def run_arrays(run: EmbeddingRun) -> tuple[np.ndarray, np.ndarray]:
    """(problem ids (n,), vectors (n, dim)) of a finished run, straight from its blobs."""
    ids = np.frombuffer(bytes(run.problem_ids), dtype=np.int64)
    vectors = np.frombuffer(bytes(run.vectors), dtype=np.float32).reshape(len(ids), run.dim) if run.dim else np.zeros((len(ids), 0), np.float32)
    return ids, vectors


def run_concept_vectors(run: EmbeddingRun) -> np.ndarray | None:
    if not run.concept_slugs:
        return None
    return np.frombuffer(bytes(run.concept_vectors), dtype=np.float32).reshape(len(run.concept_slugs), -1)


def active_run() -> EmbeddingRun | None:
    active = ActiveEmbedding.objects.select_related("run").filter(pk=1).first()
    return active.run if active else None


def latest_done_runs() -> dict[tuple[str, str], EmbeddingRun]:
    """The newest finished run of each (method, table source)."""
    from embeddings.algorithms.methods import METHODS

    out: dict[tuple[str, str], EmbeddingRun] = {}
    for run in EmbeddingRun.objects.filter(status=JobStatus.DONE).order_by("-id").defer("vectors", "problem_ids", "concept_vectors", "losses"):
        if run.method not in METHODS:
            continue
        source = TEXT_SOURCE if METHODS[run.method].kind == "text" else run.source
        out.setdefault((run.method, source), run)
    return out


def recent_runs(limit: int = 40) -> list[EmbeddingRun]:
    return list(EmbeddingRun.objects.select_related("created_by").defer("vectors", "problem_ids", "concept_vectors", "losses")[:limit])


def triplet_rows(triplets: list[tuple[int, int, int]], ids: np.ndarray) -> np.ndarray:
    """Triplets of problem ids as row indices of a run; -1 where a problem is not in the run."""
    row = {int(pid): i for i, pid in enumerate(ids)}
    return np.array([[row.get(a, -1), row.get(p, -1), row.get(n, -1)] for a, p, n in triplets], dtype=np.int64).reshape(-1, 3)


def _usable(rows: np.ndarray) -> np.ndarray:
    return rows[(rows >= 0).all(axis=1)] if len(rows) else rows


def triplet_results(
    triplets: list[tuple[int, int, int]], runs: dict[tuple[str, str], EmbeddingRun] | None = None
) -> dict[str, dict[str, dict[str, float] | None]]:
    """Every method's newest run on the triplets: {method: {source: {accuracy, low, high}}}, the 95%
    bootstrap interval around the accuracy; None where there are no triplets. ``runs`` ({(method, table
    source): finished run}) scores those runs instead of the newest of each. A triplet whose problem
    is not in the run, or has no vector, counts as wrong. A triplet that chose its collection's text
    share (README step 5) is judged as the run judged it with the share chosen on the other folds of
    those triplets (``notes["triplet_share_out_of_fold"]``), so the figure never grades a choice on the
    triplets it was made on."""
    from embeddings.algorithms.metrics import bootstrap_interval

    table: dict[str, dict[str, dict[str, float] | None]] = {}
    for (method, source), run in sorted((latest_done_runs() if runs is None else runs).items()):
        if not triplets:
            table.setdefault(method, {})[source] = None
            continue
        correct = run_triplets_correct(EmbeddingRun.objects.get(pk=run.pk), triplets)
        low, high = bootstrap_interval(correct)
        table.setdefault(method, {})[source] = {"accuracy": float(correct.mean()), "low": low, "high": high}
    return table


def run_triplets_correct(run: EmbeddingRun, triplets: list[tuple[int, int, int]]) -> np.ndarray:
    """Per triplet, whether the run orders it right (bool, shape (len(triplets),)). A triplet whose problem
    is not in the run, or has no vector, is wrong; one that chose its collection's text share is judged
    as the run judged it out of fold (``notes["triplet_share_out_of_fold"]``)."""
    from embeddings.algorithms.metrics import triplet_correct

    ids, vectors = run_arrays(run)
    rows = triplet_rows(triplets, ids)
    correct = triplet_correct(vectors, np.where(rows < 0, 0, rows)) & (rows >= 0).all(axis=1)
    out_of_fold = {(a, p, n): bool(right) for a, p, n, right in (run.notes or {}).get("triplet_share_out_of_fold", [])}
    if out_of_fold:
        correct = np.array([out_of_fold.get(tuple(t), c) for t, c in zip(triplets, correct.tolist())], dtype=bool)
    return correct


def triplet_table(triplets: list[tuple[int, int, int]]) -> dict[str, dict[str, float | None]]:
    """Accuracy of every method's newest run on the triplets: {method: {source: accuracy}}."""
    return {
        method: {source: (None if r is None else r["accuracy"]) for source, r in by_source.items()}
        for method, by_source in triplet_results(triplets).items()
    }


def accepted_triplets(collection: str = "") -> list[tuple[int, int, int]]:
    from embeddings.models import SimilarityTriplet, TripletStatus

    qs = SimilarityTriplet.objects.filter(status=TripletStatus.ACCEPTED)
    if collection:
        qs = qs.filter(anchor__collection=collection)
    return list(qs.order_by("id").values_list("anchor_id", "positive_id", "negative_id"))


def gap_histogram(triplets: list[tuple[int, int, int]], bins: int = 10) -> list[dict[str, Any]]:
    """Per method (labels source and text methods): counts of sim(A,B) - sim(A,C) per bin, and errors per bin."""
    from embeddings.algorithms.metrics import similarity_gaps

    edges = np.linspace(-1.0, 1.0, bins + 1)
    out = []
    for (method, source), run in sorted(latest_done_runs().items()):
        if source in (ConceptSource.RULES, ConceptSource.HYBRID):
            continue
        run = EmbeddingRun.objects.get(pk=run.pk)
        ids, vectors = run_arrays(run)
        rows = _usable(triplet_rows(triplets, ids))
        if not len(rows):
            continue
        gaps = np.asarray(similarity_gaps(vectors, rows), dtype=float)
        counts, _ = np.histogram(np.clip(gaps, -1, 1), edges)
        errors, _ = np.histogram(np.clip(gaps[gaps <= 0], -1, 1), edges)
        out.append({"method": method, "source": source, "counts": counts.tolist(), "errors": errors.tolist(), "edges": edges.tolist()})
    return out


@dataclass
class SimilarProblem:
    problem: Any
    score: float
    contributions: list[tuple[str, float]]  # (concept slug, share of the cosine), largest first


class SimilarList(NamedTuple):
    run: EmbeddingRun | None  # the active run
    similar: list[SimilarProblem]
    borrowed: bool  # the problem had no concepts in the run's source: its vector came from the fallback
    in_run: bool  # False for a problem imported or created after the run was built: it has no row
    hidden: bool = False  # it has neighbours, but none that `user` may see (nothing else released yet)


def problem_similar_list(problem: Any, k: int = 5, user: Any = None) -> SimilarList:
    """The k problems nearest to `problem` in the active embedding, each with why (per-concept
    contributions), and whether `problem` had no concepts in the run's source (a concept run only): its
    vector then came from the fallback, borrowed from the problems it reads like, and there is no why."""
    from embeddings.algorithms.problems import weighting_frequencies
    from embeddings.algorithms.similarity import contributions, top_k
    from problems.selectors import problem_visible_queryset

    run = active_run()
    if run is None:
        return SimilarList(None, [], False, False)
    ids, vectors = run_arrays(run)
    where = np.nonzero(ids == problem.pk)[0]
    if not len(where):
        return SimilarList(run, [], False, False)
    # Students see released problems only: take more candidates, then keep the visible ones among them.
    idx, scores = top_k(vectors, int(where[0]), min(len(ids) - 1, k * 4 if user is not None else k))
    if user is not None:
        candidates = [int(ids[i]) for i in idx]
        visible = set(problem_visible_queryset(user).filter(id__in=candidates).values_list("id", flat=True))
    chosen = [(int(i), float(s)) for i, s in zip(idx, scores) if user is None or int(ids[i]) in visible][:k]
    from problems.models import Problem

    problems = Problem.objects.in_bulk([int(ids[i]) for i, _ in chosen])
    concept_vectors = run_concept_vectors(run)
    out = []
    borrowed = False
    if concept_vectors is not None:
        sets = _concept_sets_for(run, [problem.pk] + [int(ids[i]) for i, _ in chosen])
        # The weights the run's vectors were built with: 1/f^power (runs before stop 41: 1/f).
        freq = weighting_frequencies(np.asarray(run.notes.get("frequencies") or [1.0] * len(run.concept_slugs), dtype=float),
                                     float(run.notes.get("frequency_power", 1.0)))
        borrowed = not sets.get(problem.pk)
    for i, score in chosen:
        why: list[tuple[str, float]] = []
        local = [sets.get(problem.pk, []), sets.get(int(ids[i]), [])] if concept_vectors is not None else [[], []]
        # Without concepts on either side every share is 0.0: there is no why to show, not a why of zeros.
        if local[0] and local[1]:
            parts = contributions(concept_vectors, local, freq, 0, 1)
            why = sorted(((run.concept_slugs[c], float(v)) for c, v in parts.items()), key=lambda kv: -kv[1])
        out.append(SimilarProblem(problems[int(ids[i])], score, why))
    return SimilarList(run, out, borrowed, True, bool(len(idx)) and not out)


def _concept_sets_for(run: EmbeddingRun, problem_ids: list[int]) -> dict[int, list[int]]:
    from concepts.models import ExtractedConcept, GroundTruthLabel

    index = {slug: i for i, slug in enumerate(run.concept_slugs)}
    if run.source in (ConceptSource.RULES, ConceptSource.HYBRID):
        pairs = ExtractedConcept.objects.filter(run_id=run.extraction_run_id, problem_id__in=problem_ids).values_list("problem_id", "concept__slug")
    else:
        pairs = GroundTruthLabel.objects.filter(problem_id__in=problem_ids).values_list("problem_id", "concept__slug")
    out: dict[int, list[int]] = {}
    for pid, slug in pairs:
        if slug in index:
            out.setdefault(pid, []).append(index[slug])
    return out


def concept_neighbours(slug: str, k: int = 10) -> tuple[EmbeddingRun | None, list[tuple[str, float]]]:
    """Concept continuity (the paper's Table 2): the k nearest concepts in the active run, with cosine."""
    from embeddings.algorithms.metrics import nearest_concepts

    run = active_run()
    if run is None or slug not in run.concept_slugs:
        return run, []
    vectors = run_concept_vectors(run)
    idx, scores = nearest_concepts(vectors, run.concept_slugs.index(slug), k)
    return run, [(run.concept_slugs[int(i)], float(s)) for i, s in zip(idx, scores)]


@dataclass
class MapPoint:
    slug: str
    module: str  # "" for a concept with no module
    module_order: int
    x: float
    y: float


def concept_map(run: EmbeddingRun | None = None) -> tuple[EmbeddingRun | None, list[MapPoint]]:
    """Every concept of the active run (or `run`) projected to 2-D: PCA of the unit-length concept vectors,
    so the distances on the map follow the cosines the continuity table ranks by."""
    from concepts.models import Concept
    from embeddings.algorithms.projection import pca_2d

    run = run or active_run()
    if run is None:
        return None, []
    vectors = run_concept_vectors(run)
    if vectors is None or not len(vectors):
        return run, []
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    xy = pca_2d(vectors / np.where(norms == 0, 1, norms))
    modules = {
        slug: (name or "", order if order is not None else 10**6)
        for slug, name, order in Concept.objects.filter(slug__in=run.concept_slugs).values_list("slug", "module__name", "module__order")
    }
    points = [
        MapPoint(slug, *modules.get(slug, ("", 10**6)), float(xy[i, 0]), float(xy[i, 1]))
        for i, slug in enumerate(run.concept_slugs)
    ]
    return run, points


# --- the active embedding, named on every page that uses it -------------------------------------------

_ACCURACY_MEMO: dict[tuple[int, str], dict[str, Any] | None] = {}


def run_accuracy(run_id: int) -> dict[str, Any] | None:
    """A finished run's triplet accuracy on the accepted triplets: {accuracy, correct, triplets}, or None
    without accepted triplets. Kept in memory per (run, state of the accepted triplets)."""
    from django.db.models import Count, Max

    state = SimilarityTriplet.objects.filter(status=TripletStatus.ACCEPTED).aggregate(n=Count("id"), top=Max("id"), last=Max("decided_at"))
    key = (run_id, repr(state))
    if key in _ACCURACY_MEMO:
        return _ACCURACY_MEMO[key]
    triplets = accepted_triplets()
    run = EmbeddingRun.objects.filter(pk=run_id, status=JobStatus.DONE).first()
    result = None
    if triplets and run is not None:
        correct = run_triplets_correct(run, triplets)  # as Table 1 judges it (out of fold where a share was chosen)
        result = {"accuracy": float(correct.mean()), "correct": int(correct.sum()), "triplets": len(triplets)}
    if len(_ACCURACY_MEMO) > 256:
        _ACCURACY_MEMO.clear()
    _ACCURACY_MEMO[key] = result
    return result


@dataclass
class ActiveSummary:
    run: EmbeddingRun | None
    accuracy: dict[str, Any] | None
    default: tuple[str, str]
    activated_by: Any

    @property
    def is_default(self) -> bool:
        return self.run is not None and (self.run.method, self.run.source) == self.default


def active_embedding_summary() -> ActiveSummary:
    """The active run (without its blobs), its triplet accuracy, the site default, and who made it active."""
    from embeddings.services import embedding_default_get

    active = (
        ActiveEmbedding.objects.select_related("run", "activated_by")
        .defer("run__vectors", "run__problem_ids", "run__concept_vectors")
        .filter(pk=1)
        .first()
    )
    run = active.run if active else None
    return ActiveSummary(run, run_accuracy(run.pk) if run else None, embedding_default_get(), active.activated_by if active else None)
