"""A TA brings a weak rule up with the editor: missed problems, a suggested branch, the diff."""

from __future__ import annotations

from typing import Any

import pytest

from concepts.models import ConceptRule
from concepts.services import rule_save

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def weak_rule(problem_factory: Any, concept_factory: Any, alice: Any) -> Any:
    concept = concept_factory("sample-mean", name="Sample mean")
    concept_factory("dice")
    problem_factory("Find the sample mean of 3, 5, 7.", title="Found", labels=["sample-mean"])
    problem_factory("Compute the average of $x_1 = 2$ and $x_2 = 4$.", title="Average one", labels=["sample-mean"])
    problem_factory("What is the average of these marks: $7, 8$?", title="Average two", labels=["sample-mean"])
    problem_factory("Roll a die until a six.", title="Dice", labels=["dice"])
    return rule_save(concept=concept, pattern=r"\bsample mean\b", user=alice)


def test_a_ta_appends_a_suggested_branch_sees_fn_fall_saves_and_sees_the_diff(
    page: Any, live_server: Any, login: Any, weak_rule: Any
) -> None:
    login("alice")
    page.goto(f"{live_server.url}/concepts/sample-mean/rule/")
    # The missed problems are listed beside the matches, rendered (KaTeX) with a link to label each.
    assert "FN 2" in page.locator("#preview-counts").inner_text()
    missed = page.locator("#preview-missed")
    assert "Missed (FN): 2" in missed.inner_text() and "Average one" in missed.inner_text()
    missed.locator(".katex").first.wait_for()
    assert missed.locator("a", has_text="label").count() == 2

    suggestion = page.locator("#suggested-branches li").first
    assert "average" in suggestion.inner_text() and "+2 FN recovered" in suggestion.inner_text()
    suggestion.locator("a.append-branch").click()
    assert page.input_value("#id_pattern") == "\\bsample mean\\b\n\\baverage\\b"  # a new line: one branch per line
    page.wait_for_selector("#fn-count:text-is('FN 0')")  # the CSP refuses wait_for_function's eval
    assert "Missed (FN): 0" in page.locator("#preview-missed").inner_text()
    assert page.url.endswith("/concepts/sample-mean/rule/")  # appended in place, not a page load

    page.fill("#id_message", "average")
    page.click("button:text('Save as new version')")
    page.wait_for_selector(".messages li")
    assert ConceptRule.objects.get(concept__slug="sample-mean").pattern == r"\bsample mean\b|\baverage\b"  # saved joined
    assert page.input_value("#id_pattern") == "\\bsample mean\\b\n\\baverage\\b"  # and shown a branch per line again
    page.click("text=history")
    diff = page.locator("#version-diff")
    assert "Version 1 → version 2" in diff.inner_text()
    assert page.locator("#version-diff .diff-add").inner_text() == r"+ \baverage\b"


def test_the_pattern_box_grows_an_empty_pattern_clears_the_preview_and_leaving_unsaved_warns(
    page: Any, live_server: Any, login: Any, weak_rule: Any, dismissed_dialogs: list[str]
) -> None:
    login("alice")
    page.goto(f"{live_server.url}/concepts/sample-mean/rule/")
    box = page.locator("#id_pattern")
    assert "monospace" in box.evaluate("el => getComputedStyle(el).fontFamily") or "mono" in box.evaluate(
        "el => getComputedStyle(el).fontFamily"
    )
    short = box.evaluate("el => el.getBoundingClientRect().height")
    box.fill("|".join(rf"\bphrase{i}\b" for i in range(60)))
    page.wait_for_selector("#matched-count:text-is('0')")
    tall = box.evaluate("el => el.getBoundingClientRect().height")
    assert tall > 2 * short and box.evaluate("el => el.scrollHeight <= el.clientHeight + 2")

    box.fill("")
    page.wait_for_selector("#preview-empty")
    assert page.locator("#matched-count").count() == 0 and page.locator("#preview-missed").count() == 0

    # Leaving with unsaved changes asks first; dismissing the prompt stays on the page.
    dialogs = dismissed_dialogs
    page.click("text=← Concepts", no_wait_after=True)
    page.wait_for_timeout(300)
    assert dialogs == ["beforeunload"] and page.url.endswith("/concepts/sample-mean/rule/")

    # Back to the saved pattern: nothing to lose, no prompt.
    box.fill(r"\bsample mean\b")
    page.click("text=← Concepts")
    page.wait_for_url(f"{live_server.url}/concepts/")
    assert dialogs == ["beforeunload"]


def test_a_line_more_often_wrong_than_right_on_the_analysis_page_opens_at_its_row_in_the_editor(
    page: Any, live_server: Any, login: Any, weak_rule: Any, concept_factory: Any
) -> None:
    # dice: line 1 finds the dice problem; line 2 the sample-mean one (wrong); line 3 both averages (wrong).
    rule_save(concept=concept_factory("dice"), pattern=r"\bdie\b|\bsample mean\b|\baverage\b")
    login("alice")
    page.set_viewport_size({"width": 1000, "height": 360})  # short: the Branches table is below the fold
    page.goto(f"{live_server.url}/concepts/analysis/")
    rows = page.locator("#analysis-lines tbody tr")
    assert rows.count() == 2 and "line 3" in rows.first.inner_text() and "line 2" in rows.nth(1).inner_text()
    assert rows.first.locator(".wrong-on a[title='Average one']").count() == 1  # its wrong matches, to read first
    rows.first.get_by_role("link", name="dice").click()
    page.wait_for_url("**/concepts/dice/rule/?line=3*")
    row = page.locator("#branch-line-3")
    assert "chosen" in (row.get_attribute("class") or "") and row.get_attribute("aria-current") == "true"
    box = row.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 360  # scrolled to it
    assert page.evaluate("window.scrollY") > 0
    assert "chosen" not in (page.locator("#branch-line-2").get_attribute("class") or "")
    assert page.url.endswith("?line=3#branch-line-3")


def test_on_a_phone_a_listed_line_shows_its_pattern_and_wrong_wording_full_width_with_its_figures_below(
    page: Any, live_server: Any, login: Any, weak_rule: Any, concept_factory: Any
) -> None:
    rule_save(concept=concept_factory("dice"), pattern=r"\bdie\b|\bsample mean\b|\baverage\b")
    login("alice")
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"{live_server.url}/concepts/analysis/")
    row = page.locator("#analysis-lines tbody tr").first
    pattern, right = row.locator("td.pattern-cell"), row.locator("td[data-label=Right]")
    assert "Compute the average of" in pattern.locator("q").first.inner_text()  # the wording it matched
    assert pattern.locator("mark").first.inner_text() == "average"
    cell, figures = pattern.bounding_box(), right.bounding_box()
    assert cell is not None and figures is not None
    assert cell["width"] > 300  # the row's width, not a column's
    assert figures["y"] >= cell["y"] + cell["height"] - 1  # the figures sit below it, each named
    assert page.evaluate("getComputedStyle(document.querySelector('#analysis-lines td[data-label=Right]'), '::before').content") == '"Right "'
