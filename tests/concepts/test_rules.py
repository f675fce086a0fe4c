from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from concepts.models import ConceptRule, ExtractedConcept, ExtractionRun, ExtractorReport
from concepts.services import RuleRejected, extraction_run_execute, extraction_run_start, rule_revert, rule_save


@pytest.fixture
def nchoosek(concept_factory: Any) -> Any:
    return concept_factory("nchoosek")


@pytest.fixture
def small_bank(problem_factory: Any, concept_factory: Any) -> dict[str, Any]:
    concept_factory("Poisson-distribution")
    return {
        "binom": problem_factory("Choose: $\\binom{10}{3}$.", title="Binom", labels=["nchoosek"]),
        "choose": problem_factory("In how many ways can we choose 3 of 10?", title="Words", labels=["nchoosek"]),
        "poisson": problem_factory("Calls are Poisson; also $\\binom{4}{2}$.", title="Poisson", labels=["Poisson-distribution"]),
        "plain": problem_factory("Roll a die.", title="Plain", labels=["Poisson-distribution"]),
        "unlabelled": problem_factory("Unlabelled \\binom text", title="Unlabelled"),
    }


def test_saving_makes_attributed_versions_and_revert_restores(nchoosek: Any, alice: Any, bob: Any) -> None:
    rule_save(concept=nchoosek, pattern=r"\\binom", user=alice, message="first")
    rule_save(concept=nchoosek, pattern=r"\\binom|\\choose", ignore_case=False, user=bob, message="add choose")
    rule = rule_save(concept=nchoosek, pattern=r"\\binom|\\choose", ignore_case=False, user=bob)  # unchanged
    assert rule.version == 2
    assert [(v.number, v.author.username, v.message) for v in rule.versions.order_by("number")] == [
        (1, "alice", "first"),
        (2, "bob", "add choose"),
    ]
    rule = rule_revert(rule=rule, number=1, user=alice)
    assert (rule.version, rule.pattern, rule.ignore_case, rule.updated_by) == (3, r"\\binom", True, alice)
    assert rule.versions.get(number=3).message == "Revert to version 1"
    with pytest.raises(RuleRejected, match="no version 9"):
        rule_revert(rule=rule, number=9)


@pytest.mark.parametrize(
    "pattern, message",
    [("(unclosed", "missing ), unterminated subpattern at position 0"), ("a|", "matches the empty string")],
)
def test_invalid_patterns_are_refused_on_save(nchoosek: Any, pattern: str, message: str) -> None:
    with pytest.raises(RuleRejected, match=message.replace("(", r"\(").replace(")", r"\)")):
        rule_save(concept=nchoosek, pattern=pattern)
    assert not ConceptRule.objects.exists()


def test_a_runaway_backtracking_pattern_is_refused_on_save(nchoosek: Any, problem_factory: Any) -> None:
    problem_factory("a" * 40 + "!")
    with pytest.raises(RuleRejected, match="catastrophic backtracking"):
        rule_save(concept=nchoosek, pattern=r"(a|aa)+(?=b)")
    assert not ConceptRule.objects.exists()


def test_extraction_stores_concepts_with_rule_versions_and_reruns_do_no_new_work(
    small_bank: dict[str, Any], nchoosek: Any, alice: Any, django_capture_on_commit_callbacks: Any
) -> None:
    rule_save(concept=nchoosek, pattern=r"\\binom|\bchoose\b", user=alice)
    with django_capture_on_commit_callbacks(execute=True):
        run = extraction_run_start(user=alice)
    run.refresh_from_db()
    assert (run.status, run.problems_total, run.problems_done, run.concepts_found) == ("done", 5, 5, 4)
    got = set(ExtractedConcept.objects.filter(run=run).values_list("problem__title", "concept__slug", "rule_version__number"))
    assert got == {("Binom", "nchoosek", 1), ("Words", "nchoosek", 1), ("Poisson", "nchoosek", 1), ("Unlabelled", "nchoosek", 1)}
    with django_capture_on_commit_callbacks(execute=True):
        again = extraction_run_start(user=alice)
    assert again.id == run.id and ExtractionRun.objects.count() == 1
    extraction_run_execute(run_id=run.id)  # the claim makes a second execution a no-op
    assert ExtractedConcept.objects.count() == 4
    small_bank["plain"].text = "Choose wisely"
    small_bank["plain"].save()
    with django_capture_on_commit_callbacks(execute=True):
        third = extraction_run_start()
    assert third.id != run.id and ExtractedConcept.objects.filter(run=third).count() == 5


def test_a_rule_that_runs_away_on_a_newer_problem_fails_the_run_naming_it_and_keeps_nothing(
    small_bank: dict[str, Any], nchoosek: Any, concept_factory: Any, problem_factory: Any, django_capture_on_commit_callbacks: Any
) -> None:
    rule_save(concept=nchoosek, pattern=r"\\binom")
    # Saved while the bank was harmless (the save proves a backtracking rule on the bank of its day);
    # then a problem arrives on which it backtracks catastrophically.
    rule_save(concept=concept_factory("evil"), pattern=r"(a|aa)+(?=b)")
    hostile = problem_factory("a" * 40 + "!", title="Hostile")
    with django_capture_on_commit_callbacks(execute=True):
        run = extraction_run_start()
    run.refresh_from_db()
    assert run.status == "failed"
    assert f"rule 'evil' took longer than 0.25s on problem {hostile.id}" in run.error
    assert not ExtractedConcept.objects.exists()


