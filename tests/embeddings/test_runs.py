from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from embeddings.models import ActiveEmbedding, EmbeddingRun
from problems.models import Problem
from embeddings.selectors import active_run, run_arrays, run_concept_vectors
from embeddings.services import (
    embedding_activate,
    embedding_publish,
    embedding_run_cancel,
    embedding_run_execute,
    embedding_run_start,
    triplet_create,
    triplet_decide,
)


@pytest.fixture
def bank(problem_factory: Any, hana: Any) -> dict[str, Any]:
    """Two families of problems: counting (nchoosek/permutations) and Bayes (conditional/bayes)."""
    made = {}
    for i in range(4):
        made[f"count{i}"] = problem_factory(f"Count {i}", title=f"Count {i}", module="m", labels=["nchoosek", "permutations"] if i % 2 else ["nchoosek"])
        made[f"bayes{i}"] = problem_factory(f"Bayes {i}", title=f"Bayes {i}", module="m", labels=["Bayes-formula", "conditional-probability"] if i % 2 else ["Bayes-formula"])
    made["bare"] = problem_factory("No concepts", title="Bare", module="m")
    t = triplet_create(anchor=made["count0"], positive=made["count1"], negative=made["bayes0"], user=None)
    triplet_decide(triplet=t, decision="accept", user=hana)
    t = triplet_create(anchor=made["bayes1"], positive=made["bayes2"], negative=made["count2"], user=None)
    triplet_decide(triplet=t, decision="accept", user=hana)
    return made


def rebuild(method: str = "prob2vec", source: str = "labels", params: dict[str, Any] | None = None) -> EmbeddingRun:
    run = embedding_run_start(method=method, source=source, params=params)
    embedding_run_execute(run_id=run.id)
    return EmbeddingRun.objects.get(id=run.id)


def test_a_rebuild_stores_vectors_reports_problems_without_concepts_and_becomes_active(bank: dict[str, Any]) -> None:
    run = rebuild()
    # 5 skip-grams of 20 dimensions side by side, then the text's (a tenth of each cosine, see fallback.py).
    assert run.status == "done" and run.dim == 5 * 20 + 384 and run.problems == 9 and run.notes["text_weight"] == 0.1
    assert run.notes["ensemble"] == 5 and run_concept_vectors(run).shape == (len(run.concept_slugs), 100)
    # "No concepts" has no labels: it borrows a vector from the problems its sentence vector is nearest.
    assert run.notes["fallback_text"] == "minilm" and run.notes["text_vectors"]["encoded"] == 9
    assert run.missing == [] and run.notes["without_concepts"] == 1 and run.notes["borrowed"] == 1
    ids, vectors = run_arrays(run)
    assert vectors.shape == (9, run.dim) and np.isfinite(vectors).all()
    assert vectors[list(ids).index(bank["bare"].pk)].any()
    assert active_run() == run
    assert embedding_run_start(method="prob2vec", source="labels").id == run.id  # identical inputs: reused


def test_with_the_lsa_fallback_text_a_problem_sharing_no_word_stays_without_a_vector(bank: dict[str, Any], settings: Any) -> None:
    settings.EMBEDDING_FALLBACK_TEXT = "lsa"  # the site's choice, for every concept method's runs
    run = rebuild()
    assert run.status == "done" and run.params["fallback_text"] == "lsa" and "text_vectors" not in run.notes
    # "No concepts" shares no word with any other problem: nothing to borrow a vector from.
    assert run.missing == [bank["bare"].pk] and run.notes["without_concepts"] == 1 and run.notes["borrowed"] == 0
    ids, vectors = run_arrays(run)
    assert not vectors[list(ids).index(bank["bare"].pk)].any()
    assert embedding_run_start(method="minilm").params == {}  # text methods take no fallback


