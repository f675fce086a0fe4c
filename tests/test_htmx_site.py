"""The site-wide htmx glue (prob2vec_site/htmx.py): Vary on HX-Request, and expired sessions."""

from __future__ import annotations

import re
from typing import Any

import pytest

from django.test import Client


def test_pages_and_their_fragments_vary_on_hx_request(client: Any, alice: Any, problem_factory: Any) -> None:
    problem_factory("Choose 2 of 5.", title="Committee")
    client.force_login(alice)
    page = client.get("/problems/?q=committee")
    fragment = client.get("/problems/?q=committee", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="problem-results")
    for response in (page, fragment):
        assert "HX-Request" in response["Vary"]
    assert "<html" in page.content.decode() and "<html" not in fragment.content.decode()


def test_an_htmx_request_after_the_session_expired_goes_to_the_login_page_of_the_page_it_came_from(client: Any, db: Any) -> None:
    response = client.post(
        "/concepts/rules/preview/", {"concept": "nchoosek", "pattern": "x"},
        HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver/concepts/nchoosek/rule/?modules=3",
    )
    assert response.status_code == 200 and response.content == b""
    assert response["HX-Redirect"] == "/login/?next=%2Fconcepts%2Fnchoosek%2Frule%2F%3Fmodules%3D3"
    assert response["X-Login-Required"] == "1"


def test_a_foreign_or_missing_current_url_sends_next_home(client: Any, db: Any) -> None:
    for current in ("https://evil.example/steal", "", "http://testserver/login/?next=/x/"):
        response = client.get("/problems/", HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL=current)
        assert response["HX-Redirect"] == "/login/?next=%2F", current


def test_plain_requests_still_get_the_redirect_and_the_api_its_401(client: Any, db: Any) -> None:
    response = client.get("/concepts/nchoosek/rule/")
    assert response.status_code == 302 and response["Location"].startswith("/login/?next=")
    api = Client().get("/api/rules/", HTTP_HX_REQUEST="true")
    assert api.status_code in (401, 403) and not api.has_header("HX-Redirect")


@pytest.mark.parametrize("kind", ["extraction-run", "report", "neural", "embedding-run"])
def test_a_job_page_s_poll_that_finds_the_job_finished_reloads_the_page(client: Any, make_user: Any, kind: str) -> None:
    """The poll swaps the status card alone; around it lie a report's figures, a hybrid run's details, an
    embedding run's Cancel button and "Make active": without a reload they stayed as they were while
    the job ran (a finished run still offered Cancel). A running job's poll still gets its card."""
    from django.urls import reverse

    from concepts.models import ExtractionRun, ExtractorReport, NeuralExperiment
    from embeddings.models import EmbeddingRun

    model, url = {
        "extraction-run": (ExtractionRun, "concepts:extraction-run"),
        "report": (ExtractorReport, "concepts:report"),
        "neural": (NeuralExperiment, "concepts:neural"),
        "embedding-run": (EmbeddingRun, "embeddings:lab-run"),
    }[kind]
    client.force_login(make_user("hannah", "head_ta"))
    job = model.objects.create(status="running", **({"problems_total": 10} if kind == "extraction-run" else {}))
    poll = client.get(reverse(url, args=[job.pk]), HTTP_HX_REQUEST="true")
    assert poll.status_code == 200 and poll.content.decode().lstrip().startswith('<div id="run-status"')
    # Its progress bar has a name a screen reader says (a bare <progress> is read as "progress bar" alone).
    bars = re.findall(r"<progress[^>]*>", poll.content.decode())
    assert (bool(bars) or kind == "report") and all('aria-label="' in bar for bar in bars), bars  # a report shows none
    for status in ("done", "failed", "cancelled"):
        model.objects.filter(pk=job.pk).update(status=status)
        poll = client.get(reverse(url, args=[job.pk]), HTTP_HX_REQUEST="true")
        assert (poll.status_code, poll.get("HX-Refresh"), poll.content) == (204, "true", b"")


@pytest.mark.parametrize("kind", ["neural", "embedding-run"])
def test_cancelling_a_job_that_has_already_ended_says_so(client: Any, make_user: Any, kind: str) -> None:
    """Cancel pressed on a page loaded while the job ran, after it ended: the page came back with no word."""
    from django.urls import reverse

    from concepts.models import NeuralExperiment
    from embeddings.models import EmbeddingRun

    model, cancel = {"neural": (NeuralExperiment, "concepts:neural-cancel"), "embedding-run": (EmbeddingRun, "embeddings:lab-run-cancel")}[kind]
    client.force_login(make_user("hannah", "head_ta"))
    job = model.objects.create(status="done")
    page = client.post(reverse(cancel, args=[job.pk]), follow=True).content.decode()
    assert f"#{job.pk} had already ended (done): there was nothing to cancel." in page
    assert model.objects.get(pk=job.pk).status == "done"
