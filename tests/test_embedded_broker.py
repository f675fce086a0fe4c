"""`make run` without Redis: a real Celery worker on the embedded filesystem broker runs jobs in the
background and reports progress that the page polls; prob2vec_site/devrun.py starts and stops it with
the web server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from django.urls import reverse

from tests.processes import Process, _env, celery_app_on, celery_worker, filesystem_broker, free_port, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def broker(tmp_path: Path, settings: Any) -> Iterator[tuple[str, dict[str, str]]]:
    url, env, options = filesystem_broker(tmp_path / "broker")
    with celery_app_on(url, settings, options):
        yield url, env


def test_a_long_rebuild_runs_on_the_worker_and_the_page_polls_its_progress(
    broker: tuple[str, dict[str, str]], settings: Any, client: Any, problem_factory: Any, ivan: Any
) -> None:
    from embeddings.models import EmbeddingRun

    url, env = broker
    for i in range(6):
        problem_factory(f"Problem {i}", labels=["nchoosek", "permutations"] if i % 2 else ["Bayes-formula"])
    client.force_login(ivan)
    with celery_worker(settings, url, env) as worker:
        # The request only queues the job (a file in the broker folder) and returns.
        from embeddings.services import embedding_run_start

        long_run = embedding_run_start(method="prob2vec", source="labels", params={"epochs": 5_000_000, "tol": -1.0}, user=ivan)
        assert EmbeddingRun.objects.get(pk=long_run.pk).status == "pending"
        status_url = reverse("embeddings:lab-run", args=[long_run.pk])
        seen: list[str] = []

        def moving() -> bool:
            html = client.get(status_url, HTTP_HX_REQUEST="true").content.decode()
            seen.append(html)
            run = EmbeddingRun.objects.only("status", "progress").get(pk=long_run.pk)
            return run.status == "running" and 0 < run.progress < 1 and "<progress" in html and 'hx-trigger="every 2s"' in html

        if not wait_for(moving, 90, interval=0.3):
            pytest.fail(f"no progress seen; last fragment {seen[-1:]}, worker log:\n{worker.log()[-4000:]}")
        # Cancel it from the page: the worker stops at its next progress report.
        client.post(reverse("embeddings:lab-run-cancel", args=[long_run.pk]))
        assert wait_for(lambda: EmbeddingRun.objects.get(pk=long_run.pk).status == "cancelled", 30)
        # Then a normal rebuild from the lab's button finishes on the worker, and the status stops polling.
        response = client.post(reverse("embeddings:lab"), {"method": ["onehot"]})
        assert response.status_code == 302
        onehot = EmbeddingRun.objects.get(method="onehot", source="labels")
        if not wait_for(lambda: EmbeddingRun.objects.get(pk=onehot.pk).status in ("done", "failed"), 60):
            pytest.fail("the worker did not finish the rebuild; its log:\n" + worker.log()[-4000:])
        assert EmbeddingRun.objects.get(pk=onehot.pk).status == "done"
        assert client.get(reverse("embeddings:lab-run", args=[onehot.pk]), HTTP_HX_REQUEST="true").get("HX-Refresh") == "true"
        html = client.get(reverse("embeddings:lab-run", args=[onehot.pk])).content.decode()  # the page it reloads
        assert "every 2s" not in html and "Done" in html
        assert "Task embeddings.tasks.rebuild_embeddings" in worker.log()


def test_devrun_starts_a_worker_beside_the_web_server_and_stops_both(
    broker: tuple[str, dict[str, str]], settings: Any, problem_factory: Any
) -> None:
    import requests

    from embeddings.models import EmbeddingRun
    from embeddings.services import embedding_run_start

    url, env = broker
    for i in range(4):
        problem_factory(f"Problem {i}", labels=["nchoosek"] if i % 2 else ["Bayes-formula"])
    port = free_port()
    devrun = Process("devrun", [sys.executable, "-m", "prob2vec_site.devrun", f"127.0.0.1:{port}"], _env(settings, url, env))
    try:
        devrun.wait_for_log(" ready.")  # the worker
        assert wait_for(lambda: _up(requests, port), 60), devrun.log()[-4000:]
        run = embedding_run_start(method="onehot", source="labels")  # queued where devrun's worker reads
        if not wait_for(lambda: EmbeddingRun.objects.get(pk=run.pk).status == "done", 60):
            pytest.fail("devrun's worker did not run the job; its log:\n" + devrun.log()[-4000:])
        children = [int(pid) for pid in devrun.log().split("devrun: worker pid ")[1].split(", broker")[0].replace("web pid ", "").split(", ")]
        os.kill(devrun.popen.pid, signal.SIGTERM)  # what Ctrl-C does
        devrun.popen.wait(timeout=30)
        assert devrun.popen.returncode == 0
        assert all(not _alive(pid) for pid in children), devrun.log()[-3000:]
        assert not _up(requests, port)
    finally:
        devrun.stop()


def test_devrun_stops_the_web_server_when_the_worker_dies(broker: tuple[str, dict[str, str]], settings: Any) -> None:
    url, env = broker
    port = free_port()
    devrun = Process("devrun", [sys.executable, "-m", "prob2vec_site.devrun", f"127.0.0.1:{port}"], _env(settings, url, env))
    try:
        devrun.wait_for_log(" ready.")
        worker_pid = int(devrun.log().split("devrun: worker pid ")[1].split(",")[0])
        os.killpg(worker_pid, signal.SIGKILL)
        devrun.popen.wait(timeout=30)
        assert "the worker exited" in devrun.log() and devrun.popen.returncode != 0
    finally:
        devrun.stop()


def _up(requests: Any, port: int) -> bool:
    try:
        return requests.get(f"http://127.0.0.1:{port}/login/", timeout=3).status_code == 200
    except requests.RequestException:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) is not running.
    status = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(status) and not status.startswith("Z")


