"""Background jobs when the queue is down (enqueue fails) and when a worker dies (the claim)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from kombu.exceptions import OperationalError

from concepts import tasks
from concepts.jobs import MAX_JOB_ATTEMPTS, job_claim
from concepts.models import QUEUE_UNAVAILABLE, ExtractedConcept, ExtractionRun
from concepts.services import extraction_run_execute, extraction_run_start, extractor_report_start, rule_save


@pytest.fixture
def bank(problem_factory: Any, concept_factory: Any) -> None:
    rule_save(concept=concept_factory("nchoosek"), pattern=r"\\binom")
    problem_factory("Choose: $\\binom{10}{3}$.", labels=["nchoosek"])
    problem_factory("Roll a die.")


@pytest.fixture
def queue_down(monkeypatch: Any) -> None:
    """Every `.delay()` fails the way kombu does when Redis is unreachable (after its publish retries)."""

    def unreachable(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    for task in (tasks.extract_concepts, tasks.extractor_report_build, tasks.nn_extractor_experiment):
        monkeypatch.setattr(task, "delay", unreachable)


def test_a_job_the_queue_cannot_take_fails_with_a_clear_error(
    bank: None, queue_down: None, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run = extraction_run_start()
    assert (run.status, run.error, run.not_queued) == ("failed", QUEUE_UNAVAILABLE, True)  # the caller's object says so
    run.refresh_from_db()
    assert (run.status, run.error) == ("failed", QUEUE_UNAVAILABLE) and run.finished_at is not None
    with django_capture_on_commit_callbacks(execute=True):
        report = extractor_report_start()
    assert report.not_queued


def test_starting_again_once_the_queue_is_back_makes_a_new_run(
    bank: None, queue_down: None, monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        failed = extraction_run_start()
    monkeypatch.undo()  # Redis is back (tasks run eagerly here)
    with django_capture_on_commit_callbacks(execute=True):
        run = extraction_run_start()
    assert run.id != failed.id
    run.refresh_from_db()
    assert run.status == "done" and not run.not_queued


# Requests commit as they go (no ATOMIC_REQUESTS), so the enqueue runs inside the request: transaction=True.


@pytest.mark.django_db(transaction=True)
def test_the_api_answers_503_with_the_reason_when_the_queue_is_down(client: Any, alice: Any, bank: None, queue_down: None) -> None:
    client.force_login(alice)
    r = client.post("/api/extraction-runs/")
    assert r.status_code == 503
    assert (r.json()["status"], r.json()["error"]) == ("failed", QUEUE_UNAVAILABLE)
    r = client.post("/api/reports/", {"collection": ""}, content_type="application/json")
    assert r.status_code == 503 and r.json()["error"] == QUEUE_UNAVAILABLE


@pytest.mark.django_db(transaction=True)
def test_the_extraction_page_shows_the_reason_when_the_queue_is_down(client: Any, alice: Any, bank: None, queue_down: None) -> None:
    client.force_login(alice)
    r = client.post("/concepts/extraction/", follow=True)
    assert r.status_code == 200
    assert "Failed" in r.content.decode() and "The job queue (Redis) is unavailable" in r.content.decode()


def test_an_error_inside_an_eager_task_is_not_mistaken_for_a_queue_failure(
    bank: None, monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    def broken(*, run_id: int, redelivered: bool = False) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr("concepts.services.extraction_run_execute", broken)
    with pytest.raises(KeyError), django_capture_on_commit_callbacks(execute=True):
        extraction_run_start()
    assert ExtractionRun.objects.get().error == ""


# --- the claim: exactly one worker runs a job, and a redelivery takes over from a dead one -----------


def test_a_job_is_claimed_once_and_a_duplicate_delivery_does_nothing(bank: None) -> None:
    run = ExtractionRun.objects.create(fingerprint="x")
    assert job_claim(model=ExtractionRun, job_id=run.id) is True
    assert job_claim(model=ExtractionRun, job_id=run.id) is False  # a second copy of the message
    run.refresh_from_db()
    assert (run.status, run.attempts) == ("running", 1)


def test_a_redelivered_message_takes_over_a_job_whose_worker_died(bank: None) -> None:
    run = ExtractionRun.objects.create(fingerprint="x")
    job_claim(model=ExtractionRun, job_id=run.id)  # ... and that worker was killed
    assert job_claim(model=ExtractionRun, job_id=run.id, redelivered=True) is True
    run.refresh_from_db()
    assert (run.status, run.attempts) == ("running", 2)


@pytest.mark.parametrize("status", ["done", "failed", "cancelled"])
def test_a_redelivered_message_of_a_finished_job_does_nothing(bank: None, status: str) -> None:
    run = ExtractionRun.objects.create(fingerprint="x", status=status, attempts=1)
    assert job_claim(model=ExtractionRun, job_id=run.id, redelivered=True) is False
    run.refresh_from_db()
    assert (run.status, run.attempts) == (status, 1)


def test_a_job_whose_workers_keep_dying_is_failed(bank: None) -> None:
    run = ExtractionRun.objects.create(fingerprint="x", status="running", attempts=MAX_JOB_ATTEMPTS)
    assert job_claim(model=ExtractionRun, job_id=run.id, redelivered=True) is False
    run.refresh_from_db()
    assert run.status == "failed" and f"{MAX_JOB_ATTEMPTS} times" in run.error


def test_a_redelivered_extraction_redoes_the_run_without_duplicate_rows(bank: None) -> None:
    run = extraction_run_start()
    extraction_run_execute(run_id=run.id)
    rows = sorted(ExtractedConcept.objects.filter(run=run).values_list("problem_id", "concept_id"))
    # A worker died after writing some rows: the run is left RUNNING with them.
    ExtractionRun.objects.filter(id=run.id).update(status="running", attempts=1)
    extraction_run_execute(run_id=run.id)  # not a redelivery: somebody else's
    assert ExtractionRun.objects.get(id=run.id).status == "running"
    extraction_run_execute(run_id=run.id, redelivered=True)
    run.refresh_from_db()
    assert (run.status, run.attempts) == ("done", 2)
    assert sorted(ExtractedConcept.objects.filter(run=run).values_list("problem_id", "concept_id")) == rows
    extraction_run_execute(run_id=run.id, redelivered=True)  # a finished run: nothing happens
    assert ExtractionRun.objects.get(id=run.id).attempts == 2


def test_tasks_read_the_redelivered_flag_of_their_message() -> None:
    def task(info: Any) -> Any:
        return SimpleNamespace(request=SimpleNamespace(delivery_info=info))

    assert tasks.redelivered(task({"redelivered": True})) is True
    assert tasks.redelivered(task({"redelivered": False})) is False
    assert tasks.redelivered(task(None)) is False  # eager: no delivery


def test_a_queued_job_whose_message_was_lost_is_sent_again_when_the_same_work_is_asked_for(
    bank: None, django_capture_on_commit_callbacks: Any
) -> None:
    """Redis restarted empty: the queued jobs' messages are gone. Asking for the same work returns the
    queued job, as before, and now sends its message again, so it runs (tasks run eagerly here)."""
    from embeddings.models import EmbeddingRun
    from embeddings.services import embedding_run_start

    lost = extraction_run_start()  # its message is never sent: this test's transaction never commits
    embedding_lost = embedding_run_start(method="onehot", source="labels")
    assert ExtractionRun.objects.get(pk=lost.pk).status == "pending"
    with django_capture_on_commit_callbacks(execute=True):
        again = extraction_run_start()
        embedding_again = embedding_run_start(method="onehot", source="labels")
    assert (again.pk, embedding_again.pk) == (lost.pk, embedding_lost.pk)
    assert ExtractionRun.objects.get(pk=lost.pk).status == "done"
    assert EmbeddingRun.objects.get(pk=embedding_lost.pk).status == "done"
    # A finished job is never sent again.
    with django_capture_on_commit_callbacks(execute=True) as sent:
        assert extraction_run_start().pk == lost.pk
    assert sent == []


def test_with_the_queue_down_a_queued_job_asked_for_again_stays_queued_and_a_command_runs_it(
    bank: None, queue_down: None, django_capture_on_commit_callbacks: Any
) -> None:
    import io

    from django.core.management import call_command

    lost = extraction_run_start()  # queued before Redis went down; its message lost
    with django_capture_on_commit_callbacks(execute=True):
        assert extraction_run_start().pk == lost.pk
    assert ExtractionRun.objects.get(pk=lost.pk).status == "pending"  # not failed by the resend
    call_command("extract_concepts", stdout=io.StringIO())
    assert ExtractionRun.objects.get(pk=lost.pk).status == "done"
