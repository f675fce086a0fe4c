"""Celery tasks: interfaces that take ids and call a service (imported inside, to avoid cycles)."""

from __future__ import annotations

from celery import shared_task


@shared_task(acks_late=True)
def extract_concepts(run_id: int) -> None:
    from concepts.services import extraction_run_execute

    extraction_run_execute(run_id=run_id)


@shared_task(acks_late=True)
def extractor_report_build(report_id: int) -> None:
    from concepts.services import extractor_report_compute

    extractor_report_compute(report_id=report_id)


@shared_task(acks_late=True)
def nn_extractor_experiment(experiment_id: int) -> None:
    from concepts.services import neural_experiment_execute

    neural_experiment_execute(experiment_id=experiment_id)
