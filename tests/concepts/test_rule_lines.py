"""The rule editor holds a rule one branch per line and saves the one-line pattern; rules may be
up to 4,000 characters (stop 29: three starter rules stood within 50 characters of the old 2,000)."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.urls import reverse

from concepts.extraction import MAX_PATTERN_LENGTH
from concepts.models import ConceptRule, ConceptRuleVersion
from concepts.services import rule_save


@pytest.fixture
def nchoosek(concept_factory: Any, problem_factory: Any) -> Any:
    concept = concept_factory("nchoosek")
    problem_factory("Choose a committee: $\\binom{10}{3}$ ways.", title="Committee", labels=["nchoosek"])
    problem_factory("In how many ways can we choose 2 of 5?", title="Words", labels=["nchoosek"])
    problem_factory("Roll a die twice.", title="Dice")
    return concept


def box(page: str) -> str:
    """The pattern box's text as the browser holds it (Django adds one leading line break)."""
    raw = re.search(r'<textarea name="pattern"[^>]*>(.*?)</textarea>', page, re.S).group(1)
    return html.unescape(raw.removeprefix("\n"))


def save(client: Any, slug: str, typed: str, **extra: Any) -> Any:
    page = client.get(reverse("concepts:rule-edit", args=[slug])).content.decode()
    base = re.search(r'name="base_version" value="(\d+)"', page).group(1)
    data = {"pattern": typed, "ignore_case": "on", "enabled": "on", "base_version": base, **extra}
    return client.post(reverse("concepts:rule-edit", args=[slug]), data)


def test_the_box_shows_a_branch_per_line_and_saves_them_joined(client: Any, alice: Any, nchoosek: Any) -> None:
    rule_save(concept=nchoosek, pattern=r"\\binom|\bchoose\b", user=alice)
    client.force_login(alice)
    page = client.get(reverse("concepts:rule-edit", args=["nchoosek"])).content.decode()
    assert box(page) == "\\\\binom\n\\bchoose\\b"
    # The unsaved-changes check compares the box with the saved rule in the same form.
    assert 'data-saved-pattern="\\\\binom\n\\bchoose\\b"' in page

    # A browser sends CRLF; blank lines are nothing.
    assert save(client, "nchoosek", "\\\\binom\r\n\\bchoose\\b\r\n\r\n\\bways\\b\r\n").status_code == 302
    rule = ConceptRule.objects.get(concept=nchoosek)
    assert (rule.pattern, rule.version) == (r"\\binom|\bchoose\b|\bways\b", 2)
    assert box(client.get(reverse("concepts:rule-edit", args=["nchoosek"])).content.decode()) == "\\\\binom\n\\bchoose\\b\n\\bways\\b"
    # Saving the lines as shown changes nothing: no new version.
    save(client, "nchoosek", "\\\\binom\r\n\\bchoose\\b\r\n\\bways\\b")
    assert ConceptRule.objects.get(concept=nchoosek).version == 2 and ConceptRuleVersion.objects.count() == 2
    # What the API and the stored rule hold is still the one-line pattern.
    assert client.get(reverse("api-rule-detail", args=["nchoosek"])).json()["pattern"] == r"\\binom|\bchoose\b|\bways\b"


def test_a_line_that_is_not_a_pattern_is_named_and_nothing_is_saved(client: Any, alice: Any, nchoosek: Any) -> None:
    rule_save(concept=nchoosek, pattern=r"\\binom", user=alice)
    client.force_login(alice)
    response = save(client, "nchoosek", "\\\\binom\n\\b(choose\nways)\\b")
    assert response.status_code == 200
    assert "Invalid pattern: line 2, column 3: missing ), unterminated subpattern" in response.content.decode()
    assert box(response.content.decode()) == "\\\\binom\n\\b(choose\nways)\\b"  # what was typed is kept
    # An error only the joined pattern has is placed on its line too.
    response = save(client, "nchoosek", "\\\\binom\n(?i)choose")
    assert "global flags not at the start of the expression (line 2, column 1)" in response.content.decode()
    assert ConceptRule.objects.get(concept=nchoosek).version == 1


