"""Celery tasks: interfaces that take ids and call a service (imported inside, to avoid cycles).

Every job task acks late and tells the service whether its message is a redelivery: the claim in
concepts/jobs.py lets a redelivered message take over a job whose worker died.
"""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task


class JobTask(Task):
    """A task about one job row (`job_model`, id as the first argument). An exception that escapes the
    service (a bug; SoftTimeLimitExceeded before the hard limit) fails the row with the message, so
    its page stops polling and says what happened."""

    job_model = ""  # "app_label.ModelName"

    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        from django.apps import apps

        from concepts.jobs import job_fail_unfinished

        job_id = args[0] if args else kwargs.get("run_id") or kwargs.get("report_id") or kwargs.get("experiment_id")
        if job_id is not None:
            job_fail_unfinished(model=apps.get_model(self.job_model), job_id=job_id, error=f"The job stopped: {type(exc).__name__}: {exc}")


def redelivered(task: Any) -> bool:
    """True when the broker hands this message out again because a worker took it and never acked it."""
    return bool((task.request.delivery_info or {}).get("redelivered"))


@shared_task(bind=True, acks_late=True, base=JobTask, job_model="concepts.ExtractionRun")
def extract_concepts(self: Any, run_id: int) -> None:
    from concepts.services import extraction_run_execute

    extraction_run_execute(run_id=run_id, redelivered=redelivered(self))


@shared_task(bind=True, acks_late=True, base=JobTask, job_model="concepts.ExtractorReport")
def extractor_report_build(self: Any, report_id: int) -> None:
    from concepts.services import extractor_report_compute

    extractor_report_compute(report_id=report_id, redelivered=redelivered(self))


@shared_task(bind=True, acks_late=True, base=JobTask, job_model="concepts.NeuralExperiment")
def nn_extractor_experiment(self: Any, experiment_id: int) -> None:
    from concepts.services import neural_experiment_execute

    neural_experiment_execute(experiment_id=experiment_id, redelivered=redelivered(self))
