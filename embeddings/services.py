"""Writes for similarity triplets and their votes."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from concepts.jobs import job_claim, job_enqueue, job_resend_if_queued, job_wait
from concepts.models import JobStatus
from embeddings.models import (
    ActiveEmbedding,
    ConceptSource,
    EmbeddingRun,
    SimilarityTriplet,
    TripletStatus,
    TripletVote,
    VoteChoice,
)
from embeddings.tasks import rebuild_embeddings as rebuild_embeddings_task
from problems.bank_io import LineError, iter_jsonl_objects
from problems.models import Problem


logger = logging.getLogger(__name__)


class TripletRejected(ValueError):
    pass


class TripletVoteFinal(TripletRejected):
    """A second vote by the same judge (409 in the API)."""


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
    # One proposal per anchor at a time: two TAs proposing the same triplet at once, in either order,
    # would both pass the check below (the unique constraint only knows the order it is given).
    list(Problem.objects.select_for_update().filter(pk=anchor.pk).order_by().values_list("pk"))
    # Either order counts as the same triplet, and the refusal does not say which one exists: otherwise
    # proposing (A, B, C) would tell a judge the hidden order of someone else's triplet.
    same = Q(positive=positive, negative=negative) | Q(positive=negative, negative=positive)
    if SimilarityTriplet.objects.filter(same, anchor=anchor).exists():
        raise TripletRejected("a triplet with this anchor and these two candidates has already been proposed")
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
    # The row as it is now, locked against a decision in the meantime: a vote read against a triplet the
    # head TA has since decided (or swapped, which would turn the vote round) is refused.
    triplet = SimilarityTriplet.objects.select_for_update().get(pk=triplet.pk)
    if triplet.status != TripletStatus.PROPOSED:
        raise TripletRejected("this triplet has already been decided")
    # Votes are final: a judge sees the others' votes once they have voted, so changing one's vote
    # afterwards would no longer be a blind judgement.
    if TripletVote.objects.filter(triplet=triplet, voter=voter).exists():
        raise TripletVoteFinal(f"you have already judged triplet #{triplet.pk}; votes are final")
    try:
        with transaction.atomic():
            return TripletVote.objects.create(triplet=triplet, voter=voter, choice=choice)
    except IntegrityError:  # the same judge's other request won the race
        raise TripletVoteFinal(f"you have already judged triplet #{triplet.pk}; votes are final") from None


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


def triplets_parse(*, data: bytes, collection: str, importing: bool = False) -> tuple[list[TripletRecord], list[LineError]]:
    """Validate JSONL lines {"anchor", "positive", "negative"} (ids of `collection`); nothing is written.

    ``importing``: the lines are to be stored, so a triplet with its candidates the other way round from
    another line or from a stored triplet is refused too (it is the same triplet, which triplet_create
    refuses), by its line number and before anything is written. Evaluating a file may state any order."""
    problems = {sid: (pk, module) for pk, sid, module in Problem.objects.filter(collection=collection).values_list("id", "source_id", "module_id")}
    stored = (
        set(SimilarityTriplet.objects.filter(anchor__collection=collection).values_list("anchor_id", "positive_id", "negative_id"))
        if importing else set()
    )
    records, errors, seen = [], [], {}
    for number, obj, error in iter_jsonl_objects(data):
        if error:
            errors.append(LineError(number, error))
            continue
        ids = []
        for role in ("anchor", "positive", "negative"):
            value = obj.get(role)
            # Stripped, as import_problems stores ids and import_labels reads them.
            source_id = "" if value is None else str(value).strip()
            if not source_id:
                errors.append(LineError(number, f"missing '{role}'"))
                break
            if source_id not in problems:
                errors.append(LineError(number, f"no problem {source_id!r} in collection {collection!r} ({role})"))
                break
            ids.append(problems[source_id])
        else:
            key = tuple(pk for pk, _ in ids)
            swapped = (key[0], key[2], key[1])
            if len(set(key)) < 3:
                errors.append(LineError(number, "the anchor and the two candidates must be three different problems"))
            elif ids[0][1] is None or len({m for _, m in ids}) > 1:
                errors.append(LineError(number, "all three problems must come from one module"))
            elif key in seen:
                errors.append(LineError(number, f"duplicate triplet (first on line {seen[key]})"))
            elif importing and swapped in seen:
                errors.append(LineError(number, f"the triplet of line {seen[swapped]} with its two candidates the other way round"))
            elif importing and swapped in stored:
                # Worded as triplet_create words it: the refusal does not tell which order is stored.
                errors.append(LineError(number, "a triplet with this anchor and these two candidates has already been proposed"))
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


# --- embedding runs -----------------------------------------------------------------------------


class EmbeddingInputError(ValueError):
    """Inputs that cannot be embedded (no extraction run, no problems): saved on the run, not retried."""


class _Cancelled(Exception):
    pass


def _state_fingerprint(method: str, source: str, params: dict[str, Any]) -> tuple[str, Any]:
    """A cheap hash of everything a run depends on; identical inputs reuse the earlier run."""
    from concepts.models import ExtractionRun, GroundTruthLabel
    from embeddings.algorithms.methods import ALGORITHMS_VERSION, METHODS

    kind = METHODS[method].kind
    problems_state = Problem.objects.aggregate(n=Count("id"), last=Max("updated_at"), top=Max("id"))
    extraction = None
    if kind == "text":
        source_state: Any = None  # text methods read no concepts
    elif source == ConceptSource.RULES:
        extraction = ExtractionRun.objects.filter(status="done", source="rules").order_by("-id").first()
        # The labels too: the rules' recall on them sets how much of each cosine the text decides.
        source_state = [extraction.pk if extraction else None, GroundTruthLabel.objects.aggregate(n=Count("id"), top=Max("id"))]
    elif source == ConceptSource.HYBRID:
        # The hybrid extraction for the latest rules run and the current labels, if one was started.
        from concepts.services import _hybrid_fingerprint

        rules_run = ExtractionRun.objects.filter(status="done", source="rules").order_by("-id").first()
        source_state = _hybrid_fingerprint(rules_run) if rules_run else None
        extraction = (
            ExtractionRun.objects.filter(source="hybrid", fingerprint=source_state).exclude(status__in=["failed", "cancelled"]).order_by("-id").first()
            if rules_run else None
        )
    else:
        source_state = GroundTruthLabel.objects.aggregate(n=Count("id"), top=Max("id"))
    glove = os.getenv("GLOVE_PATH") if kind == "text" else None
    if method.endswith("-selected"):
        from concepts.models import SelectedWord

        source_state = SelectedWord.objects.aggregate(n=Count("id"), top=Max("id"))
    if kind != "text" and source in (ConceptSource.RULES, ConceptSource.HYBRID):
        # Which problems are held out from rule writing decides where the source's recall is measured.
        from concepts.models import HeldOutProblem

        source_state = [source_state, HeldOutProblem.objects.aggregate(n=Count("id"), top=Max("id"))]
        if int(params.get("triplet_share_min", 0)) > 0:
            # A collection's accepted triplets choose its text share (README step 5): which ones are accepted.
            from embeddings.selectors import accepted_triplets

            source_state.append(hashlib.sha256(repr(accepted_triplets()).encode()).hexdigest())
    raw = json.dumps([ALGORITHMS_VERSION, method, source, sorted(params.items()), problems_state, source_state, glove], default=str)
    return hashlib.sha256(raw.encode()).hexdigest(), extraction


def _is_extracted(source: str) -> bool:
    """Whether a source's concepts come from an extractor (rules, hybrid), not from experts (``BankData.extracted``)."""
    return source in (ConceptSource.RULES, ConceptSource.HYBRID)


