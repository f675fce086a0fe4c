"""The whole stack in separate processes: gunicorn serving the site, a Celery worker, Redis and
PostgreSQL (the test database). Faults: a worker killed mid-job, and Redis going down.

People and scripts reach the site only over HTTP here: the real login form with its CSRF token, the
lab's rebuild form, the practice pages and the token API. The test process reads rows to check the
outcome and, for the killed worker, starts a deliberately long rebuild itself.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import pytest
import redis
import requests

from concepts.models import QUEUE_UNAVAILABLE
from tests.conftest import REDIS_URL
from tests.processes import celery_app_on, celery_worker, gunicorn, redis_server, start_celery_worker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PASSWORD = "password-123"  # tests/conftest.py make_user
HTTP_TIMEOUT = 30  # a request that hangs (on a dead Redis, say) fails the test instead of stalling it


@pytest.fixture
def bank(problem_factory: Any, alice: Any, sam: Any) -> None:
    """A small course open for practice, with expert labels (Prob2Vec's input)."""
    from problems.models import Module

    for i in range(3):
        problem_factory(f"Choose {i + 2} of 6.", title=f"Count {i}", labels=["nchoosek"], answer=str([15, 20, 15][i]))
    problem_factory("Two heads in four tosses.", title="Binomial", labels=["nchoosek", "binomial-distribution"], answer="6/16")
    problem_factory("A test is 99% accurate.", title="Bayes", module="bayes", labels=["Bayes-formula", "conditional-probability"])
    Module.objects.update(open_for_practice=True)


@dataclass
class Form:
    action: str
    csrf: str


def form_with(page: requests.Response, marker: str) -> Form:
    """The <form> of `page` that contains `marker`: where it posts and its CSRF token."""
    for form in re.findall(r"<form\b.*?</form>", page.text, re.S):
        if marker in form:
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
            assert token, f"no CSRF token in the form with {marker!r}"
            action = re.search(r'<form\b[^>]*\baction="([^"]*)"', form)
            return Form(urljoin(page.url, action.group(1) if action else ""), token.group(1))
    raise AssertionError(f"no form with {marker!r} on {page.url}")


def login(base: str, username: str) -> requests.Session:
    """Sign in through the login page, as a browser does."""
    session = requests.Session()
    page = session.get(f"{base}/login/", timeout=HTTP_TIMEOUT)
    form = form_with(page, 'name="password"')
    r = session.post(
        form.action,
        data={"username": username, "password": PASSWORD, "csrfmiddlewaretoken": form.csrf, "next": ""},
        timeout=HTTP_TIMEOUT,
    )
    assert r.status_code == 200 and "/login/" not in r.url, r.text[:2000]
    return session


def api_token(base: str, username: str) -> dict[str, str]:
    r = requests.post(f"{base}/api/token/", json={"username": username, "password": PASSWORD}, timeout=HTTP_TIMEOUT)
    assert r.status_code == 200, r.text
    return {"Authorization": f"Token {r.json()['token']}"}


def post_rebuild(ta: requests.Session, base: str) -> requests.Response:
    """Submit the lab's "Rebuild every method" form, for Prob2Vec only (the view takes `method` to narrow it)."""
    lab = ta.get(f"{base}/lab/", timeout=HTTP_TIMEOUT)
    form = form_with(lab, 'id="rebuild-all"')
    r = ta.post(form.action, data={"csrfmiddlewaretoken": form.csrf, "method": "prob2vec"}, timeout=HTTP_TIMEOUT)
    assert r.status_code == 200, r.text[:2000]  # after the redirect back to the lab
    return r


def rebuild_over_http(ta: requests.Session, base: str, worker: Any) -> Any:
    """Start a Prob2Vec rebuild in the lab and poll its status page until the worker has finished it."""
    from embeddings.models import EmbeddingRun

    page = post_rebuild(ta, base)
    assert "2 rebuilds queued" in page.text  # expert labels and rule concepts
    run = EmbeddingRun.objects.filter(method="prob2vec", source="labels").latest("id")
    assert f'href="/lab/runs/{run.id}/"' in page.text

    def finished() -> bool:
        # The page's poll: its status card while the run goes on, a reload (HX-Refresh) once it has ended.
        status = ta.get(f"{base}/lab/runs/{run.id}/", headers={"HX-Request": "true"}, timeout=HTTP_TIMEOUT)
        return status.headers.get("HX-Refresh") == "true"

    if not wait_for(finished, 90, interval=0.5):
        pytest.fail("the worker did not finish the rebuild; its log:\n" + worker.log()[-6000:])
    page = ta.get(f"{base}/lab/runs/{run.id}/", timeout=HTTP_TIMEOUT).text  # the page it reloads
    assert 'class="status-done"' in page or 'class="status-failed"' in page
    run.refresh_from_db()
    return run


def test_a_rebuild_started_in_the_lab_runs_on_the_worker_and_becomes_active(settings: Any, bank: None) -> None:
    from embeddings.models import EmbeddingRun
    from embeddings.selectors import active_run

    redis.Redis.from_url(REDIS_URL).flushdb()
    with celery_worker(settings, REDIS_URL) as worker, gunicorn(settings, REDIS_URL) as base:
        ta = login(base, "alice")
        run = rebuild_over_http(ta, base, worker)
        assert (run.status, run.problems, run.attempts) == ("done", 5, 1)
        assert active_run() == run
        # The other source fails on its own, clearly, and never replaces the active embedding.
        rules = EmbeddingRun.objects.get(method="prob2vec", source="rules")
        assert wait_for(lambda: EmbeddingRun.objects.get(id=rules.id).status == "failed", 60)
        assert "no finished extraction run" in EmbeddingRun.objects.get(id=rules.id).error
        assert active_run() == run


def test_a_worker_killed_mid_job_is_replaced_and_the_job_finishes_exactly_once(settings: Any, bank: None) -> None:
    from embeddings.models import ActiveEmbedding, EmbeddingRun
    from embeddings.services import embedding_run_start
    from embeddings.tasks import rebuild_embeddings

    broker = redis.Redis.from_url(REDIS_URL)
    broker.flushdb()
    visibility = 6
    # Redis gives an unacknowledged job to another worker after `visibility` seconds. The settings refuse
    # a hard time limit that outlasts it; the solo pool enforces no time limits anyway.
    env = {
        "CELERY_BROKER_VISIBILITY_TIMEOUT": str(visibility),
        "CELERY_TASK_TIME_LIMIT": str(visibility - 1),
        "CELERY_TASK_SOFT_TIME_LIMIT": str(visibility - 2),
    }
    doomed = start_celery_worker(settings, REDIS_URL, env, name="doomed")
    try:
        with celery_app_on(REDIS_URL, settings):
            # Long enough to be killed in the middle: 30,000 full-batch epochs (no early stop), seconds of work.
            run = embedding_run_start(method="prob2vec", source="labels", params={"epochs": 30000, "tol": 0})

            def training() -> bool:
                row = EmbeddingRun.objects.get(id=run.id)
                return row.status == "running" and row.progress > 0

            if not wait_for(training, 60, interval=0.05):
                pytest.fail("the worker never started the rebuild; its log:\n" + doomed.log()[-6000:])
            doomed.kill()
            killed_at = time.monotonic()
            run.refresh_from_db()
            assert (run.status, run.attempts) == ("running", 1) and run.progress < 0.5
            assert broker.hlen("unacked") == 1 and broker.llen("celery") == 0  # held for the dead worker, not lost

            # The message comes back once its visibility timeout has passed: the replacement restores it at start.
            time.sleep(max(0.0, visibility + 0.5 - (time.monotonic() - killed_at)))
            with celery_worker(settings, REDIS_URL, env, name="replacement") as replacement:
                if not wait_for(lambda: EmbeddingRun.objects.get(id=run.id).status in ("done", "failed"), 120):
                    pytest.fail("the replacement did not finish the rebuild; its log:\n" + replacement.log()[-6000:])
                run.refresh_from_db()
                assert (run.status, run.attempts, run.error) == ("done", 2, "")
                assert ActiveEmbedding.objects.get().run_id == run.id
                done_line = f"Embedding run {run.id} (prob2vec/labels)"
                assert doomed.log().count(done_line) == 0 and replacement.log().count(done_line) == 1
                assert "its worker died; starting it again" in replacement.log()

                # A second message for the finished run (a duplicate delivery) does nothing.
                finished_at = run.finished_at
                rebuild_embeddings.delay(run.id)
                received = re.compile(r"rebuild_embeddings\[[0-9a-f-]+\] received")
                assert wait_for(lambda: len(received.findall(replacement.log())) == 2, 30), replacement.log()[-3000:]
                assert wait_for(lambda: broker.llen("celery") == 0 and broker.hlen("unacked") == 0, 30)
                run.refresh_from_db()
                assert (run.status, run.attempts, run.finished_at) == ("done", 2, finished_at)
                assert replacement.log().count(done_line) == 1
                assert EmbeddingRun.objects.count() == 1 and ActiveEmbedding.objects.get().run_id == run.id
    finally:
        doomed.stop()


def test_with_redis_down_pages_serve_jobs_say_so_and_recommendations_go_on(
    settings: Any, bank: None, problem_factory: Any, sam: Any
) -> None:
    from concepts.models import ExtractionRun
    from embeddings.models import EmbeddingRun

    with redis_server() as (broker_url, redis_process), celery_worker(settings, broker_url) as worker, gunicorn(settings, broker_url) as base:
        ta = login(base, "alice")
        active = rebuild_over_http(ta, base, worker)  # built while Redis is up: the last active embedding
        assert active.status == "done"

        redis_process.kill()

        student = login(base, "sam")
        for path in ("/", "/problems/", "/practice/"):
            assert student.get(f"{base}{path}", timeout=HTTP_TIMEOUT).status_code == 200, path

        # The lab's rebuild form (the bank changed, so this is a new run, not the earlier one reused).
        problem_factory("Choose 4 of 9.", title="Count new", labels=["nchoosek"])
        page = post_rebuild(ta, base)
        assert QUEUE_UNAVAILABLE in page.text and "rebuilds queued" not in page.text
        newest = EmbeddingRun.objects.latest("id")
        assert newest.id != active.id and (newest.status, newest.error) == ("failed", QUEUE_UNAVAILABLE)

        # The extraction page's start form.
        runs_page = ta.get(f"{base}/concepts/extraction/", timeout=HTTP_TIMEOUT)
        form = form_with(runs_page, "Extract concepts now")
        r = ta.post(form.action, data={"csrfmiddlewaretoken": form.csrf}, timeout=HTTP_TIMEOUT)
        assert r.status_code == 200 and "/concepts/extraction/" in r.url
        assert "Failed" in r.text and QUEUE_UNAVAILABLE in r.text

        # The API: 503, with the reason, and the run is not left queued forever.
        r = requests.post(f"{base}/api/extraction-runs/", headers=api_token(base, "alice"), timeout=HTTP_TIMEOUT)
        assert r.status_code == 503 and (r.json()["status"], r.json()["error"]) == ("failed", QUEUE_UNAVAILABLE)
        assert not ExtractionRun.objects.filter(status__in=["pending", "running"]).exists()

        # Students keep getting recommendations from the last active embedding.
        r = requests.get(f"{base}/api/students/{sam.id}/next", headers=api_token(base, "sam"), timeout=HTTP_TIMEOUT)
        assert r.status_code == 200, r.text
        assert r.json()["embedding_run"] == active.id and r.json()["problem"] is not None
