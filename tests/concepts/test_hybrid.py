"""The hybrid concept source: rules plus an extractor learned from the bank's labels, end to end."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from concepts.models import ExtractedConcept, ExtractionRun
from concepts.models import ExtractorReport as ExtractorReportModel
from concepts.services import ExtractionInputError, extraction_run_ensure, extraction_run_start, rule_save
from embeddings.models import EmbeddingRun
from embeddings.selectors import run_arrays

COIN = [
    "Toss a fair coin {k} times. What is the probability of exactly {j} heads?",
    "A coin is flipped {k} times; find the chance that it lands heads {j} times.",
    "Flip {k} coins. How likely is it to see {j} heads and the rest tails?",
]
WAIT = [
    "Calls arrive at a rate of {k} per hour. What is the chance of {j} calls in an hour?",
    "Customers come in at {k} per minute on average. Probability of exactly {j} customers in a minute?",
    "A shop gets {k} orders an hour on average; find the chance of {j} orders in one hour.",
]


@pytest.fixture
def bank(problem_factory: Any, concept_factory: Any) -> dict[str, Any]:
    """30 coin problems (binomial) and 30 arrival problems (Poisson), labelled; the Poisson rule is good,
    the binomial rule only knows the word 'binomial', which no problem uses."""
    rule_save(concept=concept_factory("binomial-distribution"), pattern=r"\bbinomial\b")
    rule_save(concept=concept_factory("Poisson-distribution"), pattern=r"\brate\b|\bon average\b")
    made: dict[str, Any] = {"coin": [], "wait": []}
    for i in range(30):
        k, j = 5 + i % 7, 1 + i % 4
        made["coin"].append(problem_factory(COIN[i % 3].format(k=k, j=j), module="m", labels=["binomial-distribution"]))
        made["wait"].append(problem_factory(WAIT[i % 3].format(k=k, j=j), module="m", labels=["Poisson-distribution"]))
    made["new_coin"] = problem_factory(COIN[0].format(k=12, j=5), module="m")
    return made


def concepts_of(run: ExtractionRun, problem: Any) -> set[str]:
    return set(ExtractedConcept.objects.filter(run=run, problem=problem).values_list("concept__slug", flat=True))


def test_the_hybrid_finds_what_the_rules_miss_and_keeps_what_they_find(bank: dict[str, Any]) -> None:
    out = io.StringIO()
    call_command("extract_concepts", "--source", "hybrid", stdout=out)
    assert "Hybrid extraction #" in out.getvalue() and "trained on 60 labelled problems" in out.getvalue()
    run = ExtractionRun.objects.get(source="hybrid")
    rules_run = ExtractionRun.objects.get(source="rules")
    assert run.status == "done" and run.rules_run == rules_run
    assert "binomial-distribution" in run.details["thresholds"]
    # Labelled coin problems get binomial from models that never saw their labels; the unlabelled one too.
    found = sum("binomial-distribution" in concepts_of(run, p) for p in bank["coin"])
    assert found >= 27 and "binomial-distribution" in concepts_of(run, bank["new_coin"])
    # The run keeps the honest tally of what it added to labelled problems (all of them out of fold).
    assert run.details["labelled_additions"] == {"right": found, "wrong": 0}
    assert not any("binomial-distribution" in concepts_of(run, p) for p in bank["wait"])
    # Every rule hit is kept, with its rule version; learned ones carry their probability instead.
    assert set(ExtractedConcept.objects.filter(run=rules_run).values_list("problem_id", "concept_id")) <= set(
        ExtractedConcept.objects.filter(run=run).values_list("problem_id", "concept_id")
    )
    learned = ExtractedConcept.objects.filter(run=run, rule_version__isnull=True)
    assert learned.exists() and not learned.filter(probability__isnull=True).exists()
    # Identical rules and labels: the same run again, no new work.
    assert extraction_run_start(source="hybrid").pk == run.pk


def test_the_extractor_report_covers_the_hybrid_source(bank: dict[str, Any]) -> None:
    reports = {}
    for source in ("rules", "hybrid"):
        out = io.StringIO()
        call_command("extractor_report", "--source", source, "--json", stdout=out)
        reports[source] = json.loads(out.getvalue())
    assert set(reports["hybrid"]) == {"problems", "source", "average", "concepts"} and reports["hybrid"]["source"] == "hybrid"
    assert reports["rules"]["concepts"]["binomial-distribution"]["fn_rate"] == 1.0
    assert reports["hybrid"]["concepts"]["binomial-distribution"]["fn_rate"] <= 0.1
    assert reports["hybrid"]["average"]["fn_rate"] < reports["rules"]["average"]["fn_rate"]


def test_embeddings_and_triplets_on_the_hybrid_source(bank: dict[str, Any], hana: Any) -> None:
    from embeddings.services import triplet_create, triplet_decide

    coin, wait = bank["coin"], bank["wait"]
    for a, p, n in [(coin[0], coin[1], wait[0]), (wait[2], wait[3], coin[2]), (coin[4], coin[5], wait[4])]:
        triplet_decide(triplet=triplet_create(anchor=a, positive=p, negative=n), decision="accept", user=hana)
    call_command("extract_concepts", stdout=io.StringIO())
    out = io.StringIO()
    call_command("rebuild_embeddings", "--source", "hybrid", stdout=out)
    assert "prob2vec/hybrid: run #" in out.getvalue()
    run = EmbeddingRun.objects.get(source="hybrid", method="prob2vec")
    assert run.extraction_run.source == "hybrid" and run.missing == []
    out = io.StringIO()
    call_command("evaluate_triplets", "--methods", "onehot", "--json", stdout=out, stderr=io.StringIO())
    data = json.loads(out.getvalue())
    assert data["results"]["onehot"]["hybrid"] == 1.0
    # The rules never find binomial: the 31 coin problems have no rule concepts and lean on the fallback.
    assert EmbeddingRun.objects.get(source="rules", method="onehot").notes["without_concepts"] == 31
    assert EmbeddingRun.objects.get(source="hybrid", method="onehot").notes["without_concepts"] == 0


def test_a_hybrid_needs_a_finished_rule_extraction(bank: dict[str, Any]) -> None:
    with pytest.raises(ExtractionInputError, match="run `python manage.py extract_concepts` first"):
        extraction_run_start(source="hybrid")
    with pytest.raises(CommandError, match="extract_concepts"):
        call_command("rebuild_embeddings", "--source", "hybrid", stdout=io.StringIO(), stderr=io.StringIO())


def test_without_labels_the_hybrid_is_the_rules(problem_factory: Any, concept_factory: Any) -> None:
    rule_save(concept=concept_factory("nchoosek"), pattern=r"\\binom")
    p = problem_factory("Compute $\\binom{5}{2}$.")
    problem_factory("Roll a die.")
    run = extraction_run_ensure(source="hybrid")
    assert run.status == "done" and run.details["labelled_problems"] == 0 and run.details["added"] == 0
    assert concepts_of(run, p) == {"nchoosek"}


def test_a_bank_whose_rules_find_nothing_still_gets_vectors_and_a_triplet_accuracy(bank: dict[str, Any], hana: Any) -> None:
    from concepts.models import ConceptRule
    from embeddings.services import triplet_create, triplet_decide

    ConceptRule.objects.update(pattern=r"\bzzz-never-written\b")  # rules that find nothing anywhere
    coin, wait = bank["coin"], bank["wait"]
    for a, p, n in [(coin[0], coin[3], wait[0]), (wait[1], wait[4], coin[1]), (coin[6], coin[9], wait[7]), (wait[8], wait[11], coin[10])]:
        triplet_decide(triplet=triplet_create(anchor=a, positive=p, negative=n), decision="accept", user=hana)
    call_command("extract_concepts", stdout=io.StringIO())
    assert not ExtractedConcept.objects.exists()
    call_command("rebuild_embeddings", "--source", "rules", stdout=io.StringIO())
    run = EmbeddingRun.objects.get(source="rules")
    ids, vectors = run_arrays(run)
    assert run.status == "done" and run.missing == [] and vectors.any(axis=1).all()
    out = io.StringIO()
    call_command("evaluate_triplets", "--methods", "prob2vec", "--json", stdout=out, stderr=io.StringIO())
    assert json.loads(out.getvalue())["results"]["prob2vec"]["rules"] > 0.5


def test_ta_pages_build_and_report_the_hybrid_source(client: Any, alice: Any, bank: dict[str, Any], django_capture_on_commit_callbacks: Any) -> None:
    from django.urls import reverse

    client.force_login(alice)
    response = client.post(reverse("concepts:extraction-runs"), {"source": "hybrid"}, follow=True)
    assert "no finished rule extraction to add to" in response.content.decode()  # a clear message, nothing started
    assert not ExtractionRun.objects.filter(source="hybrid").exists()
    with django_capture_on_commit_callbacks(execute=True):  # Celery is eager in tests: the job runs on commit
        client.post(reverse("concepts:extraction-runs"))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("concepts:extraction-runs"), {"source": "hybrid"})
    hybrid = ExtractionRun.objects.get(source="hybrid")
    assert response.url == reverse("concepts:extraction-run", args=[hybrid.pk]) and hybrid.status == "done"
    page = client.get(response.url).content.decode()
    assert 'id="hybrid-details"' in page and "trained on 60 labelled problems" in page and "binomial-distribution: " in page
    right = hybrid.details["labelled_additions"]["right"]
    assert right >= 27 and f"<strong>{right}</strong> right and <strong>0</strong> wrong" in page
    assert "adds more wrong concepts than right ones" not in page
    # A run whose learned half did more harm than good on the labelled problems says so.
    hybrid.details = {**hybrid.details, "labelled_additions": {"right": 2, "wrong": 9}}
    hybrid.save(update_fields=["details"])
    assert "adds more wrong concepts than right ones" in client.get(response.url).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("concepts:reports"), {"collection": "", "source": "hybrid"})
    report = ExtractorReportModel.objects.get()
    assert report.source == "hybrid" and report.status == "done"
    assert report.concepts["binomial-distribution"]["fn_rate"] <= 0.1
    listing = client.get(reverse("concepts:reports")).content.decode()
    assert "<td>hybrid</td>" in listing
    drill = client.get(reverse("concepts:report-drilldown", args=[report.pk, "binomial-distribution", "fn"])).content.decode()
    assert drill.count('<li class="match">') <= 3  # the hybrid's few misses, not the rule's 30


def test_the_api_starts_and_reports_the_hybrid_source(client: Any, alice: Any, bank: dict[str, Any], django_capture_on_commit_callbacks: Any) -> None:
    client.force_login(alice)
    response = client.post("/api/extraction-runs/", {"source": "hybrid"}, content_type="application/json")
    assert response.status_code == 400 and "extract_concepts" in response.json()["source"][0]
    response = client.post("/api/extraction-runs/", {"source": "neural"}, content_type="application/json")
    assert response.status_code == 400
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post("/api/extraction-runs/", content_type="application/json").json()["source"] == "rules"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/extraction-runs/", {"source": "hybrid"}, content_type="application/json")
    assert response.status_code == 202
    run = client.get(f"/api/extraction-runs/{response.json()['id']}/").json()
    assert run["source"] == "hybrid" and run["status"] == "done" and run["details"]["labelled_problems"] == 60
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/reports/", {"source": "hybrid"}, content_type="application/json")
    report = client.get(f"/api/reports/{response.json()['id']}/").json()
    assert report["source"] == "hybrid" and report["concepts"]["binomial-distribution"]["fn_rate"] <= 0.1


def test_a_failed_rules_run_stops_the_hybrid_rather_than_building_on_older_rules(
    bank: dict[str, Any], concept_factory: Any, problem_factory: Any
) -> None:
    call_command("extract_concepts", stdout=io.StringIO())
    older = ExtractionRun.objects.get(source="rules")
    # Saved while the bank was harmless (the save proves a backtracking rule on the bank of its day);
    # then a problem arrives on which it backtracks catastrophically: the current rules cannot run.
    rule_save(concept=concept_factory("evil"), pattern=r"(a|aa)+(?=b)")
    hostile = problem_factory("a" * 40 + "!", title="Hostile")
    with pytest.raises(CommandError) as caught:
        call_command("extract_concepts", "--source", "hybrid", stdout=io.StringIO())
    failed = ExtractionRun.objects.filter(source="rules").latest("id")
    assert failed.pk != older.pk and failed.status == "failed"
    assert str(caught.value) == (
        f"the rules run #{failed.pk} for the current rules failed: {failed.error}; no hybrid run was built"
    ) and f"rule 'evil' took longer than 0.25s on problem {hostile.id}" in failed.error
    assert not ExtractionRun.objects.filter(source="hybrid").exists()  # none on the older rules either
    # The report fails the same way, and keeps no figures of rules it did not run.
    with pytest.raises(CommandError, match=r"the rules run #\d+ for the current rules failed: rule 'evil' took longer"):
        call_command("extractor_report", "--source", "hybrid", "--json", stdout=io.StringIO())
    report = ExtractorReportModel.objects.get()
    assert report.status == "failed" and report.rule_versions == {} and report.concepts == {}
    assert not ExtractionRun.objects.filter(source="hybrid").exists()


def test_a_hybrid_on_an_empty_bank_is_an_empty_finished_run(concept_factory: Any) -> None:
    # No problems, one concept with a rule: the rules run is done with nothing in it, and so is the hybrid.
    rule_save(concept=concept_factory("nchoosek"), pattern=r"\\binom")
    out = io.StringIO()
    call_command("extract_concepts", "--source", "hybrid", stdout=out)
    run = ExtractionRun.objects.get(source="hybrid")
    assert run.status == "done" and run.problems_total == 0 and run.concepts_found == 0
    assert run.details["labelled_problems"] == 0 and run.details["added"] == 0 and run.details["learned_concepts"] == []
    assert f"Hybrid extraction #{run.pk} done: 0 problems, 0 concepts" in out.getvalue()


def test_a_hybrid_that_breaks_is_failed_with_its_error_and_the_next_request_builds_anew(
    bank: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    def out_of_memory(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("DefaultCPUAllocator: not enough memory")

    monkeypatch.setattr(torch.optim, "LBFGS", out_of_memory)  # torch failing mid-fit, as it does when memory runs out
    with pytest.raises(CommandError) as caught:
        call_command("extract_concepts", "--source", "hybrid", stdout=io.StringIO(), stderr=io.StringIO())
    broken = ExtractionRun.objects.get(source="hybrid")
    assert broken.status == "failed" and broken.finished_at is not None
    assert broken.error == "the hybrid extraction stopped: RuntimeError: DefaultCPUAllocator: not enough memory"
    assert str(caught.value) == f"extraction run #{broken.pk} failed: {broken.error}"
    assert not ExtractedConcept.objects.filter(run=broken).exists()
    monkeypatch.undo()
    # Nothing is left running for the same inputs to wait on: the next request builds a new run at once.
    out = io.StringIO()
    call_command("extract_concepts", "--source", "hybrid", stdout=out)
    run = ExtractionRun.objects.filter(source="hybrid").latest("id")
    assert run.pk != broken.pk and run.status == "done" and f"Hybrid extraction #{run.pk} done" in out.getvalue()


def test_the_command_fails_when_the_run_it_waited_for_is_still_running(bank: dict[str, Any], settings: Any) -> None:
    from concepts.jobs import job_claim

    run = extraction_run_start()  # queued (its message goes out on commit, which a test never reaches) ...
    assert job_claim(model=ExtractionRun, job_id=run.pk)  # ... and a worker has it, and has not finished
    settings.CELERY_TASK_TIME_LIMIT = 1
    with pytest.raises(CommandError, match=rf"extraction run #{run.pk} is still running after waiting 1s"):
        call_command("extract_concepts", stdout=io.StringIO())
    assert ExtractionRun.objects.get(pk=run.pk).status == "running"  # someone else's run: left to its worker


def test_the_hybrid_report_counts_concepts_only_the_learned_half_can_find(bank: dict[str, Any], client: Any, alice: Any) -> None:
    from concepts.models import Concept, GroundTruthLabel

    # The binomial rule is switched off: only the learned half can find the concept now.
    rule_save(concept=Concept.objects.get(slug="binomial-distribution"), pattern=r"\bbinomial\b", enabled=False)
    # Too few positives to learn, and no rule: neither half can find it, so neither report judges it.
    rare = Concept.objects.create(slug="rare-concept", name="rare")
    for p in bank["wait"][:2]:
        GroundTruthLabel.objects.create(problem=p, concept=rare)
    reports = {}
    for source in ("rules", "hybrid"):
        out = io.StringIO()
        call_command("extractor_report", "--source", source, "--json", stdout=out)
        reports[source] = json.loads(out.getvalue())
    assert set(reports["rules"]["concepts"]) == {"Poisson-distribution"}  # the rules report is as it was
    hybrid = reports["hybrid"]["concepts"]
    assert set(hybrid) == {"Poisson-distribution", "binomial-distribution"}
    binomial = hybrid["binomial-distribution"]
    assert binomial["tp"] >= 27 and binomial["fn"] == 30 - binomial["tp"] and binomial["tp"] + binomial["fp"] + binomial["fn"] + binomial["tn"] == 60
    # Its figures count in the averages and the pooled precision and recall.
    average = (hybrid["binomial-distribution"]["fn_rate"] + hybrid["Poisson-distribution"]["fn_rate"]) / 2
    assert reports["hybrid"]["average"]["fn_rate"] == pytest.approx(average)
    report = ExtractorReportModel.objects.get(source="hybrid")
    tp = binomial["tp"] + hybrid["Poisson-distribution"]["tp"]
    assert report.precision == tp / (tp + binomial["fp"] + hybrid["Poisson-distribution"]["fp"])
    assert report.recall == tp / (tp + binomial["fn"] + hybrid["Poisson-distribution"]["fn"])
    # The rule versions are those of the rules run the hybrid was built on: the enabled Poisson rule.
    assert report.rule_versions == {"Poisson-distribution": 1}
    client.force_login(alice)
    page = client.get(f"/concepts/reports/{report.pk}/").content.decode()
    assert "<strong>2</strong> concepts (those the rules cover and those the learned half could add)" in page
