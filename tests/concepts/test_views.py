from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from concepts.models import ConceptRule
from concepts.services import rule_save


@pytest.fixture
def bank(problem_factory: Any, concept_factory: Any) -> dict[str, Any]:
    concept_factory("nchoosek")
    return {
        "binom": problem_factory("Choose: $\\binom{10}{3}$ and more.", title="Binom", labels=["nchoosek"]),
        "words": problem_factory("Choose 3 of 10 people.", title="Words", labels=["nchoosek"]),
        "other": problem_factory("Roll a die; not about \\binom at all.", title="Other", labels=["permutations"]),
        "free": problem_factory("Unlabelled \\binom", title="Free"),
    }


def preview(client: Any, pattern: str, **extra: Any) -> Any:
    return client.post(reverse("concepts:rule-preview"), {"concept": "nchoosek", "pattern": pattern, "ignore_case": "on", **extra})


def test_preview_shows_matches_counts_and_highlighted_spans(client: Any, alice: Any, bank: Any) -> None:
    client.force_login(alice)
    response = preview(client, r"\\binom")
    body = response.content.decode()
    assert response.status_code == 200 and body.lstrip().startswith('<section id="rule-preview"')
    assert '<strong id="matched-count">3</strong> of 4 problems match' in body
    assert "TP 1" in body and "FP 1" in body and "FN 1" in body
    assert "FP rate 100.00%" in body and "FN rate 50.00%" in body  # 3 labelled: tp binom, fp other, fn words
    assert "<mark>$\\binom{10}{3}$</mark>" in body  # a span inside math marks the whole formula
    assert "<mark>\\binom</mark>" in body


def test_preview_compares_with_the_saved_rule(client: Any, alice: Any, bank: Any) -> None:
    rule_save(concept=bank["binom"].ground_truth_labels.get().concept, pattern=r"\\binom")
    client.force_login(alice)
    body = preview(client, r"\bchoose\b").content.decode()
    # Before: binom, other, free. Now ("Choose" in two texts): binom, words.
    assert "<strong>+1</strong> newly matched" in body and "<strong>−2</strong> no longer matched" in body
    assert f'#{bank["words"].pk} ✓' in body  # newly matched and labelled: right
    assert f'#{bank["other"].pk} ✓' in body  # no longer matched and not labelled: right
    body = preview(client, r"\\binom|permutations").content.decode()
    assert "newly matched" not in body  # same matches as the saved rule: no diff line


def test_the_diff_against_the_saved_rule_leaves_unlabelled_and_held_out_problems_unjudged(
    client: Any, alice: Any, bank: Any
) -> None:
    from concepts.services import held_out_set

    rule_save(concept=bank["binom"].ground_truth_labels.get().concept, pattern=r"\\binom")
    held_out_set(problem_ids=[bank["words"].pk], held_out=True)  # labelled nchoosek, but held out: unlabelled here
    client.force_login(alice)
    body = preview(client, r"\bchoose\b").content.decode()
    # Newly matched: words (held out). No longer matched: other (labelled without it: right), free (no labels).
    words, other, free = bank["words"].pk, bank["other"].pk, bank["free"].pk
    assert f'class="muted" title="Words">#{words} unlabelled</a>' in body
    assert f'class="ok" title="Other">#{other} ✓</a>' in body
    assert f'class="muted" title="Free">#{free} unlabelled</a>' in body
    assert f"#{free} ✓" not in body and f"#{free} ✗" not in body and f"#{words} ✓" not in body
    data = client.post("/api/rules/preview/", {"concept": "nchoosek", "pattern": r"\bchoose\b"}, content_type="application/json").json()
    assert data["newly_matched"] == [{"problem": words, "right": None}]
    assert data["no_longer_matched"] == [{"problem": other, "right": True}, {"problem": free, "right": None}]


@pytest.mark.parametrize(
    "pattern, message", [("(x", "missing ), unterminated subpattern"), ("a|", "matches the empty string")]
)
def test_preview_renders_invalid_patterns_inside_the_panel_with_status_200(
    client: Any, alice: Any, bank: Any, pattern: str, message: str
) -> None:
    client.force_login(alice)
    response = preview(client, pattern)
    assert response.status_code == 200
    assert 'id="preview-error"' in response.content.decode() and message in response.content.decode()