@transaction.atomic
def embedding_run_start(*, method: str, source: str = ConceptSource.LABELS, params: dict[str, Any] | None = None, user: Any = None) -> EmbeddingRun:
    """Queue a rebuild, or return the run that already covers identical inputs (queued, running or done)."""
    from embeddings.algorithms.methods import METHODS, frequency_power

    if method not in METHODS:
        raise EmbeddingInputError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
    if source not in ConceptSource.values:
        raise EmbeddingInputError(f"unknown source {source!r}; use labels, rules or hybrid")
    site: dict[str, Any] = {}
    if METHODS[method].kind == "concepts":
        if settings.EMBEDDING_FALLBACK_TEXT:
            site["fallback_text"] = settings.EMBEDDING_FALLBACK_TEXT
        if settings.EMBEDDING_TRIPLET_SHARE_MIN:
            site["triplet_share_min"] = settings.EMBEDDING_TRIPLET_SHARE_MIN
    params = {**METHODS[method].defaults, **site, **(params or {})}
    if METHODS[method].kind == "text":
        source = ConceptSource.LABELS  # text methods read no concepts: one run serves both sources
    else:
        # Resolved here, so that the run's parameters say how its concepts were weighed.
        try:
            params["frequency_power"] = frequency_power(params, extracted=_is_extracted(source))
        except ValueError as exc:
            raise EmbeddingInputError(str(exc)) from None
    fingerprint, extraction = _state_fingerprint(method, source, params)
    if source == ConceptSource.HYBRID and extraction is None:
        from concepts.services import ExtractionInputError, extraction_run_start

        try:
            extraction = extraction_run_start(source="hybrid", user=user)
        except ExtractionInputError as exc:
            raise EmbeddingInputError(str(exc)) from exc
    same = EmbeddingRun.objects.filter(fingerprint=fingerprint).exclude(status__in=[JobStatus.FAILED, JobStatus.CANCELLED]).order_by("-id").first()
    if same is not None:
        if same.status == JobStatus.DONE and (same.method, same.source) == embedding_default_get():
            # The bank is back where this run left it (say a problem imported by mistake, rebuilt
            # with, then deleted): it is the default's current result, as a new run would be.
            _publish_reused(run_id=same.pk)
        job_resend_if_queued(job=same, task=rebuild_embeddings_task)
        return same
    run = EmbeddingRun.objects.create(
        method=method, source=source, params=params, fingerprint=fingerprint, extraction_run=extraction, created_by=user
    )
    job_enqueue(job=run, task=rebuild_embeddings_task)
    return run


