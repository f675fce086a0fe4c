"""A real Celery worker process, over the Redis broker, against the test database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest
import redis

from tests.conftest import REDIS_URL

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def celery_worker_process(settings: Any) -> Iterator[subprocess.Popen[str]]:
    from prob2vec_site.celery import app

    redis.Redis.from_url(REDIS_URL).flushdb()
    db = settings.DATABASES["default"]
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "CELERY_BROKER_URL": REDIS_URL,
        "DB_CONN_MAX_AGE": "0",
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "prob2vec_site", "worker", "--pool", "solo", "--loglevel", "INFO",
         "--without-heartbeat", "--without-gossip", "--without-mingle"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    old = {"broker_url": app.conf.broker_url, "task_always_eager": app.conf.task_always_eager}

    def reset_connections() -> None:
        # The app caches its broker connections and producers; drop those made for the previous broker.
        app.close()
        app.amqp._producer_pool = None

    reset_connections()
    app.conf.update(broker_url=REDIS_URL, broker_write_url=REDIS_URL, broker_read_url=REDIS_URL, task_always_eager=False)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    try:
        yield worker
    finally:
        reset_connections()
        app.conf.update(**old, broker_write_url=None, broker_read_url=None)
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()


def wait_for(predicate: Any, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_an_extraction_run_completes_on_a_real_worker(
    celery_worker_process: subprocess.Popen[str], problem_factory: Any, concept_factory: Any
) -> None:
    from concepts.models import ExtractedConcept, ExtractionRun
    from concepts.services import extraction_run_start, rule_save

    concept = concept_factory("nchoosek")
    for i in range(5):
        problem_factory(f"Problem {i}: $\\binom{{{i + 5}}}{{2}}$" if i % 2 == 0 else f"Problem {i}: no footprint")
    rule_save(concept=concept, pattern=r"\\binom")
    run = extraction_run_start()
    assert ExtractionRun.objects.get(id=run.id).status == "pending"  # queued on Redis, not run eagerly

    def done() -> bool:
        return ExtractionRun.objects.get(id=run.id).status in ("done", "failed")

    finished = wait_for(done)
    if not finished:
        celery_worker_process.terminate()
        pytest.fail("the worker did not finish the run; its log:\n" + (celery_worker_process.communicate(timeout=10)[0] or ""))
    run.refresh_from_db()
    assert (run.status, run.problems_done, run.concepts_found) == ("done", 5, 3)
    assert ExtractedConcept.objects.filter(run=run).count() == 3


def test_an_embedding_rebuild_completes_on_a_real_worker_and_becomes_active(
    celery_worker_process: subprocess.Popen[str], problem_factory: Any
) -> None:
    from embeddings.models import EmbeddingRun
    from embeddings.selectors import active_run
    from embeddings.services import embedding_run_start

    for i in range(6):
        problem_factory(f"Problem {i}", labels=["nchoosek", "permutations"] if i % 2 else ["Bayes-formula"])
    run = embedding_run_start(method="prob2vec", source="labels")
    assert EmbeddingRun.objects.get(id=run.id).status == "pending"
    if not wait_for(lambda: EmbeddingRun.objects.get(id=run.id).status in ("done", "failed"), 90):
        celery_worker_process.terminate()
        pytest.fail("the worker did not finish the rebuild; its log:\n" + (celery_worker_process.communicate(timeout=10)[0] or ""))
    run.refresh_from_db()
    assert (run.status, run.problems, run.dim) == ("done", 6, 10)
    assert active_run() == run
