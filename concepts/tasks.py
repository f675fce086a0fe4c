"""Celery tasks: interfaces that take ids and call a service (imported inside, to avoid cycles).

Every job task acks late and tells the service whether its message is a redelivery: the claim in
concepts/jobs.py lets a redelivered message take over a job whose worker died.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task


def redelivered(task: Any) -> bool:
    """True when the broker hands this message out again because a worker took it and never acked it."""
    return bool((task.request.delivery_info or {}).get("redelivered"))


@shared_task(bind=True, acks_late=True)
def extract_concepts(self: Any, run_id: int) -> None:
    from concepts.services import extraction_run_execute

    extraction_run_execute(run_id=run_id, redelivered=redelivered(self))


@shared_task(bind=True, acks_late=True)
def extractor_report_build(self: Any, report_id: int) -> None:
    from concepts.services import extractor_report_compute

    extractor_report_compute(report_id=report_id, redelivered=redelivered(self))


@shared_task(bind=True, acks_late=True)
def nn_extractor_experiment(self: Any, experiment_id: int) -> None:
    from concepts.services import neural_experiment_execute

    neural_experiment_execute(experiment_id=experiment_id, redelivered=redelivered(self))