def embedding_run_wait(*, run_id: int, timeout: float | None = None) -> EmbeddingRun:
    """Run a queued rebuild here (a no-op if a worker has claimed it), then wait until it is no longer
    queued or running: a command that starts a rebuild reports the finished run, whoever built it
    (with a Redis broker a worker may claim the run first, or the lab may have started the same run)."""
    embedding_run_execute(run_id=run_id)
    return job_wait(model=EmbeddingRun, job_id=run_id, timeout=timeout, defer=("vectors", "problem_ids", "concept_vectors"))


def embedding_run_cancel(*, run: EmbeddingRun) -> bool:
    """Cancel a queued or running run; a running one stops at its next progress report."""
    return bool(
        EmbeddingRun.objects.filter(pk=run.pk, status__in=[JobStatus.PENDING, JobStatus.RUNNING]).update(
            status=JobStatus.CANCELLED, finished_at=timezone.now()
        )
    )


def _hybrid_ready(run_id: int) -> None:
    """Build the run's hybrid extraction here if no worker has (a no-op when done), and wait for it."""
    from concepts.models import ExtractionRun
    from concepts.services import extraction_run_wait

    run = extraction_run_wait(run=ExtractionRun.objects.get(pk=run_id))
    if run.status != JobStatus.DONE:
        raise EmbeddingInputError(f"the hybrid extraction #{run.pk} did not finish: {run.error or run.get_status_display()}")


def bank_data(
    *, source: str, extraction_run_id: int | None = None, with_selected_words: bool = False, with_share_triplets: bool = False
) -> tuple[list[int], list[str], Any, dict[str, dict[str, Any]]]:
    """Problem ids, concept slugs, the pure BankData for one concept source, and (rules and hybrid
    sources) the source's recall per collection on its labelled problems (`concept_recall_by_collection`),
    with the accepted triplets per collection where the run lets them choose its text share (README step 5)."""
    from concepts.models import Concept, ExtractedConcept, GroundTruthLabel
    from embeddings.algorithms.methods import BankData

    # One read of the bank, so ids, collections and texts stay aligned even while problems are imported.
    # Concept methods read the texts too: a problem without concepts borrows a vector from the problems
    # it reads like, and the text breaks ties (embeddings/algorithms/fallback.py); a rules or hybrid run
    # measures its recall per collection.
    bank = list(Problem.objects.order_by("id").values_list("id", "collection", "text"))
    if not bank:
        raise EmbeddingInputError("the bank has no problems")
    ids = [pid for pid, _, _ in bank]
    slugs = list(Concept.objects.order_by("slug").values_list("slug", flat=True))
    index = {slug: i for i, slug in enumerate(slugs)}
    row = {pid: i for i, pid in enumerate(ids)}
    sets: list[list[int]] = [[] for _ in ids]
    if source in (ConceptSource.RULES, ConceptSource.HYBRID):
        if extraction_run_id is None:
            raise EmbeddingInputError("no finished extraction run: run `python manage.py extract_concepts` first")
        if source == ConceptSource.HYBRID:
            _hybrid_ready(extraction_run_id)
        pairs = ExtractedConcept.objects.filter(run_id=extraction_run_id).values_list("problem_id", "concept__slug")
    else:
        pairs = GroundTruthLabel.objects.values_list("problem_id", "concept__slug")
    for pid, slug in pairs:
        if pid in row:
            sets[row[pid]].append(index[slug])
    texts = [text for _, _, text in bank]
    from concepts.selectors import selected_words

    recall, by_collection = None, {}
    collections = [collection for _, collection, _ in bank]
    share_triplets = None
    if source in (ConceptSource.RULES, ConceptSource.HYBRID):
        recall, by_collection = concept_recall_by_collection(row=row, collections=collections, concept_sets=sets, index=index)
        if with_share_triplets:
            share_triplets = accepted_triplet_rows(row=row, collections=collections)
    return ids, slugs, BankData(
        concept_sets=sets,
        n_concepts=len(slugs),
        texts=texts,
        glove_path=os.getenv("GLOVE_PATH") or None,
        selected_words=selected_words() if with_selected_words else None,
        concept_recall=recall,
        groups=collections,
        share_triplets=share_triplets,
        extracted=_is_extracted(source),
    ), by_collection


