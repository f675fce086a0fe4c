"""A rule's branches matched in the statement alone (its second box): saved and versioned with the
rule, matched by extraction runs and reports, previewed live, listed by the rule analysis, and
exchanged by the API and by `rules_load` (rules.json's "statement_only" branches)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse

from concepts.models import ConceptRule, ExtractedConcept
from concepts.services import RuleRejected, extraction_run_start, rule_revert, rule_save, rules_load


@pytest.fixture
def bank(problem_factory: Any, concept_factory: Any) -> dict[str, Any]:
    """nchoosek: asked for in one statement; in another problem only the solution's working writes
    `\\binom` (labelled without nchoosek, by the guide); a third names it in its solution."""
    concept_factory("nchoosek")
    concept_factory("counting-principle")
    return {
        "asked": problem_factory(r"Compute $\binom{6}{2}$.", title="Asked", labels=["nchoosek"], solution="It is 15."),
        "working": problem_factory(
            "A code is 2 letters then 3 digits. How many codes?", title="Working", labels=["counting-principle"],
            solution=r"$26^2 \cdot 10^3$; not $\binom{26}{2}$, since order matters.",
        ),
        "named": problem_factory("Pick 2 of 6 books.", title="Named", labels=["nchoosek"], solution="We choose 2 of 6: 15 ways."),
    }


def found_titles(run: Any) -> set[str]:
    return set(ExtractedConcept.objects.filter(run=run, concept__slug="nchoosek").values_list("problem__title", flat=True))


def test_a_run_matches_statement_branches_in_the_statement_alone_and_a_moved_branch_makes_a_new_run(
    bank: dict[str, Any], concept_factory: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from concepts.models import Concept

    nchoosek = Concept.objects.get(slug="nchoosek")
    rule_save(concept=nchoosek, pattern=r"\bchoose\b|\\binom")
    with django_capture_on_commit_callbacks(execute=True):
        everywhere = extraction_run_start()
    assert found_titles(everywhere) == {"Asked", "Working", "Named"}
    rule_save(concept=nchoosek, pattern=r"\bchoose\b", statement_pattern=r"\\binom", message="binom: the statement's")
    with django_capture_on_commit_callbacks(execute=True):
        scoped = extraction_run_start()
    assert scoped.pk != everywhere.pk and found_titles(scoped) == {"Asked", "Named"}
    out = io.StringIO()
    call_command("extractor_report", "--json", stdout=out)
    counts = json.loads(out.getvalue())["concepts"]["nchoosek"]
    assert (counts["tp"], counts["fp"], counts["fn"]) == (2, 0, 0)
    rule = ConceptRule.objects.get(concept=nchoosek)
    assert (rule.version, rule.statement_pattern) == (2, r"\\binom")
    assert rule.versions.get(number=2).statement_pattern == r"\\binom" and rule.versions.get(number=1).statement_pattern == ""
    rule_revert(rule=rule, number=1)
    rule.refresh_from_db()
    assert (rule.version, rule.pattern, rule.statement_pattern) == (3, r"\bchoose\b|\\binom", "")


def test_the_editor_saves_both_boxes_and_the_history_shows_the_move(client: Any, alice: Any, bank: dict[str, Any]) -> None:
    client.force_login(alice)
    url = reverse("concepts:rule-edit", args=["nchoosek"])
    client.post(url, {"pattern": "\\bchoose\\b\n\\\\binom", "enabled": "on", "ignore_case": "on", "base_version": "0"})
    saved = client.post(url, {"pattern": "\\bchoose\\b", "statement_pattern": "\\\\binom", "enabled": "on", "ignore_case": "on", "base_version": "1"})
    assert saved.status_code == 302
    rule = ConceptRule.objects.get(concept__slug="nchoosek")
    assert (rule.version, rule.pattern, rule.statement_pattern) == (2, r"\bchoose\b", r"\\binom")
    page = client.get(url).content.decode()
    assert 'name="statement_pattern"' in page and "\\\\binom</textarea>" in page
    assert 'data-saved-statement-pattern="\\\\binom"' in page and "from:#id_statement_pattern" in page
    history = client.get(reverse("concepts:rule-history", args=["nchoosek"])).content.decode()
    assert '<span class="diff-line diff-add">+ [in the statement only:]</span>' in history
    assert "in the statement only: \\\\binom" in history
    # An error in the second box is that box's, with its line and column.
    bad = client.post(url, {"pattern": "\\bchoose\\b", "statement_pattern": "\\\\binom\n(x", "enabled": "on", "base_version": "2"})
    assert bad.status_code == 200 and "missing ), unterminated subpattern (line 2, column 1)" in bad.content.decode()
    assert ConceptRule.objects.get(concept__slug="nchoosek").version == 2
    # A rule may be all statement branches; not both boxes empty.
    assert client.post(url, {"pattern": "", "statement_pattern": "\\\\binom", "enabled": "on", "base_version": "2"}).status_code == 302
    assert ConceptRule.objects.get(concept__slug="nchoosek").pattern == ""
    assert "concepts" in client.get(reverse("concepts:list")).content.decode()


def test_the_live_preview_scores_the_statement_box_and_points_at_its_lines(client: Any, alice: Any, bank: dict[str, Any]) -> None:
    client.force_login(alice)

    def preview(pattern: str, statement_pattern: str) -> str:
        data = {"concept": "nchoosek", "pattern": pattern, "statement_pattern": statement_pattern, "ignore_case": "on"}
        return client.post(reverse("concepts:rule-preview"), data).content.decode()

    everywhere = preview("\\bchoose\\b\n\\\\binom", "")
    assert '<strong id="matched-count">3</strong>' in everywhere and 'id="fp-count">FP 1<' in everywhere
    # The \binom line's one wrong match is a solution's working: the table says so, and where it belongs.
    assert '<span id="branches-in-solution">1 wrong mostly in solutions</span>' in everywhere
    assert "1 of its wrong matches are in a solution only (0 right there)" in everywhere
    # "Move it" previews the rule with that line in the second box, nothing saved (the link works without JavaScript).
    import html
    import re

    move = html.unescape(re.search(r'href="([^"]+)"\s+data-move-to-statement="([^"]+)"', everywhere).group(1))
    moved = client.get(move).content.decode()
    assert '<strong id="matched-count">2</strong>' in moved and 'id="fp-count">FP 0<' in moved
    assert "\\bchoose\\b</textarea>" in moved and "\\\\binom</textarea>" in moved and not ConceptRule.objects.exists()
    scoped = preview("\\bchoose\\b", "\\\\binom")
    assert '<strong id="matched-count">2</strong>' in scoped and 'id="fp-count">FP 0<' in scoped and 'id="fn-count">FN 0<' in scoped
    assert 'id="branch-line-s1"' in scoped and ">statement 1</td>" in scoped
    only = preview("", "\\\\binom")
    assert '<strong id="matched-count">1</strong>' in only and 'id="fn-count">FN 1<' in only
    broken = preview("\\bchoose\\b", "\\\\binom\n[x")
    assert "In the statement-only box: Invalid pattern: line 2, column 1: unterminated character set" in broken


def test_the_api_and_rules_load_exchange_the_statement_pattern(client: Any, alice: Any, bank: dict[str, Any]) -> None:
    client.force_login(alice)
    url = reverse("api-rule-detail", args=["nchoosek"])
    put = client.put(url, {"pattern": "\\bchoose\\b", "statement_pattern": "\\\\binom"}, content_type="application/json")
    assert put.status_code == 200 and put.json()["statement_pattern"] == "\\\\binom"
    detail = client.get(url).json()
    assert detail["statement_pattern"] == "\\\\binom" and detail["versions"][0]["statement_pattern"] == "\\\\binom"
    assert client.put(url, {"pattern": "choose"}, content_type="application/json").json()["statement_pattern"] == ""  # omitted: none
    bad = client.put(url, {"pattern": "choose", "statement_pattern": "(x"}, content_type="application/json")
    assert bad.status_code == 400 and "statement-only pattern" in bad.json()["statement_pattern"][0]
    empty = client.put(url, {"pattern": "", "statement_pattern": ""}, content_type="application/json")
    assert empty.status_code == 400 and "the pattern is empty" in empty.json()["pattern"][0]
    preview = client.post(
        reverse("api-rule-preview"), {"concept": "nchoosek", "pattern": "", "statement_pattern": "\\\\binom"}, content_type="application/json"
    )
    assert preview.status_code == 200 and [m["problem"] for m in preview.json()["matches"]] == [bank["asked"].pk]
    assert rules_load(rules={"nchoosek": {"pattern": "\\bchoose\\b", "statement_pattern": "\\\\binom"}}) == 1
    assert ConceptRule.objects.get(concept__slug="nchoosek").statement_pattern == "\\\\binom"
    with pytest.raises(RuleRejected, match="nchoosek: statement-only pattern"):
        rules_load(rules={"nchoosek": {"pattern": "a", "statement_pattern": "(x"}})


def test_the_rule_analysis_lists_a_statement_line_that_goes_wrong_with_its_statement_wording(
    client: Any, alice: Any, bank: dict[str, Any], problem_factory: Any
) -> None:
    from concepts.models import Concept

    problem_factory(r"Is $\binom{4}{2}$ a count of orderings?", title="Wrong1", labels=["counting-principle"], solution=r"No: $\binom{4}{2}$ ignores order.")
    problem_factory(r"Evaluate $\binom{3}{1}+1$ as a sum.", title="Wrong2", labels=["counting-principle"])
    rule_save(concept=Concept.objects.get(slug="nchoosek"), pattern=r"\bchoose\b", statement_pattern=r"\\binom")
    client.force_login(alice)
    page = client.get(reverse("concepts:rule-analysis")).content.decode()
    assert 'class="line-nchoosek-s1"' in page and "statement-only line 1" in page and "#branch-line-s1" in page
