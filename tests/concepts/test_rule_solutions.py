"""The rules read a problem's solution after its statement (RULES_READ_SOLUTIONS, on by default): extraction
runs, reports and their drill-downs, the live preview and the hybrid source's learned half all read the
same text, and turning it off gives the statements alone, in a run of its own."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.urls import reverse

from concepts import learned
from concepts.models import ExtractedConcept, ExtractionRun, ExtractorReport
from concepts.services import extraction_run_start, rule_save


@pytest.fixture
def bank(problem_factory: Any, concept_factory: Any) -> dict[str, Any]:
    """Poisson-distribution: one problem names it in its statement, one only in its solution, one nowhere."""
    poisson = concept_factory("Poisson-distribution")
    rule_save(concept=poisson, pattern=r"\bpoisson\b")
    return {
        "statement": problem_factory("Calls arrive as a Poisson process.", title="Statement", labels=["Poisson-distribution"]),
        "solution": problem_factory(
            "On average 2 calls a minute; find P(no call).", title="InSolution", labels=["Poisson-distribution"],
            solution="The count is Poisson with mean 2, so $e^{-2}$.",
        ),
        "nowhere": problem_factory("Roll a die.", title="Nowhere", labels=["Poisson-distribution"], solution="1/6 by symmetry."),
    }


def found_titles(run: ExtractionRun) -> set[str]:
    return set(ExtractedConcept.objects.filter(run=run).values_list("problem__title", flat=True))


def test_a_run_reads_the_solution_and_turning_it_off_makes_a_run_of_its_own(
    client: Any, alice: Any, bank: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run = extraction_run_start()
    run.refresh_from_db()
    assert run.status == "done" and found_titles(run) == {"Statement", "InSolution"}
    assert run.details == {"reads_solutions": True}
    client.force_login(alice)
    assert "read each problem's statement and solution</span>" in client.get(reverse("concepts:extraction-run", args=[run.pk])).content.decode()
    with override_settings(RULES_READ_SOLUTIONS=False), django_capture_on_commit_callbacks(execute=True):
        alone = extraction_run_start()
    alone.refresh_from_db()
    assert alone.pk != run.pk and found_titles(alone) == {"Statement"} and alone.details == {"reads_solutions": False}
    assert "read the statements alone" in client.get(reverse("concepts:extraction-run", args=[alone.pk])).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        assert extraction_run_start().pk == run.pk  # on again: the same inputs, the same run
    # A solution is an input like the statement: editing it makes a new run.
    bank["nowhere"].solution = "Not Poisson: 1/6 by symmetry."
    bank["nowhere"].save()
    with django_capture_on_commit_callbacks(execute=True):
        edited = extraction_run_start()
    edited.refresh_from_db()
    assert edited.pk != run.pk and found_titles(edited) == {"Statement", "InSolution", "Nowhere"}


def test_reports_count_what_the_solution_gives_and_the_drill_down_shows_it(
    client: Any, alice: Any, bank: dict[str, Any], problem_factory: Any, concept_factory: Any, django_capture_on_commit_callbacks: Any
) -> None:
    concept_factory("counting-principle")
    problem_factory("Count the arrivals.", title="Wrong", labels=["counting-principle"], solution="Not a Poisson count: it is fixed.")

    def counts() -> tuple[int, int, int]:
        out = io.StringIO()
        call_command("extractor_report", "--json", stdout=out)
        c = json.loads(out.getvalue())["concepts"]["Poisson-distribution"]
        return c["tp"], c["fp"], c["fn"]

    assert counts() == (2, 1, 1)  # found in a statement and in a solution, wrongly in a solution; "Nowhere" missed
    with override_settings(RULES_READ_SOLUTIONS=False):
        assert counts() == (1, 0, 2)
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("concepts:reports"), {"collection": ""})
    report = ExtractorReport.objects.latest("id")

    def listed(kind: str) -> str:
        page = client.get(reverse("concepts:report-drilldown", args=[report.pk, "Poisson-distribution", kind])).content.decode()
        return page.split('id="drilldown-problems"')[1].split("</ol>")[0]

    assert "Nowhere" in listed("fn") and "Solution: 1/6 by symmetry." in listed("fn")  # what the rules read, solution included
    assert "Solution: Not a <mark>Poisson</mark> count" in listed("fp")  # the match, marked where it is


def test_the_live_preview_matches_the_solution_and_marks_it(client: Any, alice: Any, bank: dict[str, Any]) -> None:
    client.force_login(alice)
    body = client.post(reverse("concepts:rule-preview"), {"concept": "Poisson-distribution", "pattern": r"\bpoisson\b", "ignore_case": "on"}).content.decode()
    assert 'id="matched-count">2<' in body and 'id="fn-count">FN 1<' in body
    assert "Solution: The count is <mark>Poisson</mark> with mean 2" in body
    with override_settings(RULES_READ_SOLUTIONS=False):
        body = client.post(reverse("concepts:rule-preview"), {"concept": "Poisson-distribution", "pattern": r"\bpoisson\b", "ignore_case": "on"}).content.decode()
    assert 'id="matched-count">1<' in body and 'id="fn-count">FN 2<' in body and "Solution:" not in body
    # The editor says what the rules read.
    editor = client.get(reverse("concepts:rule-edit", args=["Poisson-distribution"])).content.decode()
    assert "Rules read each problem's statement, then its solution" in editor
    with override_settings(RULES_READ_SOLUTIONS=False):
        editor = client.get(reverse("concepts:rule-edit", args=["Poisson-distribution"])).content.decode()
    assert "Rules read each problem's statement alone" in editor


def test_the_hybrid_sources_learned_half_reads_what_the_rules_read(
    bank: dict[str, Any], monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    read: list[list[str]] = []
    real = learned.cross_fit

    def spy(texts: list[str], *args: Any, **kwargs: Any) -> Any:
        read.append(list(texts))
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(learned, "cross_fit", spy)
    with django_capture_on_commit_callbacks(execute=True):
        extraction_run_start()
    with django_capture_on_commit_callbacks(execute=True):
        hybrid = extraction_run_start(source="hybrid")
    hybrid.refresh_from_db()
    assert hybrid.status == "done", hybrid.error
    assert "On average 2 calls a minute; find P(no call).\n\nSolution: The count is Poisson with mean 2, so $e^{-2}$." in read[0]
    # A hybrid run reads what its rules run read, whatever the setting says now.
    with override_settings(RULES_READ_SOLUTIONS=False), django_capture_on_commit_callbacks(execute=True):
        extraction_run_start()
    with django_capture_on_commit_callbacks(execute=True):
        extraction_run_start(source="hybrid")
    assert "On average 2 calls a minute; find P(no call)." in read[-1] and not any("Solution:" in t for t in read[-1])