def test_a_rule_longer_than_the_old_limit_saves_and_the_new_limit_is_said(client: Any, alice: Any, nchoosek: Any) -> None:
    client.force_login(alice)
    branches = [rf"\bword{i}\b" for i in range(250)] + [r"\bchoose\b"]
    assert save(client, "nchoosek", "\n".join(branches)).status_code == 302
    rule = ConceptRule.objects.get(concept=nchoosek)
    assert 2000 < len(rule.pattern) <= MAX_PATTERN_LENGTH and rule.pattern.endswith(r"|\bchoose\b")
    too_long = "\n".join(rf"\bword{i}\b" for i in range(1000))
    response = save(client, "nchoosek", too_long)
    assert f"at most {MAX_PATTERN_LENGTH} characters" in response.content.decode()
    assert ConceptRule.objects.get(concept=nchoosek).version == 1


def test_the_live_preview_reads_the_lines_and_places_errors_on_them(client: Any, alice: Any, nchoosek: Any) -> None:
    client.force_login(alice)

    def preview(typed: str, url: str = "concepts:rule-preview") -> str:
        return client.post(reverse(url), {"concept": "nchoosek", "pattern": typed, "ignore_case": "on"}).content.decode()

    assert re.search(r'id="matched-count">2<', preview("\\\\binom\n\\bchoose\\b"))
    bad_line = preview("\\\\binom\n(choose")
    assert 'id="preview-error" data-announce>Invalid pattern: line 2, column 1: missing ), unterminated subpattern' in bad_line
    # An error only the joined pattern has: its line (blank line 2 is no branch) and column, not a position in the joined text.
    joined_error = preview("\\\\binom\n\n(?i)choose")
    assert "global flags not at the start of the expression (line 3, column 1)" in joined_error
    # The suggestions beside it say only that the pattern is invalid (the preview says why).
    suggestions = preview("\\\\binom\n(choose", url="concepts:rule-suggestions")
    assert "No suggestions for an invalid pattern." in suggestions and "line 2" not in suggestions


def test_the_preview_shows_what_each_line_matches_right_and_wrong_and_alone(
    client: Any, alice: Any, nchoosek: Any, concept_factory: Any, problem_factory: Any
) -> None:
    concept_factory("dice")
    die = problem_factory("Choose a die and roll it.", title="Choose a die", labels=["dice"])
    client.force_login(alice)
    typed = "\\\\binom\n\\bchoose\\b\n\n\\bzzz\\b\n\\bdie\\b"
    page = client.post(reverse("concepts:rule-preview"), {"concept": "nchoosek", "pattern": typed, "ignore_case": "on"}).content.decode()
    table = re.search(r'<details class="preview-list" id="preview-branches" open>(.*?)</details>', page, re.S).group(1)
    # Not LaTeX: KaTeX must leave the branches alone (`\\(` in a branch would read as math).
    assert 'class="list small branch-stats no-math"' in table and "<code>\\bchoose\\b</code>" in table
    assert "<strong>Branches: 4</strong>" in table and "1 more often wrong than right" in table and "1 match no problem here" in table
    rows = [
        [" ".join(re.sub(r"<[^>]+>", "", cell).split()) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>")[1], re.S)
    ]
    # line, branch, matches, right, wrong, only it finds
    assert rows == [
        ["1", "\\\\binom", "1", "1", "0", "0"],  # the committee: `choose` finds it too
        ["2", f"\\bchoose\\b wrong on #{die.pk}", "3", "2", "1", "1"],  # committee, words (only it), the die (wrong, linked)
        ["3", "\\bzzz\\b", "0", "0", "0", "0"],
        ["4", f"\\bdie\\b wrong on #{die.pk}", "2", "0", "1", "0"],  # the die (wrong) and the unlabelled dice problem
    ]
    assert f'<a href="{reverse("problems:detail", args=[die.pk])}" title="Choose a die">#{die.pk}</a>' in table
    assert re.search(r'<tr id="branch-line-4" class="bad">\s*<td>4</td>', table) and re.search(r'<tr id="branch-line-3" class="muted">\s*<td>3</td>', table)
    # One branch, or a pattern the backtracking engine runs: no table.
    assert 'id="preview-branches"' not in client.post(reverse("concepts:rule-preview"), {"concept": "nchoosek", "pattern": "\\bchoose\\b", "ignore_case": "on"}).content.decode()
    assert 'id="preview-branches"' not in client.post(reverse("concepts:rule-preview"), {"concept": "nchoosek", "pattern": "(choose)|\\1x", "ignore_case": "on"}).content.decode()
