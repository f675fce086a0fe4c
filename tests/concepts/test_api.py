from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse


@pytest.fixture
def bank(problem_factory: Any, concept_factory: Any) -> None:
    concept_factory("nchoosek")
    problem_factory("Choose: $\\binom{10}{3}$.", title="Binom", labels=["nchoosek"])
    problem_factory("Choose 3 of 10.", title="Words", labels=["nchoosek"])


def test_rules_with_versions_save_revert_and_preview(client: Any, alice: Any, bank: None) -> None:
    client.force_login(alice)
    url = reverse("api-rule-detail", args=["nchoosek"])
    r = client.put(url, {"pattern": "\\\\binom", "message": "v1"}, content_type="application/json")
    assert r.status_code == 200 and r.json()["version"] == 1 and r.json()["updated_by"] == "alice"
    client.put(url, {"pattern": "\\\\binom|choose"}, content_type="application/json")
    bad = client.put(url, {"pattern": "(x"}, content_type="application/json")
    assert bad.status_code == 400 and "missing )" in bad.json()["pattern"][0] and bad.json()["position"] == 0
    detail = client.get(url).json()
    assert detail["version"] == 2 and [v["number"] for v in detail["versions"]] == [2, 1]
    assert client.post(reverse("api-rule-revert", args=["nchoosek", 1])).json()["pattern"] == "\\\\binom"
    assert [r["concept"] for r in client.get(reverse("api-rule-list")).json()] == ["nchoosek"]
    preview = client.post(reverse("api-rule-preview"), {"concept": "nchoosek", "pattern": "choose"}, content_type="application/json")
    body = preview.json()
    assert (body["matched"], body["total"], body["engine"]) == (2, 2, "re2")
    assert body["stats"] == {"tp": 2, "fp": 0, "fn": 0, "tn": 0, "fp_rate": None, "fn_rate": 0.0}
    assert body["matches"][0]["spans"] == [[0, 6]]
    err = client.post(reverse("api-rule-preview"), {"concept": "nchoosek", "pattern": "a**"}, content_type="application/json")
    assert err.status_code == 400 and err.json() == {"error": "multiple repeat", "position": 2}


def test_runs_and_reports(client: Any, alice: Any, bank: None, django_capture_on_commit_callbacks: Any) -> None:
    client.force_login(alice)
    client.put(reverse("api-rule-detail", args=["nchoosek"]), {"pattern": "\\\\binom"}, content_type="application/json")
    with django_capture_on_commit_callbacks(execute=True):
        run = client.post(reverse("api-extraction-run-list")).json()
    detail = client.get(reverse("api-extraction-run-detail", args=[run["id"]])).json()
    assert (detail["status"], detail["problems_done"], detail["concepts_found"]) == ("done", 2, 1)
    with django_capture_on_commit_callbacks(execute=True):
        report = client.post(reverse("api-report-list"), {}, content_type="application/json").json()
    data = client.get(reverse("api-report-detail", args=[report["id"]])).json()
    assert data["average"] == {"fp_rate": None, "fn_rate": 0.5}
    assert data["concepts"]["nchoosek"]["fn"] == 1


@pytest.mark.parametrize("body", ["[]", "null", '""', "false"])
def test_a_run_request_whose_body_is_not_an_object_is_refused_and_starts_nothing(client: Any, alice: Any, bank: None, body: str) -> None:
    from concepts.models import ExtractionRun

    client.force_login(alice)
    answer = client.post(reverse("api-extraction-run-list"), body, content_type="application/json")
    assert answer.status_code == 400 and not ExtractionRun.objects.exists()
    # No body at all still starts a run (the body is optional).
    assert client.post(reverse("api-extraction-run-list")).status_code in (202, 503)


@pytest.mark.parametrize("name, args", [("api-rule-list", []), ("api-rule-detail", ["nchoosek"]), ("api-report-list", []), ("api-extraction-run-list", [])])
def test_students_get_nothing(client: Any, sam: Any, bank: None, name: str, args: list[str]) -> None:
    client.force_login(sam)
    assert client.get(reverse(name, args=args)).status_code == 403
    assert client.post(reverse("api-rule-preview"), {"concept": "nchoosek", "pattern": "x"}, content_type="application/json").status_code == 403


@pytest.mark.parametrize("path", ["api-rule-preview", "api-rule-suggestions"])
@pytest.mark.parametrize("module", [987654, 10**20])
def test_a_preview_limited_to_a_module_that_does_not_exist_is_a_400_naming_it(client: Any, alice: Any, bank: None, path: str, module: int) -> None:
    """`modules` holds module ids: one that is no module was an empty preview (200, nothing matched:
    a mistyped id read as a rule matching nothing) on PostgreSQL and a server error on SQLite."""
    from problems.models import Module

    client.force_login(alice)
    body = {"concept": "nchoosek", "pattern": "choose", "modules": [module]}
    response = client.post(reverse(path), body, content_type="application/json")
    assert response.status_code == 400 and "modules" in response.json(), response.content[:300]
    ok = {**body, "modules": list(Module.objects.values_list("pk", flat=True))}
    assert client.post(reverse(path), ok, content_type="application/json").status_code == 200


def test_a_report_on_a_collection_the_bank_does_not_have_is_refused_at_once_by_the_api_the_page_and_the_command(
    client: Any, alice: Any, bank: None
) -> None:
    """A mistyped collection started a report (202) that failed later saying "label some problems first";
    the command said the same. Now each names the collections the bank has, and no report row is made."""
    import io

    from django.core.management import CommandError, call_command

    from concepts.models import ExtractorReport
    from problems.models import Problem

    have = Problem.objects.values_list("collection", flat=True).first()
    client.force_login(alice)
    answer = client.post(reverse("api-report-list"), {"collection": "opnestax"}, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json() == {"collection": [f"no collection named 'opnestax' in the bank; it has {have!r}"]}
    page = client.post(reverse("concepts:reports"), {"collection": "opnestax", "source": "rules"})
    assert page.status_code == 200 and "no collection named &#x27;opnestax&#x27; in the bank" in page.content.decode()
    with pytest.raises(CommandError, match="no collection named 'opnestax' in the bank; it has"):
        call_command("extractor_report", "--collection", "opnestax", stdout=io.StringIO())
    assert not ExtractorReport.objects.exists()
    # The collection it has still reports.
    assert client.post(reverse("api-report-list"), {"collection": have}, content_type="application/json").status_code in (202, 503)