def accepted_triplet_rows(*, row: dict[int, int], collections: list[str]) -> dict[str, np.ndarray]:
    """The accepted triplets as rows of the bank, per collection (README step 5: a collection with
    enough of them chooses its text share on them). A triplet with a problem outside the bank or in
    another collection than its anchor's is left out."""
    from embeddings.selectors import accepted_triplets

    out: dict[str, list[tuple[int, int, int]]] = {}
    for a, p, n in accepted_triplets():
        if a in row and p in row and n in row and collections[row[a]] == collections[row[p]] == collections[row[n]]:
            out.setdefault(collections[row[a]], []).append((row[a], row[p], row[n]))
    return {name: np.asarray(t, dtype=np.int64).reshape(-1, 3) for name, t in out.items()}


def concept_recall_by_collection(
    *, row: dict[int, int], collections: list[str], concept_sets: list[list[int]], index: dict[str, int]
) -> tuple[np.ndarray, dict[str, dict[str, Any]]]:
    """The concept source's recall on the ground-truth labels, per collection of the bank
    (`fallback.recall_by_collection`; ``row``: problem id -> its row). A hybrid source's learned
    concepts on labelled problems are out of fold, so its recall is honest too. Where a collection has
    enough labelled problems held out from rule writing, the recall is measured on them alone."""
    from concepts.models import GroundTruthLabel, HeldOutProblem
    from embeddings.algorithms.fallback import recall_by_collection

    truth: dict[int, set[int]] = {}
    for pid, slug in GroundTruthLabel.objects.values_list("problem_id", "concept__slug"):
        if pid in row and slug in index:
            truth.setdefault(row[pid], set()).add(index[slug])
    held_out = {row[pid] for pid in HeldOutProblem.objects.values_list("problem_id", flat=True) if pid in row}
    return recall_by_collection(collections, concept_sets, truth, held_out=held_out)


TEXT_VECTOR_MODEL = "all-MiniLM-L6-v2"