def test_preview_of_the_catastrophic_pattern_answers(client: Any, alice: Any, bank: Any, problem_factory: Any) -> None:
    problem_factory("a" * 30 + "!")
    client.force_login(alice)
    body = preview(client, r"(a+)+$").content.decode()
    assert '<strong id="matched-count">0</strong>' in body


def test_preview_can_be_limited_to_modules(client: Any, alice: Any, bank: Any, problem_factory: Any, module_factory: Any) -> None:
    other = module_factory("other module", 9)
    problem_factory("\\binom elsewhere", module="other module")
    client.force_login(alice)
    body = preview(client, r"\\binom", modules=[other.pk]).content.decode()
    assert '<strong id="matched-count">1</strong> of 1 problems match' in body


def test_preview_rejects_get(client: Any, alice: Any) -> None:
    client.force_login(alice)
    assert client.get(reverse("concepts:rule-preview")).status_code == 405


def test_the_editor_saves_versions_and_refuses_invalid_patterns(client: Any, alice: Any, bank: Any) -> None:
    client.force_login(alice)
    url = reverse("concepts:rule-edit", args=["nchoosek"])
    page = client.get(url).content.decode()
    assert 'hx-post="/concepts/rules/preview/"' in page and 'hx-sync="this:queue last"' in page
    response = client.post(url, {"pattern": r"\\binom", "ignore_case": "on", "enabled": "on", "message": "start"})
    assert response.status_code == 302
    rule = ConceptRule.objects.get()
    assert (rule.version, rule.updated_by, rule.versions.get().message) == (1, alice, "start")
    bad = client.post(url, {"pattern": "(", "enabled": "on"}).content.decode()
    assert "Invalid pattern: missing ), unterminated subpattern" in bad and "at position 0" in bad
    assert ConceptRule.objects.get().version == 1
    # Without JavaScript the page previews the saved rule server-side.
    assert '<strong id="matched-count">3</strong>' in client.get(url).content.decode()


def test_saving_a_rule_unchanged_says_nothing_was_saved_and_makes_no_version(client: Any, alice: Any, bank: Any) -> None:
    client.force_login(alice)
    url = reverse("concepts:rule-edit", args=["nchoosek"])
    fields = {"pattern": r"\\binom", "ignore_case": "on", "enabled": "on", "base_version": 0, "message": "start"}
    assert "Saved the rule of nchoosek." in client.post(url, fields, follow=True).content.decode()
    # The same rule again, with only a new change note: no version, and the page says so.
    page = client.post(url, {**fields, "base_version": 1, "message": "why it matters"}, follow=True).content.decode()
    assert "Nothing changed in the rule of nchoosek: no new version was saved and the change note was not kept." in page
    assert "Saved the rule of" not in page
    rule = ConceptRule.objects.get()
    assert (rule.version, list(rule.versions.values_list("message", flat=True))) == (1, ["start"])


def test_history_page_and_revert(client: Any, alice: Any, bob: Any, bank: Any) -> None:
    concept = bank["binom"].ground_truth_labels.get().concept
    rule_save(concept=concept, pattern="one", user=alice)
    rule_save(concept=concept, pattern="two", user=bob)
    client.force_login(bob)
    page = client.get(reverse("concepts:rule-history", args=["nchoosek"])).content.decode()
    assert "alice" in page and "bob" in page and "current" in page
    client.post(reverse("concepts:rule-revert", args=["nchoosek", 1]))
    rule = ConceptRule.objects.get()
    assert (rule.pattern, rule.version, rule.updated_by) == ("one", 3, bob)


@pytest.mark.parametrize(
    "name, args",
    [
        ("concepts:list", []),
        ("concepts:rule-edit", ["nchoosek"]),
        ("concepts:rule-history", ["nchoosek"]),
        ("concepts:extraction-runs", []),
        ("concepts:reports", []),
    ],
)
def test_students_and_anonymous_never_see_rules(client: Any, sam: Any, bank: Any, name: str, args: list[str]) -> None:
    url = reverse(name, args=args)
    assert client.get(url).status_code == 302  # to login
    client.force_login(sam)
    response = client.get(url)
    assert response.status_code in (302, 403) and "binom" not in response.content.decode()


