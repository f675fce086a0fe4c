"""Celery tasks: interfaces that take ids and call a service (imported inside, to avoid cycles)."""

from __future__ import annotations

from celery import shared_task


@shared_task(acks_late=True)
def rebuild_embeddings(run_id: int) -> None:
    from embeddings.services import embedding_run_execute

    embedding_run_execute(run_id=run_id)
