"""Celery tasks: interfaces that take ids and call a service (imported inside, to avoid cycles)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from concepts.tasks import JobTask, redelivered


@shared_task(bind=True, acks_late=True, base=JobTask, job_model="embeddings.EmbeddingRun")
def rebuild_embeddings(self: Any, run_id: int) -> None:
    from embeddings.services import embedding_run_execute

    embedding_run_execute(run_id=run_id, redelivered=redelivered(self))
