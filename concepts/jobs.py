"""Writes every background job shares (extraction runs, reports, experiments, embedding runs):
send it to the queue once the row is committed, and let exactly one worker claim it.

Tasks ack late, so the broker keeps a job's message until its task returns. If the worker dies mid-task
(killed, out of memory, machine lost), Redis hands the message out again, marked redelivered, once
the visibility timeout passes (prob2vec_site/settings.py). The claim below lets that redelivery take
over the job its dead worker left RUNNING; a plain duplicate delivery, or any delivery of a finished
or cancelled job, does nothing.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from kombu.exceptions import OperationalError

from concepts.models import QUEUE_UNAVAILABLE, BackgroundJob, JobStatus

logger = logging.getLogger(__name__)

# A job whose worker died this many times is failed rather than handed out again (it may be what kills it).
MAX_JOB_ATTEMPTS = 3


def job_enqueue(*, job: BackgroundJob, task: Any) -> None:
    """Send `task(job.pk)` once the surrounding transaction commits.

    If the broker cannot be reached, the job is failed with QUEUE_UNAVAILABLE (on the row and on `job`
    itself, so the caller can tell the user) instead of staying queued forever or failing the request.
    """

    def send() -> None:
        try:
            task.delay(job.pk)
        except OperationalError as exc:  # kombu's "cannot reach the broker", after the publish retry policy
            logger.error("could not queue %s #%s: %s", type(job).__name__, job.pk, exc)
            now = timezone.now()
            type(job).objects.filter(pk=job.pk, status=JobStatus.PENDING).update(
                status=JobStatus.FAILED, error=QUEUE_UNAVAILABLE, finished_at=now
            )
            job.status, job.error, job.finished_at = JobStatus.FAILED, QUEUE_UNAVAILABLE, now

    transaction.on_commit(send)


def job_resend_if_queued(*, job: BackgroundJob, task: Any) -> None:
    """A request for identical work found `job`: if it is still queued, send its message again.
    Redis may have restarted empty (it keeps nothing on disk unless told to), losing the message, and
    the job would then wait forever while every request for the same work returned it. A second
    message is harmless: one delivery claims the job, and the others find it claimed and do nothing.
    If the broker cannot be reached the job stays queued, as it was (a command runs it in process)."""
    if job.status != JobStatus.PENDING:
        return

    def send() -> None:
        try:
            task.delay(job.pk)
        except OperationalError as exc:
            logger.warning("could not queue %s #%s again: %s", type(job).__name__, job.pk, exc)

    transaction.on_commit(send)


def job_claim(*, model: type[BackgroundJob], job_id: int, redelivered: bool = False) -> bool:
    """Take the job for this worker: PENDING -> RUNNING, or, for a redelivered message, a RUNNING job
    whose worker died. False: someone else has it, or it is finished, cancelled or failed."""
    now = timezone.now()
    jobs = model.objects.filter(id=job_id)
    if jobs.filter(status=JobStatus.PENDING).update(status=JobStatus.RUNNING, started_at=now, attempts=F("attempts") + 1):
        return True
    if not redelivered:
        return False
    if jobs.filter(status=JobStatus.RUNNING, attempts__lt=MAX_JOB_ATTEMPTS).update(started_at=now, attempts=F("attempts") + 1):
        logger.warning("%s #%s: its worker died; starting it again", model.__name__, job_id)
        return True
    failed = jobs.filter(status=JobStatus.RUNNING).update(
        status=JobStatus.FAILED,
        error=f"A worker died while running this job, {MAX_JOB_ATTEMPTS} times; see the worker logs.",
        finished_at=now,
    )
    if failed:
        logger.error("%s #%s: its worker died %d times; failed", model.__name__, job_id, MAX_JOB_ATTEMPTS)
    return False


def job_fail_unfinished(*, model: type[BackgroundJob], job_id: int, error: str) -> bool:
    """Mark a job FAILED with `error` if its task ended in an exception the service did not handle
    (a bug, the soft time limit) while the row still says PENDING or RUNNING, so no page polls forever."""
    failed = model.objects.filter(id=job_id, status__in=[JobStatus.PENDING, JobStatus.RUNNING]).update(
        status=JobStatus.FAILED, error=error[:2000], finished_at=timezone.now()
    )
    if failed:
        logger.error("%s #%s failed: %s", model.__name__, job_id, error)
    return bool(failed)


def job_wait(*, model: type[BackgroundJob], job_id: int, timeout: float | None = None, defer: tuple[str, ...] = ()) -> BackgroundJob:
    """The job once it is no longer queued or running, or as it is after `timeout` seconds
    (default CELERY_TASK_TIME_LIMIT): how a command that ran its job here, or found a worker had
    it, waits for the outcome. `defer`: large columns the caller does not read."""
    from django.conf import settings

    limit = time.monotonic() + (timeout if timeout is not None else settings.CELERY_TASK_TIME_LIMIT)
    while True:
        job = model.objects.defer(*defer).get(pk=job_id)
        if job.status not in (JobStatus.PENDING, JobStatus.RUNNING) or time.monotonic() > limit:
            return job
        time.sleep(0.5)
