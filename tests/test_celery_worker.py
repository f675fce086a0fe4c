"""A real Celery worker process, over the Redis broker, against the test database."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
import redis

from tests.conftest import REDIS_URL
from tests.processes import Process, celery_app_on, celery_worker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def celery_worker_process(settings: Any) -> Iterator[Process]:
    redis.Redis.from_url(REDIS_URL).flushdb()
    with celery_worker(settings, REDIS_URL) as worker, celery_app_on(REDIS_URL, settings):
        yield worker


def test_an_extraction_run_completes_on_a_real_worker(
    celery_worker_process: Process, problem_factory: Any, concept_factory: Any
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

    if not wait_for(done):
        pytest.fail("the worker did not finish the run; its log:\n" + celery_worker_process.log())
    run.refresh_from_db()
    assert (run.status, run.problems_done, run.concepts_found) == ("done", 5, 3)
    assert ExtractedConcept.objects.filter(run=run).count() == 3


def test_an_embedding_rebuild_completes_on_a_real_worker_and_becomes_active(
    celery_worker_process: Process, problem_factory: Any
) -> None:
    from embeddings.models import EmbeddingRun
    from embeddings.selectors import active_run
    from embeddings.services import embedding_run_start

    for i in range(6):
        problem_factory(f"Problem {i}", labels=["nchoosek", "permutations"] if i % 2 else ["Bayes-formula"])
    run = embedding_run_start(method="prob2vec", source="labels")
    assert EmbeddingRun.objects.get(id=run.id).status == "pending"
    if not wait_for(lambda: EmbeddingRun.objects.get(id=run.id).status in ("done", "failed"), 90):
        pytest.fail("the worker did not finish the rebuild; its log:\n" + celery_worker_process.log())
    run.refresh_from_db()
    # 10 skip-gram dimensions and the text's (a tenth of each cosine: embeddings/algorithms/fallback.py)
    assert (run.status, run.problems, run.notes["text_weight"]) == ("done", 6, 0.1) and run.dim > 10
    assert active_run() == run