def test_students_cannot_preview_or_save(client: Any, sam: Any, bank: Any) -> None:
    client.force_login(sam)
    assert preview(client, "x").status_code in (302, 403)
    client.post(reverse("concepts:rule-edit", args=["nchoosek"]), {"pattern": "x", "enabled": "on"})
    assert not ConceptRule.objects.exists()


def test_extraction_page_starts_a_run_and_shows_its_status(
    client: Any, alice: Any, bank: Any, django_capture_on_commit_callbacks: Any
) -> None:
    rule_save(concept=bank["binom"].ground_truth_labels.get().concept, pattern=r"\\binom")
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("concepts:extraction-runs"))
    from concepts.models import ExtractionRun

    run = ExtractionRun.objects.get()
    assert client.get(response.url, HTTP_HX_REQUEST="true").get("HX-Refresh") == "true"  # the poll reloads the page
    page = client.get(response.url).content.decode()
    assert "Done" in page and "4 / 4 problems" in page
    assert "every 2s" not in page  # a finished run stops polling
    assert f"#{run.pk}</a>" in client.get(reverse("concepts:extraction-runs")).content.decode()


def test_the_no_javascript_preview_never_puts_the_csrf_token_in_a_url(alice: Any, bank: Any) -> None:
    # "Preview without JavaScript" was a formmethod="get" button in the POST form, so the form's hidden
    # csrfmiddlewaretoken went into the URL: the server's request log, the browser history, a shared link.
    # It now posts, and the editor sends it on to the same GET preview without the token.
    from urllib.parse import parse_qs, urlparse

    from django.test import Client

    rule_save(concept=bank["binom"].ground_truth_labels.get().concept, pattern=r"\\binom")
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    url = reverse("concepts:rule-edit", args=["nchoosek"])
    page = client.get(url).content.decode()
    assert 'formmethod="get"' not in page and 'name="preview" value="1"' in page
    token = client.cookies["csrftoken"].value
    response = client.post(url, {"csrfmiddlewaretoken": token, "pattern": r"\bchoose\b", "ignore_case": "on", "base_version": "1", "preview": "1"})
    assert response.status_code == 302
    target = urlparse(response["Location"])
    query = parse_qs(target.query)
    assert target.path == url and "csrfmiddlewaretoken" not in query and token not in response["Location"]
    assert query["pattern"] == [r"\bchoose\b"] and query["preview"] == ["1"]
    body = client.get(response["Location"]).content.decode()
    assert '<strong id="matched-count">2</strong>' in body and "<mark>Choose</mark>" in body
    assert ConceptRule.objects.get().pattern == r"\\binom" and ConceptRule.objects.get().version == 1


def test_without_javascript_a_typed_pattern_is_previewed_by_a_get_and_not_saved(client: Any, alice: Any, bank: Any) -> None:
    rule_save(concept=bank["binom"].ground_truth_labels.get().concept, pattern=r"\\binom")
    client.force_login(alice)
    page = client.get(reverse("concepts:rule-edit", args=["nchoosek"]), {"pattern": r"\bchoose\b", "ignore_case": "on", "preview": "1"})
    body = page.content.decode()
    assert '<strong id="matched-count">2</strong>' in body and "<mark>Choose</mark>" in body
    assert ConceptRule.objects.get().pattern == r"\\binom"


def test_a_report_that_finishes_while_its_page_is_watched_shows_its_figures(client: Any, alice: Any, bank: Any) -> None:
    """The page polls the status card alone; the figures and the table are outside it, so the poll that
    sees the report done reloads the page (as a neural experiment's does), not just the word "Done"."""
    from concepts.models import ExtractorReport

    rule_save(concept=bank["binom"].ground_truth_labels.get().concept, pattern=r"\\binom")
    report = ExtractorReport.objects.create(created_by=alice)
    url = reverse("concepts:report", args=[report.pk])
    client.force_login(alice)
    assert 'hx-trigger="every 2s"' in client.get(url, HTTP_HX_REQUEST="true").content.decode()  # queued: polled
    from concepts.services import extractor_report_compute

    extractor_report_compute(report_id=report.pk)
    response = client.get(url, HTTP_HX_REQUEST="true")
    assert response.status_code == 204 and response["HX-Refresh"] == "true"
    assert 'id="report-concepts"' in client.get(url).content.decode()