def text_sha256(text: str) -> str:
    """The key a cached text vector is kept under: the SHA-256 of the text it was computed from."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def text_vectors_cached(
    *, ids: list[int], texts: list[str], on_progress: Callable[[int, int], None] | None = None
) -> tuple[np.ndarray, int]:
    """The problems' all-MiniLM-L6-v2 vectors, rows in the order of `ids`, encoding only the texts that
    have no vector yet or changed since theirs was made (the rest come from `TextVector`).

    `on_progress(encoded, to_encode)` is called after each batch with the texts encoded so far and the
    number this call has to encode; it may raise to stop (the batches already written stay: each row
    is a complete vector of the text it names). Returns (vectors, encoded now).
    """
    from embeddings.algorithms.text import MINILM_BATCH, MINILM_DIM, minilm_embeddings
    from embeddings.models import TextVector

    shas = [text_sha256(t) for t in texts]
    want = dict(zip(ids, shas))
    vectors = np.zeros((len(ids), MINILM_DIM), dtype=np.float32)
    row = {pid: i for i, pid in enumerate(ids)}
    have: set[int] = set()
    for start in range(0, len(ids), 5000):  # bounded IN lists on large banks
        chunk = ids[start : start + 5000]
        cached = TextVector.objects.filter(model=TEXT_VECTOR_MODEL, problem_id__in=chunk).values_list("problem_id", "text_sha256", "vector")
        for pid, sha, blob in cached:
            if sha == want[pid] and len(blob) == 4 * MINILM_DIM:
                vectors[row[pid]] = np.frombuffer(bytes(blob), dtype=np.float32)
                have.add(pid)
    todo = [i for i, pid in enumerate(ids) if pid not in have]
    for done, start in enumerate(range(0, len(todo), MINILM_BATCH), start=1):
        rows = todo[start : start + MINILM_BATCH]
        vectors[rows] = minilm_embeddings([texts[i] for i in rows])
        objs = [TextVector(problem_id=ids[i], model=TEXT_VECTOR_MODEL, text_sha256=shas[i], vector=vectors[i].tobytes()) for i in rows]
        try:
            with transaction.atomic():
                TextVector.objects.bulk_create(
                    objs, update_conflicts=True, unique_fields=["problem", "model"], update_fields=["text_sha256", "vector", "updated_at"]
                )
        except IntegrityError:  # a problem was deleted meanwhile: this run still uses the vectors, the cache skips the batch
            logger.warning("text vectors: a problem of this batch no longer exists; the batch is not cached")
        if on_progress:
            on_progress(min(len(todo), done * MINILM_BATCH), len(todo))
    return vectors, len(todo)


# An import leaving at least this many texts without a cached sentence vector says how to encode them
# ahead of the next rebuild (about a minute of a 2-core CPU worker's time).
TEXT_VECTOR_HINT_AT = 2000


def text_vectors_hint() -> str:
    """After an import: "" or a sentence saying how many problems have no cached sentence vector (so
    the next rebuild encodes them first) and how to do that now. Silent with the LSA fallback text or
    when fewer than TEXT_VECTOR_HINT_AT are missing. Edited texts with a stale vector are not counted."""
    from embeddings.models import TextVector

    if settings.EMBEDDING_FALLBACK_TEXT == "lsa":
        return ""
    missing = Problem.objects.exclude(id__in=TextVector.objects.filter(model=TEXT_VECTOR_MODEL).values("problem_id")).count()
    if missing < TEXT_VECTOR_HINT_AT:
        return ""
    minutes = max(1, round(missing / 30 / 60))
    return (
        f"{missing:,} problems have no cached sentence vector yet: the next rebuild encodes them first (about {minutes} min "
        "at 30 problems/s, one 2-core CPU worker's speed). To do it now, run `python manage.py encode_text_vectors`, "
        "which has no time limit."
    )


def embedding_run_execute(*, run_id: int, redelivered: bool = False) -> None:
    """Compute a run's vectors and store them on the row; publish it if it is the newest run of the site default."""
    from embeddings.algorithms.methods import METHODS, embed, needs_sentence_vectors

    if not job_claim(model=EmbeddingRun, job_id=run_id, redelivered=redelivered):
        return
    run = EmbeddingRun.objects.get(id=run_id)
    timings: dict[str, float] = {}
    last_report = [0.0]
    losses: list[float] = []  # every epoch's loss, for the run page's curve (the row gets them when the run ends)

    def on_progress(fraction: float, loss: float | None) -> None:
        if loss is not None:
            losses.append(float(loss))
        now = time.monotonic()
        if now - last_report[0] < 0.5:  # a row update at most twice a second
            return
        last_report[0] = now
        updated = EmbeddingRun.objects.filter(id=run_id, status=JobStatus.RUNNING).update(progress=fraction, loss=loss)
        if not updated:
            raise _Cancelled()

    try:
        started = time.monotonic()
        ids, slugs, data, recall_by_collection = bank_data(
            source=run.source, extraction_run_id=run.extraction_run_id, with_selected_words=METHODS[run.method].kind == "text",
            with_share_triplets=int(run.params.get("triplet_share_min", 0)) > 0,
        )
        timings["load_ms"] = (time.monotonic() - started) * 1000
        encoded = None
        if needs_sentence_vectors(run.method, run.params):
            started = time.monotonic()
            # After each batch the run says how far the encoding is (the bar is for training), which is
            # also where a cancelled run stops.
            encoding = {"encoded": 0, "of": 0}

            def on_encoded(done: int, total: int) -> None:
                encoding.update(encoded=done, of=total)
                if not EmbeddingRun.objects.filter(id=run_id, status=JobStatus.RUNNING).update(notes={"encoding": encoding}):
                    raise _Cancelled()

            try:
                data.sentence_vectors, encoded = text_vectors_cached(ids=ids, texts=data.texts, on_progress=on_encoded)
            except SoftTimeLimitExceeded:
                # A large bank's first encoding can outlast a task (about 30 problems/s per CPU worker).
                done = f"{encoding['encoded']} of {encoding['of']} texts were encoded and stay cached" if encoding["of"] else "no batch was finished"
                raise RuntimeError(
                    f"The worker's time limit (CELERY_TASK_SOFT_TIME_LIMIT = {settings.CELERY_TASK_SOFT_TIME_LIMIT} s) stopped this "
                    f"run while it encoded the problem texts for the sentence model: {done}. Rebuild again to go on from there, "
                    "or first run `python manage.py encode_text_vectors`, which has no time limit."
                ) from None
            except RuntimeError as exc:  # the sentence model cannot load: say how to run without it
                if METHODS[run.method].kind == "concepts":
                    raise RuntimeError(f"{exc}; or set EMBEDDING_FALLBACK_TEXT=lsa to use the LSA of the bank's text instead") from exc
                raise
            timings["text_vectors_ms"] = (time.monotonic() - started) * 1000
        started = time.monotonic()
        result = embed(run.method, data, run.params, on_progress=on_progress)
        timings["embed_ms"] = (time.monotonic() - started) * 1000
    except _Cancelled:
        return
    except (EmbeddingInputError, ValueError, RuntimeError) as exc:
        # Only a running run fails: one cancelled meanwhile stays cancelled, as the user asked.
        EmbeddingRun.objects.filter(id=run_id, status=JobStatus.RUNNING).update(status=JobStatus.FAILED, error=str(exc), finished_at=timezone.now())
        return
    vectors = np.ascontiguousarray(result.vectors, dtype=np.float32)
    if encoded is not None:
        result.notes["text_vectors"] = {"model": TEXT_VECTOR_MODEL, "encoded": encoded, "cached": len(ids) - encoded}
    if "text_weight_raised" in result.notes and recall_by_collection:
        # Per collection: how much of the labels the source finds there, and the text weight that gives.
        from embeddings.algorithms.fallback import text_weights_from_recall

        base, cap = result.notes["text_weight"], result.notes["borrowed_text_weight"]
        for entry in recall_by_collection.values():
            if entry["recall"] is not None:
                entry["text_weight"] = round(float(text_weights_from_recall(np.array([entry["recall"]]), base, cap)[0]), 4)
        result.notes["concept_recall"] = recall_by_collection
    if "triplet_share" in result.notes:
        # Per collection, the share its accepted triplets chose; per triplet (problem ids), whether the share
        # chosen on the other folds orders it, which is how evaluate_triplets scores it (selectors.triplet_results).
        out_of_fold = []
        for name, entry in result.notes["triplet_share"].items():
            for (a, p, n), right in zip(data.share_triplets[name].tolist(), entry.pop("out_of_fold")):
                out_of_fold.append([ids[a], ids[p], ids[n], int(right)])
        result.notes["triplet_share_out_of_fold"] = out_of_fold
    if result.concept_vectors is not None:
        from embeddings.algorithms.cooccurrence import concept_frequencies

        # Kept with the run: explaining a similarity needs the 1/f weights the vectors were built with
        # (f ** notes["frequency_power"]: methods.frequency_power).
        result.notes["frequencies"] = concept_frequencies(data.concept_sets, data.n_concepts).tolist()
    fields = dict(
        status=JobStatus.DONE,
        progress=1.0,
        loss=result.loss,
        losses=losses,
        notes=result.notes,
        timings=timings,
        problems=len(ids),
        missing=[ids[i] for i in result.missing],
        dim=int(vectors.shape[1]),
        problem_ids=np.asarray(ids, dtype=np.int64).tobytes(),
        vectors=vectors.tobytes(),
        concept_slugs=slugs if result.concept_vectors is not None else [],
        concept_vectors=np.ascontiguousarray(result.concept_vectors, dtype=np.float32).tobytes() if result.concept_vectors is not None else b"",
        finished_at=timezone.now(),
    )
    with transaction.atomic():
        if not EmbeddingRun.objects.filter(id=run_id, status=JobStatus.RUNNING).update(**fields):
            return  # cancelled meanwhile: never published
        # Only the site default's runs become active by themselves (any other needs "make active").
        if (run.method, run.source) == embedding_default_get():
            embedding_publish(run_id=run_id)
    logger.info("Embedding run %s (%s/%s): %d problems [%dms]", run_id, run.method, run.source, len(ids), sum(timings.values()))