def test_the_extract_concepts_command(small_bank: dict[str, Any], nchoosek: Any) -> None:
    rule_save(concept=nchoosek, pattern=r"\\binom")
    out = io.StringIO()
    call_command("extract_concepts", stdout=out)
    assert "done: 5 problems, 3 concepts from 1 rules" in out.getvalue()
    out = io.StringIO()
    call_command("extract_concepts", stdout=out)
    assert ExtractionRun.objects.count() == 1 and "5 problems, 3 concepts" in out.getvalue()


def test_the_report_arithmetic_on_a_hand_computed_case(small_bank: dict[str, Any], nchoosek: Any, concept_factory: Any) -> None:
    rule_save(concept=nchoosek, pattern=r"\\binom")
    rule_save(concept=concept_factory("Poisson-distribution"), pattern=r"poisson|die")
    out = io.StringIO()
    call_command("extractor_report", "--json", stdout=out)
    data = json.loads(out.getvalue())
    # Labelled problems: binom{n}, choose{n}, poisson{P}, plain{P}.
    # nchoosek predicted on binom, poisson -> tp 1 (binom), fp 1 (poisson), fn 1 (choose), tn 1 (plain).
    # Poisson predicted on poisson, plain -> tp 2, fp 0, fn 0, tn 2.
    assert data["problems"] == 4
    assert data["concepts"]["nchoosek"] == {"tp": 1, "fp": 1, "fn": 1, "tn": 1, "fp_rate": 0.5, "fn_rate": 0.5}
    assert data["concepts"]["Poisson-distribution"] == {"tp": 2, "fp": 0, "fn": 0, "tn": 2, "fp_rate": 0.0, "fn_rate": 0.0}
    assert data["average"] == {"fp_rate": 0.25, "fn_rate": 0.25}
    report = ExtractorReport.objects.get()
    assert (report.precision, report.recall) == (3 / 4, 3 / 4)  # pooled: tp 3, fp 1, fn 1
    assert "precision" not in data and "recall" not in data["average"]  # the JSON contract is unchanged
    assert ExtractorReport(concepts={"nchoosek": {"tp": 0, "fp": 0, "fn": 0, "tn": 4}}).precision is None  # nothing found
    text = io.StringIO()
    call_command("extractor_report", stdout=text)
    assert "average FP rate 25.00%, average FN rate 25.00%" in text.getvalue()


def test_the_report_of_an_unlabelled_collection_fails_clearly(small_bank: dict[str, Any], nchoosek: Any, problem_factory: Any) -> None:
    rule_save(concept=nchoosek, pattern=r"\\binom")
    problem_factory("A book just imported: \\binom{5}{2}.", collection="nothing")  # a collection nobody labelled yet
    with pytest.raises(CommandError, match="no problem in collection 'nothing' has ground-truth labels"):
        call_command("extractor_report", "--collection", "nothing")
    assert ExtractorReport.objects.get().status == "failed"


def test_report_pages_show_rates_and_drill_down(
    client: Any, alice: Any, small_bank: dict[str, Any], nchoosek: Any, django_capture_on_commit_callbacks: Any
) -> None:
    rule_save(concept=nchoosek, pattern=r"\\binom")
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("concepts:reports"), {"collection": ""})
    report = ExtractorReport.objects.get()
    assert response.url == reverse("concepts:report", args=[report.pk])
    page = client.get(response.url).content.decode()
    assert 'id="avg-fp">50.00%' in page and 'id="avg-fn">50.00%' in page  # fp: poisson of 2 negatives; fn: words of 2
    # Found: binom (right) and poisson (wrong); labelled: binom (found) and words (missed).
    assert 'id="precision">50.00%' in page and 'id="recall">50.00%' in page
    fn = client.get(reverse("concepts:report-drilldown", args=[report.pk, "nchoosek", "fn"])).content.decode()
    listed = fn.split('id="drilldown-problems"')[1].split("</ol>")[0]  # the page also holds the rule's live preview
    assert "Words" in listed and "Binom" not in listed
    listing = client.get(reverse("concepts:reports")).content.decode()
    assert 'id="report-chart"' in listing and "50.00%" in listing


def test_the_editor_and_the_api_take_the_longest_starter_rule_and_refuse_one_character_more(nchoosek: Any, alice: Any) -> None:
    from concepts.extraction import MAX_PATTERN_LENGTH
    from problems.demo_course import demo_rules

    longest = max(len(spec["pattern"]) for spec in demo_rules().values())
    assert longest <= MAX_PATTERN_LENGTH  # the starter rules load and a TA can save them back
    client = Client()
    client.force_login(alice)
    url = reverse("api-rule-detail", args=["nchoosek"])
    fits = "|".join(["binom"] * ((MAX_PATTERN_LENGTH + 1) // 6))
    fits += "|" + "x" * (MAX_PATTERN_LENGTH - len(fits) - 1)
    assert len(fits) == MAX_PATTERN_LENGTH
    assert client.put(url, {"pattern": fits}, content_type="application/json").status_code == 200
    response = client.put(url, {"pattern": fits + "y"}, content_type="application/json")
    assert response.status_code == 400 and "pattern" in response.json()
    assert ConceptRule.objects.get(concept=nchoosek).pattern == fits  # the refused save changed nothing
    page = client.post(reverse("concepts:rule-edit", args=["nchoosek"]), {"pattern": fits + "y", "ignore_case": "on", "enabled": "on"})
    assert f"at most {MAX_PATTERN_LENGTH} characters" in page.content.decode().replace(",", "")
