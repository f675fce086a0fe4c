"""The active embedding never gets worse by accident: only the site default's runs become active by
themselves; any other run needs "make active" (lab) or `rebuild_embeddings --activate`."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse

from embeddings.models import ActiveEmbedding, EmbeddingRun
from embeddings.selectors import active_embedding_summary, active_run, run_accuracy
from embeddings.services import embedding_activate, embedding_default_get, embedding_default_set
from tests.embeddings.test_runs import bank, rebuild  # noqa: F401  (the fixture)


@pytest.mark.django_db
def test_only_the_site_default_becomes_active_by_itself(bank: dict[str, Any], problem_factory: Any) -> None:
    assert embedding_default_get() == ("prob2vec", "labels")
    default = rebuild()
    assert active_run() == default
    for method in ("onehot", "svd", "blend"):  # newer runs of other methods never take over
        rebuild(method)
    assert active_run() == default
    embedding_default_set(method="onehot", source="labels")
    assert active_run() == default  # choosing a default changes nothing until its next run finishes
    assert rebuild("onehot").pk == EmbeddingRun.objects.get(method="onehot").pk and active_run() == default  # reused: not a new run
    problem_factory("Count 9", module="m", labels=["nchoosek"])  # new inputs: a new run
    onehot = rebuild("onehot")
    assert active_run() == onehot


@pytest.mark.django_db
def test_rebuild_every_method_in_the_lab_leaves_the_active_run_unchanged(
    client: Any, bank: dict[str, Any], ivan: Any, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from concepts.models import Concept
    from concepts.services import rule_save

    settings.CELERY_TASK_ALWAYS_EAGER = True
    rule_save(concept=Concept.objects.get(slug="nchoosek"), pattern=r"\bcount\b", user=ivan, message="r")
    rule_save(concept=Concept.objects.get(slug="Bayes-formula"), pattern=r"\bbayes\b", user=ivan, message="r")
    call_command("extract_concepts", stdout=io.StringIO())
    default = rebuild()
    client.force_login(ivan)
    with django_capture_on_commit_callbacks(execute=True):
        page = client.post(reverse("embeddings:lab"), {"method": ["prob2vec", "onehot", "svd"]}, follow=True).content.decode()
    assert "rebuilds queued" in page and "The active embedding changes only" in page
    # prob2vec on the rule concepts finished after the default run: it used to become active (issue 16).
    rules = EmbeddingRun.objects.get(method="prob2vec", source="rules")
    assert rules.status == "done" and rules.pk > default.pk
    assert active_run() == default
    assert f'data-run="{default.pk}"' in page and 'id="in-use"' in page
    assert "triplet accuracy" in page


@pytest.mark.django_db
def test_make_active_shows_both_accuracies_and_needs_the_instructor(client: Any, bank: dict[str, Any], ivan: Any, alice: Any) -> None:
    default = rebuild()
    other = rebuild("onehot")
    client.force_login(alice)  # a TA sees the comparison, but may not switch
    page = client.get(reverse("embeddings:lab-run", args=[other.pk])).content.decode()
    assert 'id="this-run-accuracy"' in page and 'id="active-run-accuracy"' in page and 'id="make-active-button"' not in page
    assert client.post(reverse("embeddings:lab-run-activate", args=[other.pk])).status_code == 403
    assert active_run() == default
    client.force_login(ivan)
    page = client.get(reverse("embeddings:lab-run", args=[other.pk])).content.decode()
    ours, theirs = run_accuracy(other.pk), run_accuracy(default.pk)
    assert ours is not None and theirs is not None and ours["triplets"] == 2
    assert f"{ours['correct']} of 2" in page and f"{theirs['correct']} of 2" in page and 'id="make-active-button"' in page
    assert client.get(reverse("embeddings:lab-run-activate", args=[other.pk])).status_code == 405
    page = client.post(reverse("embeddings:lab-run-activate", args=[other.pk]), follow=True).content.decode()
    assert active_run() == other and "is now the active embedding" in page
    summary = active_embedding_summary()
    assert not summary.is_default and summary.activated_by == ivan
    assert "made active by hand by ivan" in page


@pytest.mark.django_db
def test_the_site_default_is_chosen_by_the_instructor(client: Any, bank: dict[str, Any], ivan: Any, hana: Any) -> None:
    client.force_login(hana)
    assert client.post(reverse("embeddings:lab-default"), {"method": "onehot", "source": "labels"}).status_code == 403
    client.force_login(ivan)
    page = client.post(reverse("embeddings:lab-default"), {"method": "svd", "source": "rules"}, follow=True).content.decode()
    assert embedding_default_get() == ("svd", "rules") and "svd on rules" in page
    page = client.post(reverse("embeddings:lab-default"), {"method": "nope", "source": "labels"}, follow=True).content.decode()
    assert "unknown method" in page and embedding_default_get() == ("svd", "rules")


@pytest.mark.django_db
def test_the_command_activates_only_when_asked(bank: dict[str, Any]) -> None:
    out = io.StringIO()
    call_command("rebuild_embeddings", stdout=out)
    default = active_run()
    assert default is not None and default.method == "prob2vec"
    call_command("rebuild_embeddings", "--method", "onehot", stdout=out)
    assert active_run() == default and f"active embedding: run #{default.pk}" in out.getvalue()
    call_command("rebuild_embeddings", "--method", "onehot", "--activate", stdout=out)
    onehot = EmbeddingRun.objects.get(method="onehot")
    assert active_run() == onehot and f"run #{onehot.pk} (onehot/labels) is now the active embedding" in out.getvalue()
    assert ActiveEmbedding.objects.get().activated_by is None


@pytest.mark.django_db
def test_an_unfinished_run_cannot_be_made_active(bank: dict[str, Any]) -> None:
    from embeddings.services import EmbeddingPolicyError, embedding_run_start

    run = EmbeddingRun.objects.create(method="onehot", source="labels", fingerprint="x")
    with pytest.raises(EmbeddingPolicyError, match="only a finished run"):
        embedding_activate(run_id=run.pk)
    with pytest.raises(EmbeddingPolicyError, match="no embedding run"):
        embedding_activate(run_id=run.pk + 1000)
    assert active_run() is None and embedding_run_start  # nothing changed


@pytest.mark.django_db
def test_pages_that_use_the_embedding_name_the_active_run(client: Any, course: dict[str, Any], sam: Any, ivan: Any) -> None:
    run = active_run()
    client.force_login(sam)
    for url in (reverse("practice:practice"), reverse("embeddings:problem-similar", args=[course["count1"].pk])):
        page = client.get(url).content.decode()
        assert f'data-run="{run.pk}"' in page and "Embedding in use" in page, url
    client.force_login(ivan)
    for url in (
        reverse("practice:practice-class"), reverse("practice:practice-student", args=[sam.pk]), reverse("embeddings:lab"),
        reverse("embeddings:lab-concepts"),
    ):
        page = client.get(url).content.decode()
        assert f'data-run="{run.pk}"' in page and "Embedding in use" in page, url