def test_a_problem_left_without_a_vector_says_so_on_its_similar_list(client: Any, bank: dict[str, Any], alice: Any, settings: Any) -> None:
    settings.EMBEDDING_FALLBACK_TEXT = "lsa"
    rebuild()
    client.force_login(alice)
    body = client.get(reverse("embeddings:problem-similar", args=[bank["bare"].pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "This problem has no concepts in the active embedding, so it has no neighbours yet" in body


def test_a_problem_added_after_the_run_says_it_waits_for_the_next_rebuild(
    client: Any, bank: dict[str, Any], alice: Any, problem_factory: Any
) -> None:
    run = rebuild()
    newcomer = problem_factory("Choose 3 of 7 people for a committee.", title="Imported later", labels=["nchoosek"])
    client.force_login(alice)
    body = client.get(reverse("embeddings:problem-similar", args=[newcomer.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert f"added after the active embedding (run #{run.pk}) was built: it gets similar problems at the next rebuild" in body
    assert "has no concepts" not in body
    # A problem of the run keeps its list.
    body = client.get(reverse("embeddings:problem-similar", args=[bank["bare"].pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "newer-than-run" not in body


def test_the_command_and_a_clear_error_for_rules_without_an_extraction(bank: dict[str, Any]) -> None:
    out = io.StringIO()
    call_command("rebuild_embeddings", "--method", "onehot", stdout=out)
    assert "onehot/labels: run #" in out.getvalue() and "0 without a vector" in out.getvalue()  # the bare problem borrowed
    with pytest.raises(CommandError, match="no finished extraction run"):
        call_command("rebuild_embeddings", "--source", "rules", stdout=io.StringIO(), stderr=io.StringIO())
    assert EmbeddingRun.objects.get(source="rules").status == "failed"
    assert active_run() is None  # a failed run never becomes active


def test_the_active_run_switches_only_to_newer_successful_runs(bank: dict[str, Any], problem_factory: Any) -> None:
    first = rebuild()
    problem_factory("Another", labels=["nchoosek"], module="m")
    # A cancelled run never replaces the active one (a failed one neither: see the rules test above).
    cancelled = embedding_run_start(method="prob2vec", source="labels")
    embedding_run_cancel(run=cancelled)
    embedding_run_execute(run_id=cancelled.id)
    assert EmbeddingRun.objects.get(id=cancelled.id).status == "cancelled" and active_run() == first
    problem_factory("Yet another", labels=["permutations"], module="m")
    newer = rebuild()
    assert active_run() == newer
    assert embedding_publish(run_id=first.id) is False  # a stale result never wins
    assert ActiveEmbedding.objects.get().run == newer


def test_a_run_cancelled_while_training_stops_and_is_not_published(bank: dict[str, Any], monkeypatch: Any) -> None:
    from embeddings.algorithms import methods

    real_embed = methods.embed

    def embed_then_cancel(method: str, data: Any, params: Any, on_progress: Any = None) -> Any:
        EmbeddingRun.objects.filter(status="running").update(status="cancelled")
        import time

        time.sleep(0.6)  # past the progress throttle, so the next report looks at the row
        on_progress(0.5, 1.0)
        return real_embed(method, data, params, on_progress)

    monkeypatch.setattr(methods, "embed", embed_then_cancel)
    run = embedding_run_start(method="prob2vec", source="labels")
    embedding_run_execute(run_id=run.id)
    run.refresh_from_db()
    assert run.status == "cancelled" and bytes(run.vectors) == b""
    assert active_run() is None


def test_a_run_cancelled_while_it_loads_stays_cancelled_when_the_load_then_fails(bank: dict[str, Any], monkeypatch: Any) -> None:
    from embeddings import services

    def cancel_then_fail(**kwargs: Any) -> Any:
        EmbeddingRun.objects.filter(status="running").update(status="cancelled")  # the user, meanwhile
        raise services.EmbeddingInputError("the bank could not be read")

    monkeypatch.setattr(services, "bank_data", cancel_then_fail)
    run = embedding_run_start(method="onehot", source="labels")
    embedding_run_execute(run_id=run.id)
    run.refresh_from_db()
    assert (run.status, run.error) == ("cancelled", "")


def test_evaluate_triplets_json_contract(bank: dict[str, Any], tmp_path: Path) -> None:
    call_command("extract_concepts", stdout=io.StringIO())
    out = io.StringIO()
    call_command("evaluate_triplets", "--methods", "prob2vec,onehot,svd", "--json", stdout=out, stderr=io.StringIO())
    data = json.loads(out.getvalue())
    assert data["triplets"] == 2
    assert set(data["results"]) == {"prob2vec", "onehot", "svd"}
    assert data["results"]["onehot"]["labels"] == 1.0  # concept overlap orders both triplets right
    assert set(data["results"]["prob2vec"]) == {"labels", "rules", "hybrid"}
    low, high = data["intervals"]["onehot"]["labels"]
    assert low == high == 1.0  # every bootstrap resample of two right triplets is right
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"anchor": bank["count0"].source_id, "positive": bank["bayes0"].source_id, "negative": bank["count1"].source_id}) + "\n")
    out = io.StringIO()
    call_command("evaluate_triplets", "--methods", "onehot", "--collection", "test", "--triplets", str(path), "--json", stdout=out, stderr=io.StringIO())
    data = json.loads(out.getvalue())
    assert data["triplets"] == 1 and data["results"]["onehot"]["labels"] == 0.0  # this file states the wrong order
    with pytest.raises(CommandError, match="needs --collection"):
        call_command("evaluate_triplets", "--triplets", str(path))
    with pytest.raises(CommandError, match="--methods names no method"):
        call_command("evaluate_triplets", "--methods", ",")
    with pytest.raises(CommandError, match="unknown method\\(s\\): glove$"):
        call_command("evaluate_triplets", "--methods", "onehot,,glove")


def test_evaluate_triplets_never_reports_an_older_runs_figure_for_a_rebuild_that_failed(bank: dict[str, Any]) -> None:
    """A cell is the run for the current inputs or null: the selection the old figure came from is gone."""
    from concepts.models import SelectedWord

    SelectedWord.objects.bulk_create([SelectedWord(word=w) for w in ["count", "bayes"]])
    out = io.StringIO()
    call_command("evaluate_triplets", "--methods", "glove-avg-selected,onehot", "--json", stdout=out, stderr=io.StringIO())
    assert json.loads(out.getvalue())["results"]["glove-avg-selected"]["text"] is not None
    SelectedWord.objects.all().delete()  # the TAs clear the selection: this baseline cannot be rebuilt
    out, err = io.StringIO(), io.StringIO()
    call_command("evaluate_triplets", "--methods", "glove-avg-selected,onehot", "--json", stdout=out, stderr=err)
    data = json.loads(out.getvalue())
    assert "not evaluated: glove-avg-selected/labels: no selected words yet" in err.getvalue()
    assert data["results"]["glove-avg-selected"] == {"text": None} and data["intervals"]["glove-avg-selected"] == {"text": None}
    assert data["results"]["onehot"]["labels"] == 1.0  # the cells that were rebuilt are reported as before
    assert EmbeddingRun.objects.filter(method="glove-avg-selected", status="done").count() == 1  # the old run is kept


@pytest.mark.django_db(transaction=True)
def test_the_command_waits_for_a_rebuild_that_a_worker_is_running(bank: dict[str, Any]) -> None:
    """With a broker, a worker may claim the run the command starts (or the lab started it first): the
    command waits for it and reports it finished, rather than failing with "running"."""
    import threading
    import time

    from django.db import connection, transaction

    from concepts.jobs import job_claim

    with transaction.atomic():
        run = embedding_run_start(method="onehot", source="labels")
        assert job_claim(model=EmbeddingRun, job_id=run.id)  # a worker has it (the eager send on commit finds it claimed)
    assert EmbeddingRun.objects.get(id=run.id).status == "running"

    def worker_finishes() -> None:
        try:
            time.sleep(1.0)  # the command is waiting by now
            embedding_run_execute(run_id=run.id, redelivered=True)  # the worker's own code path, to the end
        finally:
            connection.close()

    worker = threading.Thread(target=worker_finishes)
    worker.start()
    out = io.StringIO()
    try:
        call_command("rebuild_embeddings", "--method", "onehot", stdout=out, stderr=io.StringIO())
    finally:
        worker.join(30)
    assert f"onehot/labels: run #{run.id} done" in out.getvalue()
    assert EmbeddingRun.objects.filter(method="onehot").count() == 1  # the same run, built once

def test_similar_problems_fragment_explains_for_staff_only(client: Any, bank: dict[str, Any], alice: Any, sam: Any) -> None:
    client.force_login(alice)
    url = reverse("embeddings:problem-similar", args=[bank["count0"].pk])
    assert "No embedding yet" in client.get(url, HTTP_HX_REQUEST="true").content.decode()
    rebuild()
    body = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert body.lstrip().startswith('<section class="card math" id="similar-problems">')
    first = body.index("Count 1") if "Count 1" in body else body.index("Count 2")
    assert first < body.index("Bayes")  # counting problems first
    assert "why:" in body and "nchoosek" in body
    client.force_login(sam)
    student = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "why:" not in student and "nchoosek" not in student
    bare_url = reverse("embeddings:problem-similar", args=[bank["bare"].pk])
    # A problem without concepts borrowed its vector: it has neighbours; staff are told why there is no why.
    assert "Bayes" in (bare := client.get(bare_url, HTTP_HX_REQUEST="true").content.decode()) and "reads like" not in bare
    client.force_login(alice)
    assert "has no concepts in the active embedding: its neighbours are the problems it reads like" in client.get(bare_url, HTTP_HX_REQUEST="true").content.decode()
    assert "reads like" not in client.get(url, HTTP_HX_REQUEST="true").content.decode()


def test_a_problem_without_concepts_shows_no_why_of_zeros(client: Any, bank: dict[str, Any], alice: Any) -> None:
    """A problem that borrowed its vector has no per-concept why, as the fragment says: its neighbours'
    rows used to list their concepts at 0.000 each (the shares of a zero concept vector)."""
    rebuild()
    client.force_login(alice)
    body = client.get(reverse("embeddings:problem-similar", args=[bank["bare"].pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "so there is no per-concept why" in body and "Bayes" in body
    assert "why:" not in body and "share of the cosine" not in body
    # A labelled problem's neighbour without concepts (the bare one) gets no row of zeros either.
    from embeddings.selectors import problem_similar_list

    similar = problem_similar_list(bank["count0"], k=8).similar
    assert [s.contributions for s in similar if s.problem == bank["bare"]] == [[]]
    assert all(s.contributions for s in similar if s.problem != bank["bare"])


def test_a_student_whose_neighbours_are_all_unreleased_is_not_told_the_problem_has_no_concepts(
    client: Any, bank: dict[str, Any], sam: Any
) -> None:
    """The first problem a course releases has neighbours, none of them released: that is not "no
    concepts, so no neighbours" (what the fragment told students), and names none of them."""
    rebuild()
    Problem.objects.exclude(pk=bank["count0"].pk).update(released=False)
    client.force_login(sam)
    body = client.get(reverse("embeddings:problem-similar", args=[bank["count0"].pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "has no concepts" not in body and "No similar problem is released yet" in body
    assert "Count 1" not in body and "Bayes" not in body


def test_a_run_says_how_it_weighed_rare_concepts_and_its_why_uses_those_weights(bank: dict[str, Any], alice: Any) -> None:
    """Labels keep the paper's 1/f, extracted sources 1/sqrt(f) (stop 41), resolved on the run's parameters
    and notes. A run's "why" of a similarity splits the concept part of its cosine with the weights the
    vectors were built with, whatever the power: the contributions sum to that part exactly."""
    from embeddings.selectors import problem_similar_list

    def why_sums_to_the_concept_cosine(run: EmbeddingRun) -> None:
        assert active_run() == run
        ids, vectors = run_arrays(run)
        concept_part = vectors[:, : run_concept_vectors(run).shape[1]].astype(np.float64)
        row = {int(pid): i for i, pid in enumerate(ids)}
        a = concept_part[row[bank["count1"].pk]]
        # Every other problem with concepts (the bare one borrowed its concept part: nothing to explain).
        explained = [item for item in problem_similar_list(bank["count1"], k=8, user=alice).similar if item.problem != bank["bare"]]
        assert len(explained) == 7
        for item in explained:
            b = concept_part[row[item.problem.pk]]
            cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
            assert sum(v for _, v in item.contributions) == pytest.approx(cos, abs=1e-4)

    labels = rebuild()
    assert labels.params["frequency_power"] == 1.0 and labels.notes["frequency_power"] == 1.0
    why_sums_to_the_concept_cosine(labels)
    # The rules source resolves 0.5 before any extraction exists (the run then fails for want of one).
    assert embedding_run_start(method="onehot", source="rules").params["frequency_power"] == 0.5
    tempered = rebuild(params={"frequency_power": 0.5})  # the newest run of the site default: active
    assert tempered.id != labels.id and tempered.notes["frequency_power"] == 0.5
    why_sums_to_the_concept_cosine(tempered)
    # A power out of range is refused when the run is asked for, not in the worker.
    from embeddings.services import EmbeddingInputError

    with pytest.raises(EmbeddingInputError, match="frequency_power must be between 0 and 2, got 3.0"):
        embedding_run_start(method="prob2vec", source="labels", params={"frequency_power": 3})


def test_the_lab_page_shows_table_1_histograms_and_concept_neighbours(client: Any, bank: dict[str, Any], alice: Any, sam: Any) -> None:
    rebuild()
    rebuild("onehot")
    client.force_login(alice)
    page = client.get(reverse("embeddings:lab")).content.decode()
    assert 'data-method="onehot" data-source="labels">100.00%' in page
    assert 'id="gap-histograms"' in page and "<svg" in page
    concepts = client.get(reverse("embeddings:lab-concepts"), {"concept": "nchoosek"}).content.decode()
    assert 'id="neighbours"' in concepts and "permutations" in concepts
    client.force_login(sam)
    assert client.get(reverse("embeddings:lab")).status_code in (302, 403)


@pytest.mark.django_db(transaction=True)  # the rebuild is queued when the request's transaction commits
def test_the_lab_says_when_the_job_queue_is_down(client: Any, bank: dict[str, Any], alice: Any, monkeypatch: Any) -> None:
    from kombu.exceptions import OperationalError

    from embeddings.tasks import rebuild_embeddings

    def unreachable(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(rebuild_embeddings, "delay", unreachable)
    client.force_login(alice)
    page = client.post(reverse("embeddings:lab"), {"method": ["prob2vec", "onehot"]}, follow=True).content.decode()
    assert page.count("The job queue (Redis) is unavailable, so this job was not started. Try again later.") == 1
    assert "rebuilds queued" not in page
    # The first run that could not be queued stops the loop: no waiting on Redis once per method.
    assert list(EmbeddingRun.objects.values_list("method", "status")) == [("prob2vec", "failed")]
    monkeypatch.undo()  # Redis is back (tasks run eagerly here): the same button works
    page = client.post(reverse("embeddings:lab"), {"method": "prob2vec"}, follow=True).content.decode()
    assert "2 rebuilds queued" in page and active_run() is not None


def test_a_rebuild_whose_worker_died_is_done_once_by_the_redelivered_message(bank: dict[str, Any]) -> None:
    from concepts.jobs import job_claim

    run = embedding_run_start(method="prob2vec", source="labels")
    assert job_claim(model=EmbeddingRun, job_id=run.id)  # the first worker claims it, then is killed
    embedding_run_execute(run_id=run.id)  # a duplicate (not redelivered) message: somebody else has it
    assert EmbeddingRun.objects.get(id=run.id).status == "running" and active_run() is None
    embedding_run_execute(run_id=run.id, redelivered=True)
    run.refresh_from_db()
    assert (run.status, run.attempts) == ("done", 2) and active_run() == run
    finished = run.finished_at
    embedding_run_execute(run_id=run.id, redelivered=True)  # delivered again after it finished: nothing
    run.refresh_from_db()
    assert (run.status, run.attempts, run.finished_at) == ("done", 2, finished)


def test_a_rebuild_that_crashes_is_failed_with_the_message_not_left_running(bank: dict[str, Any], monkeypatch: Any) -> None:
    from embeddings.algorithms import methods
    from embeddings.tasks import rebuild_embeddings

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError("out of memory in the middle of training")

    monkeypatch.setattr(methods, "embed", crash)
    run = embedding_run_start(method="prob2vec", source="labels")
    result = rebuild_embeddings.apply(args=[run.id], throw=False)  # as on a worker: the exception is the task's result
    assert isinstance(result.result, MemoryError)
    run.refresh_from_db()
    assert run.status == "failed"
    assert "MemoryError: out of memory in the middle of training" in run.error
    assert run.finished_at is not None and active_run() is None


def test_a_collection_whose_rules_miss_labelled_concepts_leans_on_the_text(
    client: Any, problem_factory: Any, concept_factory: Any, hana: Any, alice: Any
) -> None:
    """The rules find every labelled concept of the "tuned" book and half of those of "new-book": a
    rules run measures that recall per collection on the labelled problems, keeps the plain text weight
    0.1 for the first and gives the second 0.5 (1 - recall, capped at the borrowed weight), and says so
    in its notes. Labels are part of a rules run's inputs: a new label means a new run."""
    from concepts.models import Concept, GroundTruthLabel
    from concepts.services import rule_save

    concept_factory("nchoosek")
    concept_factory("permutations")
    for book in ("tuned", "new-book"):
        for i in range(10):
            # Both books are labelled nchoosek + permutations; only the tuned book says "arrange".
            words = "choose and arrange" if book == "tuned" else "choose and order"
            problem_factory(f"{book} {i}: {words} {i} items", collection=book, labels=["nchoosek", "permutations"])
    problem_factory("A problem with no labels: choose some", collection="unlabelled")
    rule_save(concept=Concept.objects.get(slug="nchoosek"), pattern=r"\bchoose\b", user=hana)
    rule_save(concept=Concept.objects.get(slug="permutations"), pattern=r"\barrange\b", user=hana)
    call_command("extract_concepts", stdout=io.StringIO())
    run = rebuild(source="rules")
    assert run.status == "done"
    assert run.notes["concept_recall"] == {
        "new-book": {"labelled": 10, "held_out": 0, "measured_on": "labelled", "recall": 0.5, "text_weight": 0.5},
        "tuned": {"labelled": 10, "held_out": 0, "measured_on": "labelled", "recall": 1.0, "text_weight": 0.1},
    }
    assert run.notes["text_weight_raised"] == {"problems": 10, "max": 0.5}
    # The stored rows: the text part (after the ensemble's concept dimensions) carries 0.5 of the new
    # book's cosines and 0.1 of the others'.
    ids, vectors = run_arrays(run)
    width = run_concept_vectors(run).shape[1]
    collection = dict(Problem.objects.values_list("id", "collection"))
    shares = {collection[int(pid)]: round(float(np.linalg.norm(v[width:].astype(np.float64)) ** 2), 4) for pid, v in zip(ids, vectors)}
    assert shares == {"tuned": 0.1, "new-book": 0.5, "unlabelled": 0.1}
    # The run's page shows it per collection.
    client.force_login(alice)
    page = client.get(reverse("embeddings:lab-run", args=[run.pk])).content.decode()
    table = page[page.index('id="concept-recall"'):page.index("</table>", page.index('id="concept-recall"'))]
    assert "<td>new-book</td><td class=\"num\">10</td><td class=\"num\">0</td><td>labelled</td><td class=\"num\">50.0%</td><td class=\"num\">0.50</td>" in table
    assert "<td>tuned</td><td class=\"num\">10</td><td class=\"num\">0</td><td>labelled</td><td class=\"num\">100.0%</td><td class=\"num\">0.10</td>" in table
    # The labels source is always at the plain weight, and says nothing about recall.
    labels_run = rebuild(source="labels")
    assert "concept_recall" not in labels_run.notes and "text_weight_raised" not in labels_run.notes
    # One more label changes the rules run's inputs.
    GroundTruthLabel.objects.create(problem=Problem.objects.get(collection="unlabelled"), concept=Concept.objects.get(slug="nchoosek"))
    assert embedding_run_start(method="prob2vec", source="rules").id != run.id


def test_a_collection_with_held_out_problems_takes_its_text_share_from_their_recall(
    problem_factory: Any, concept_factory: Any, hana: Any
) -> None:
    """The rules were written from ten labelled problems of the book (they say "arrange") and find all
    their concepts; ten more, held out from rule writing, say "order", and the rules find half of
    theirs. Measured on every label the book's recall is 0.75 (text share 0.25); held out, the recall
    is the held-out problems' 0.5, the share of every problem of the book (unlabelled ones too) 0.5.
    Holding problems out is an input of the rules run: it makes a new run."""
    from concepts.models import Concept
    from concepts.services import held_out_set, rule_save

    concept_factory("nchoosek")
    concept_factory("permutations")
    written_from = [problem_factory(f"book {i}: choose and arrange {i} items", collection="book", labels=["nchoosek", "permutations"]) for i in range(10)]
    fresh = [problem_factory(f"book {i}: choose and order {i} items", collection="book", labels=["nchoosek", "permutations"]) for i in range(10, 20)]
    problem_factory("book: choose some, unlabelled", collection="book")
    rule_save(concept=Concept.objects.get(slug="nchoosek"), pattern=r"\bchoose\b", user=hana)
    rule_save(concept=Concept.objects.get(slug="permutations"), pattern=r"\barrange\b", user=hana)
    call_command("extract_concepts", stdout=io.StringIO())
    before = rebuild(source="rules")
    assert before.notes["concept_recall"]["book"] == {"labelled": 20, "held_out": 0, "measured_on": "labelled", "recall": 0.75, "text_weight": 0.25}
    held_out_set(problem_ids=[p.pk for p in fresh], held_out=True, user=hana)
    run = rebuild(source="rules")
    assert run.id != before.id
    assert run.notes["concept_recall"]["book"] == {"labelled": 20, "held_out": 10, "measured_on": "held-out", "recall": 0.5, "text_weight": 0.5}
    ids, vectors = run_arrays(run)
    width = run_concept_vectors(run).shape[1]  # the ensemble's concept dimensions, then the text's
    shares = {round(float(np.linalg.norm(v[width:].astype(np.float64)) ** 2), 4) for v in vectors}
    assert shares == {0.5}, "every problem of the book, written from, held out or unlabelled, takes the held-out share"
    assert written_from[0].pk in {int(i) for i in ids}


def test_a_collection_with_enough_accepted_triplets_chooses_its_text_share_on_them(
    client: Any, problem_factory: Any, concept_factory: Any, hana: Any, alice: Any, settings: Any
) -> None:
    """The text share from accepted triplets (README step 5) in a rules run, as a site turns it on
    (EMBEDDING_TRIPLET_SHARE_MIN=30). In "book" the rules give A and C one concept and B another, while
    the texts of A and B are near copies: the text share the rules' recall gives (0.1) orders none of
    the 30 accepted triplets, a share of 0.6 or more orders them all. The run takes the share its
    triplets choose for every problem of the book (not for the other collection), says so in its notes
    and on its page, and evaluate_triplets judges each accepted triplet with the share chosen on the
    other folds. With the step on, accepting a triplet is an input of the run."""
    from concepts.models import Concept
    from concepts.services import rule_save
    from embeddings.selectors import accepted_triplets, run_accuracy, triplet_results

    concept_factory("nchoosek")
    concept_factory("permutations")
    made = []
    for i in range(30):
        a = problem_factory(f"Two fair dice are rolled, round {i}. What is the probability that the sum is seven?", collection="book", module="dice")
        b = problem_factory(f"Two fair dice are rolled, round {i}. What is the probability that the sum is eight?", collection="book", module="dice")
        c = problem_factory(f"A club of {i + 12} members elects a committee of five. In how many ways?", collection="book", module="dice")
        made.append((a, b, c))
        triplet_create(anchor=a, positive=b, negative=c, user=hana, status="accepted")
    other = problem_factory("Two fair dice are rolled. What is the probability that the sum is seven?", collection="other", module="dice")
    rule_save(concept=Concept.objects.get(slug="nchoosek"), pattern=r"\bseven\b|\bcommittee\b", user=hana)
    rule_save(concept=Concept.objects.get(slug="permutations"), pattern=r"\beight\b", user=hana)
    call_command("extract_concepts", stdout=io.StringIO())
    off = rebuild(method="onehot", source="rules")  # the default: the share from the recall alone
    assert "triplet_share" not in off.notes and off.params["triplet_share_min"] == 0
    assert triplet_results(accepted_triplets("book"))["onehot"]["rules"]["accuracy"] == 0.0
    settings.EMBEDDING_TRIPLET_SHARE_MIN = 30
    run = rebuild(method="onehot", source="rules")
    assert run.status == "done" and run.id != off.id and run.params["triplet_share_min"] == 30
    chosen = run.notes["triplet_share"]["book"]
    assert chosen["triplets"] == 30 and chosen["recall_share"] == 0.1 and chosen["share"] >= 0.6
    assert (chosen["recall_share_accuracy"], chosen["accuracy"], chosen["out_of_fold_accuracy"]) == (0.0, 1.0, 1.0)
    assert sorted(tuple(t[:3]) for t in run.notes["triplet_share_out_of_fold"]) == sorted((a.pk, b.pk, c.pk) for a, b, c in made)
    ids, vectors = run_arrays(run)
    width = run_concept_vectors(run).shape[1]
    shares = {int(pid): round(float(np.linalg.norm(v[width:].astype(np.float64)) ** 2), 4) for pid, v in zip(ids, vectors)}
    assert shares[other.pk] == 0.1 and {shares[p.pk] for t in made for p in t} == {chosen["share"]}
    assert triplet_results(accepted_triplets("book"))["onehot"]["rules"]["accuracy"] == 1.0
    out, err = io.StringIO(), io.StringIO()
    call_command("evaluate_triplets", "--collection", "book", "--methods", "onehot", "--json", stdout=out, stderr=err)
    assert json.loads(out.getvalue())["results"]["onehot"]["rules"] == 1.0
    assert f"onehot/rules: 30 of the 30 triplets chose their collection's text share in run #{run.pk}" in err.getvalue()
    # The figure on accepted triplets is the out-of-fold one: a triplet the other folds' share got wrong counts as wrong.
    run.notes["triplet_share_out_of_fold"][0][3] = 0
    run.save(update_fields=["notes"])
    assert triplet_results(accepted_triplets("book"))["onehot"]["rules"]["accuracy"] == pytest.approx(29 / 30)
    # The run's own accuracy (the active-run line, "Make run #N active") judges them the same way.
    assert run_accuracy(run.pk) == {"accuracy": pytest.approx(29 / 30), "correct": 29, "triplets": 30}
    client.force_login(alice)
    page = client.get(reverse("embeddings:lab-run", args=[run.pk])).content.decode()
    table = page[page.index('id="triplet-share"'):page.index("</table>", page.index('id="triplet-share"'))]
    assert f"<td>book</td><td class=\"num\">30</td><td class=\"num\">0.10</td><td class=\"num\">0.0%</td><td class=\"num\">{chosen['share']:.2f}</td>" in table
    # One more accepted triplet changes the rules run's inputs (with the step off it does not).
    a, b, c = made[0]
    triplet_create(anchor=b, positive=a, negative=c, user=hana, status="accepted")
    assert embedding_run_start(method="onehot", source="rules").id != run.id
    settings.EMBEDDING_TRIPLET_SHARE_MIN = 0
    assert embedding_run_start(method="onehot", source="rules").id == off.id


def test_a_rebuild_that_reuses_an_older_run_for_the_bank_as_it_is_now_makes_it_active(bank: dict[str, Any], problem_factory: Any, hana: Any) -> None:
    before = rebuild()
    mistake = problem_factory("Imported by mistake", labels=["nchoosek", "Bayes-formula"], module="m")
    with_mistake = rebuild()
    assert with_mistake.id != before.id and active_run() == with_mistake
    mistake.delete()
    # The bank is as `before` saw it: its run is reused, and it, not the run with the deleted
    # problem in it, is what the site serves.
    again = rebuild()
    assert again.id == before.id and active_run() == before
    # A reused run of another method than the site default's changes nothing, and a run made active
    # by hand stays when the default's run is reused (evaluate_triplets reuses it too).
    overlap = rebuild(method="onehot")
    assert active_run() == before and rebuild(method="onehot").id == overlap.id and active_run() == before
    embedding_activate(run_id=with_mistake.id, user=hana)
    assert rebuild().id == before.id and active_run() == with_mistake


@pytest.mark.django_db(transaction=True)
def test_two_runs_finishing_at_once_on_a_fresh_install_both_publish_without_an_error(bank: dict[str, Any], monkeypatch: Any) -> None:
    """Both find no active row, both insert it: the later insert fails on the earlier one's, and that
    run is then judged against it as any other (the newer run is active, no error)."""
    import threading

    from django.db import connection

    older, newer = rebuild(method="onehot"), rebuild(method="onehot", params={"frequency_power": 0.5})
    ActiveEmbedding.objects.all().delete()
    both_looked = threading.Barrier(2, timeout=10)
    real_create = ActiveEmbedding.objects.create

    def create_after_both_looked(**fields: Any) -> ActiveEmbedding:
        both_looked.wait()
        return real_create(**fields)

    monkeypatch.setattr(ActiveEmbedding.objects, "create", create_after_both_looked)
    outcome: dict[int, Any] = {}

    def publish(run_id: int) -> None:
        try:
            outcome[run_id] = embedding_publish(run_id=run_id)
        except Exception as exc:  # noqa: BLE001 (the test reports it)
            outcome[run_id] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=publish, args=(run.id,)) for run in (newer, older)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not [o for o in outcome.values() if isinstance(o, Exception)], outcome
    assert ActiveEmbedding.objects.get().run_id == newer.id
