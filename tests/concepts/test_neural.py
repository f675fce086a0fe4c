"""The neural extractor experiment: command, task, pages, cancel and the suggestions that feed labelling."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from concepts.models import JobStatus, NeuralExperiment, NeuralSuggestion
from concepts.services import ExperimentInputError, neural_experiment_cancel, neural_experiment_execute, neural_experiment_start

# Small but real: the demo bank, its labels and selected words, vectors trained on the bank.
FAST = ["--param", "word_dim=16", "--param", "epochs=40", "--param", "pretrain_epochs=10", "--param", "transfer_sources=1"]
FAST_PARAMS = {"word_dim": 16, "epochs": 40, "pretrain_epochs": 10, "transfer_sources": 1}


@pytest.mark.django_db(transaction=True)
def test_a_small_experiment_on_the_demo_course(demo_course: None) -> None:
    call_command("extract_concepts", stdout=io.StringIO())
    out = io.StringIO()
    call_command(
        "nn_extractor_experiment", "--concepts", "binomial-distribution,nchoosek", "--rounds", "3",
        "--schemes", "down-sampling,negative-pretraining+words,one-shot", *FAST, "--json", stdout=out,
    )
    result = json.loads(out.getvalue())
    assert result["rounds"] == 3 and result["word_vectors"] == "glove-trained-on-bank"
    assert list(result["schemes"]) == ["down-sampling", "negative-pretraining+words", "one-shot"]
    assert result["concepts"] == {"binomial-distribution": {"positives": 21, "negatives": 265}, "nchoosek": {"positives": 14, "negatives": 272}}
    assert result["vocabulary"]["selected"] == 240
    for row in result["schemes"].values():
        assert 0 <= row["fn"] <= 1 and 0 <= row["fp"] <= 1
        assert set(row["concepts"]) == {"binomial-distribution", "nchoosek"}
        assert set(row["concepts"]["nchoosek"]) == {"fn", "fn_sd", "fp", "fp_sd"}
        assert {"label", "fn_reduction", "fp_reduction"} <= set(row)
    assert result["schemes"]["down-sampling"]["fn_reduction"] == 0.0 or result["schemes"]["down-sampling"]["fn"] == 0.0
    assert set(result["best"]) == {"binomial-distribution", "nchoosek"}
    experiment = NeuralExperiment.objects.get(id=result["experiment"])
    assert experiment.status == JobStatus.DONE and experiment.progress == 1.0
    stored = NeuralSuggestion.objects.filter(experiment=experiment)
    assert stored.exists()
    # Every row is something to say: the extractor, the labels or the rules find the concept.
    assert all(s.predicted or s.in_labels or s.in_rules for s in stored)
    assert all(s.scheme == result["best"][s.concept.slug] for s in stored)
    assert result["suggestions"]["disagreements"] == sum(1 for s in stored if s.disagrees)
    # The same seed gives the same table.
    again = io.StringIO()
    call_command(
        "nn_extractor_experiment", "--concepts", "binomial-distribution,nchoosek", "--rounds", "3",
        "--schemes", "down-sampling,negative-pretraining+words,one-shot", *FAST, "--json", "--no-suggest", stdout=again,
    )
    assert json.loads(again.getvalue())["schemes"] == result["schemes"]


@pytest.mark.django_db
def test_the_command_prints_table_3(demo_course: None) -> None:
    out = io.StringIO()
    call_command("nn_extractor_experiment", "--concepts", "p-value", "--rounds", "2", "--schemes", "down-sampling,negative-pretraining", "--no-suggest", *FAST, stdout=out)
    text = out.getvalue()
    assert "Down-sampling" in text and "Negative pre-training" in text and "ΔFN" in text and "p-value" in text


@pytest.mark.django_db
def test_bad_requests_are_refused_with_what_is_wrong(demo_course: None) -> None:
    with pytest.raises(CommandError, match="unknown concepts: no-such-concept"):
        call_command("nn_extractor_experiment", "--concepts", "no-such-concept", "--rounds", "1")
    with pytest.raises(CommandError, match="unknown schemes: magic"):
        call_command("nn_extractor_experiment", "--concepts", "nchoosek", "--schemes", "magic")
    with pytest.raises(CommandError, match="rounds must be between 1 and 1000"):
        call_command("nn_extractor_experiment", "--concepts", "nchoosek", "--rounds", "0")
    with pytest.raises(CommandError, match="--param expects NAME=VALUE"):
        call_command("nn_extractor_experiment", "--concepts", "nchoosek", "--param", "epochs")
    with pytest.raises(CommandError, match="unknown parameter 'depth'"):
        call_command("nn_extractor_experiment", "--concepts", "nchoosek", "--param", "depth=3")
    # Values training cannot run with are refused at once, not as a failed experiment later.
    for param, message in [("lr=nan", "'lr' must be a positive number, got 'nan'"), ("lr=-0.1", "'lr' must be a positive number"),
                           ("test_fraction=1", "'test_fraction' must be a number between 0 and 1"),
                           ("epochs=0", "'epochs' must be a whole number of at least 1"), ("lr=inf", "'lr' must be a positive number")]:
        with pytest.raises(CommandError, match=message):
            call_command("nn_extractor_experiment", "--concepts", "nchoosek", "--param", param)
    with pytest.raises(CommandError, match="--schemes names no scheme"):
        call_command("nn_extractor_experiment", "--concepts", "nchoosek", "--schemes", " , ")
    assert not NeuralExperiment.objects.exists()


@pytest.mark.django_db
def test_a_concept_with_too_few_labels_is_refused(problem_factory: Any, concept_factory: Any) -> None:
    concept_factory("rare")
    problem_factory("One problem about rare things.", labels=["rare"])
    problem_factory("Another problem.", labels=[])
    with pytest.raises(ExperimentInputError, match=r"at least 2 labelled positive and 2 negative problems: rare \(1\)"):
        neural_experiment_start(concepts=["rare"])


@pytest.mark.django_db
def test_word_selection_without_selected_words_fails_clearly(demo_course: None) -> None:
    from concepts.models import SelectedWord

    SelectedWord.objects.all().delete()
    with pytest.raises(CommandError, match="word selection schemes need selected words"):
        call_command("nn_extractor_experiment", "--concepts", "nchoosek", "--rounds", "1", "--schemes", "down-sampling+words", *FAST)
    assert NeuralExperiment.objects.get().status == JobStatus.FAILED
    assert not NeuralSuggestion.objects.exists()


@pytest.mark.django_db
def test_a_cancelled_experiment_stops_and_keeps_nothing(demo_course: None, monkeypatch: Any, django_capture_on_commit_callbacks: Any) -> None:
    import concepts.neural.experiment as experiment_module

    with django_capture_on_commit_callbacks(execute=False):  # keep it queued: no eager run
        queued = neural_experiment_start(concepts=["nchoosek"], schemes=["down-sampling"], rounds=1, params=FAST_PARAMS)
    assert neural_experiment_cancel(experiment=queued)
    neural_experiment_execute(experiment_id=queued.id)  # a worker picking it up later does nothing
    queued.refresh_from_db()
    assert queued.status == JobStatus.CANCELLED and queued.results == {}

    with django_capture_on_commit_callbacks(execute=False):
        running = neural_experiment_start(concepts=["nchoosek", "p-value"], schemes=["down-sampling"], rounds=1, params=FAST_PARAMS)
    real = experiment_module.scheme_rounds
    calls = []

    def cancel_during(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        neural_experiment_cancel(experiment=running)  # as if a TA pressed Cancel now
        return real(*args, **kwargs)

    monkeypatch.setattr(experiment_module, "scheme_rounds", cancel_during)
    neural_experiment_execute(experiment_id=running.id)
    running.refresh_from_db()
    assert calls == [1], "stopped after the first concept"
    assert running.status == JobStatus.CANCELLED and running.results == {} and not NeuralSuggestion.objects.exists()


def test_an_experiment_cancelled_while_it_loads_stays_cancelled_when_the_load_then_fails(
    demo_course: None, monkeypatch: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from concepts import services

    with django_capture_on_commit_callbacks(execute=False):
        experiment = neural_experiment_start(concepts=["nchoosek"], schemes=["down-sampling"], rounds=1, params=FAST_PARAMS)

    def cancel_then_fail(**kwargs: Any) -> Any:
        neural_experiment_cancel(experiment=experiment)  # as if a TA pressed Cancel now
        raise ValueError("the GloVe file could not be read")

    monkeypatch.setattr(services, "neural_inputs", cancel_then_fail)
    neural_experiment_execute(experiment_id=experiment.id)
    experiment.refresh_from_db()
    assert (experiment.status, experiment.error) == (JobStatus.CANCELLED, "")


@pytest.mark.django_db
def test_pages_roles_and_the_annotation_queue(client: Any, alice: Any, sam: Any, demo_course: None, django_capture_on_commit_callbacks: Any) -> None:
    from problems.models import Problem

    client.force_login(sam)
    assert client.get(reverse("concepts:neural-list")).status_code in (302, 403)
    client.force_login(alice)
    page = client.get(reverse("concepts:neural-list")).content.decode()
    assert "binomial-distribution (21)" in page and "Negative pre-training + word selection" in page
    with django_capture_on_commit_callbacks(execute=False) as queued:  # the form's default training is slow for a test
        response = client.post(
            reverse("concepts:neural-list"),
            {"concepts": ["nchoosek"], "schemes": ["down-sampling", "negative-pretraining"], "rounds": "2", "seed": "1", "suggest": "on"},
        )
    assert len(queued) == 1
    experiment = NeuralExperiment.objects.get()
    assert response.status_code == 302 and response.url == reverse("concepts:neural", args=[experiment.pk])
    assert experiment.created_by == alice and experiment.rounds == 2 and experiment.seed == 1
    running = client.get(reverse("concepts:neural", args=[experiment.pk])).content.decode()
    assert "Queued" in running and "Cancel" in running and 'hx-trigger="every 2s"' in running
    client.post(reverse("concepts:neural-cancel", args=[experiment.pk]))
    experiment.refresh_from_db()
    assert experiment.status == JobStatus.CANCELLED
    # The same request with small training parameters, run (Celery is eager in tests).
    with django_capture_on_commit_callbacks(execute=True):
        with_fast = neural_experiment_start(concepts=["nchoosek"], schemes=["down-sampling", "negative-pretraining"], rounds=2, seed=1, params=FAST_PARAMS, user=alice)
    with_fast.refresh_from_db()
    assert with_fast.status == JobStatus.DONE  # Celery is eager in tests
    detail = client.get(reverse("concepts:neural", args=[with_fast.pk])).content.decode()
    assert 'id="table3"' in detail and "Down-sampling" in detail and "nchoosek" in detail and 'id="neural-disagree"' in detail

    # Suggestions feed the annotation queue and the label page.
    ids = client.get(reverse("concepts:label-next"), {"queue": "neural"})
    disagreeing = {s.problem_id for s in NeuralSuggestion.objects.filter(experiment=with_fast) if s.disagrees}
    assert ids.status_code == 302 and int(ids.url.split("/")[-2]) in disagreeing
    found = NeuralSuggestion.objects.filter(experiment=with_fast, predicted=True).first()
    if found is not None:
        label_page = client.get(reverse("concepts:label", args=[found.problem_id])).content.decode()
        assert 'class="suggestion neural"' in label_page or found.concept.slug in label_page
    assert Problem.objects.filter(id__in=disagreeing).count() == len(disagreeing)


@pytest.mark.django_db
def test_students_cannot_start_or_cancel(client: Any, sam: Any, charlie: Any, demo_course: None) -> None:
    for user in (sam, charlie):
        client.force_login(user)
        client.post(reverse("concepts:neural-list"), {"concepts": ["nchoosek"], "schemes": ["down-sampling"], "rounds": "1", "seed": "0"})
    assert not NeuralExperiment.objects.exists()


def test_the_suggestion_tables_render_problem_titles_as_math(client: Any, alice: Any, problem_factory: Any, concept_factory: Any) -> None:
    from concepts.models import NeuralExperiment, NeuralSuggestion

    problem = problem_factory("A large lecture has $500$ students; 90\\% attend.", title="A large lecture has $500$ students; 90\\% attend.")
    experiment = NeuralExperiment.objects.create(concepts=["nchoosek"], schemes=["plain"], rounds=1, status="done")
    NeuralSuggestion.objects.create(
        experiment=experiment, problem=problem, concept=concept_factory("nchoosek"), scheme="plain",
        probability=0.9, predicted=True, in_labels=None, in_rules=False,
    )
    client.force_login(alice)
    page = client.get(f"/concepts/neural/{experiment.pk}/").content.decode()
    # KaTeX renders the title (class math): $500$ stays math, \\% is a percent sign.
    assert '<span class="math">A large lecture has $500$ students; 90% attend.</span>' in page