@transaction.atomic
def embedding_publish(*, run_id: int) -> bool:
    """Make a finished run the active embedding unless a newer one already is (stale results never win)."""
    run = EmbeddingRun.objects.filter(id=run_id, status=JobStatus.DONE).first()
    if run is None:
        return False
    active = _active_row_locked(run=run)
    if active is None:
        return True
    if active.run_id >= run.pk:
        return False
    active.run, active.activated_by = run, None
    active.save()
    return True


@transaction.atomic
def _publish_reused(*, run_id: int) -> None:
    """Make a reused finished run of the site default active in place of an older result of the
    default, whatever their ages: unlike a run that finishes late (`embedding_publish`), it was just
    asked for, on the bank as it is now. A run someone made active by hand, or of another method or
    source, stays (`evaluate_triplets` reuses the default's run too, and must change nothing)."""
    run = EmbeddingRun.objects.filter(id=run_id, status=JobStatus.DONE).only("id", "method", "source").first()
    if run is None:
        return
    active = _active_row_locked(run=run)
    if active is None or active.run_id == run.pk or active.activated_by_id is not None:
        return
    # The active run's method and source only: `active.run` would read its vectors too.
    if EmbeddingRun.objects.filter(pk=active.run_id, method=run.method, source=run.source).exists():
        active.run = run
        active.save()


# --- the active embedding: the site default, and making a run active by hand ----------------------


class EmbeddingPolicyError(ValueError):
    pass


def embedding_default_get() -> tuple[str, str]:
    """(method, source) of the site default: the runs that become active by themselves."""
    from embeddings.models import EmbeddingDefault

    row = EmbeddingDefault.objects.filter(pk=1).values_list("method", "source").first()
    return (row[0], row[1]) if row else ("prob2vec", ConceptSource.LABELS)


@transaction.atomic
def embedding_default_set(*, method: str, source: str, user: Any = None) -> tuple[str, str]:
    """Choose the site default. The active run does not change here: the default's next finished run
    becomes active, or an instructor makes one active by hand."""
    from embeddings.algorithms.methods import METHODS
    from embeddings.models import EmbeddingDefault

    if method not in METHODS:
        raise EmbeddingPolicyError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
    if source not in ConceptSource.values:
        raise EmbeddingPolicyError(f"unknown source {source!r}; use labels, rules or hybrid")
    if METHODS[method].kind == "text":
        source = ConceptSource.LABELS  # text methods read no concepts (their runs are stored as labels)
    EmbeddingDefault.objects.update_or_create(pk=1, defaults={"method": method, "source": source, "updated_by": user})
    return method, source


@transaction.atomic
def embedding_activate(*, run_id: int, user: Any = None) -> EmbeddingRun:
    """Make a finished run the active embedding by hand ("make active"), whatever its method or age."""
    run = EmbeddingRun.objects.filter(id=run_id).defer("vectors", "problem_ids", "concept_vectors").first()
    if run is None:
        raise EmbeddingPolicyError(f"no embedding run #{run_id}")
    if run.status != JobStatus.DONE:
        raise EmbeddingPolicyError(f"run #{run_id} is {run.get_status_display()}: only a finished run can be made active")
    active = _active_row_locked(run=run, user=user)
    if active is not None:
        active.run, active.activated_by = run, user
        active.save()
    return run


def _active_row_locked(*, run: EmbeddingRun, user: Any = None) -> ActiveEmbedding | None:
    """The active-embedding row, locked for this transaction; None when there was none and it has
    just been created with `run` (by `user`). On a fresh install two runs may finish at once and
    both find no row: the second insert fails on the first's, and then locks and returns that row
    (a savepoint keeps the transaction usable), so the caller decides as it would have."""
    active = ActiveEmbedding.objects.select_for_update().filter(pk=1).first()
    if active is not None:
        return active
    try:
        with transaction.atomic():
            ActiveEmbedding.objects.create(pk=1, run=run, activated_by=user)
        return None
    except IntegrityError:
        return ActiveEmbedding.objects.select_for_update().get(pk=1)
