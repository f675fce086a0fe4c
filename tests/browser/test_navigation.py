"""The back button after htmx list updates, and a session that expires in the middle of an edit."""

from __future__ import annotations

import re
from typing import Any

import pytest

pytestmark = pytest.mark.django_db(transaction=True)


def test_back_and_forward_after_a_filter_keep_the_page_whole_and_the_boxes_filled(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any
) -> None:
    problem_factory("Choose a committee of 3 from 10 people: $\\binom{10}{3}$ ways.", title="Committee $\\binom{10}{3}$")
    problem_factory("Roll two dice and find $P(X+Y=7)$.", title="Dice sum")
    login("alice")
    page.click("#id_q")
    page.keyboard.type("committee")  # typed keys: a user activation, so the pushed entry is not skipped by Back
    page.wait_for_selector("#problem-results .problem-link:text-is('Dice sum')", state="detached")
    assert "q=committee" in page.url

    # Leave for a problem page by a plain link, then come back: the full page (not the cached
    # fragment), styled, with math typeset and the search box saying what the list shows.
    page.click("#problem-results .problem-link")
    page.wait_for_selector("#problem-text .katex")
    page.go_back()
    page.wait_for_selector("#problem-results .problem-link .katex")
    assert page.locator("header.topbar").count() == 1 and page.locator("#id_q").input_value() == "committee"
    assert page.locator("#problem-results .problem-link").count() == 1
    assert "$" not in page.locator("#problem-results").inner_text()

    # Back once more, to the unfiltered list (htmx's history): the box is empty again.
    page.go_back()
    page.wait_for_selector("#problem-results .problem-link:text-is('Dice sum')")
    assert page.url.endswith("/problems/") and page.locator("#id_q").input_value() == ""
    page.go_forward()
    page.wait_for_selector("#problem-results .problem-link:text-is('Dice sum')", state="detached")
    assert page.locator("#id_q").input_value() == "committee"

    # A reload of the pushed URL is the full page with the same state.
    page.reload()
    page.wait_for_selector("#problem-results .problem-link .katex")
    assert page.locator("header.topbar").count() == 1 and page.locator("#id_q").input_value() == "committee"
    assert page.locator("#problem-results .problem-link").count() == 1


def test_a_session_that_expires_during_a_rule_edit_keeps_the_pattern_through_signing_in_again(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any, concept_factory: Any
) -> None:
    from django.contrib.sessions.models import Session

    from concepts.models import ConceptRule

    concept_factory("nchoosek")
    problem_factory("Choose a committee: $\\binom{10}{3}$ ways.", title="Committee", labels=["nchoosek"])
    login("alice")
    page.goto(f"{live_server.url}/concepts/nchoosek/rule/")
    page.fill("#id_pattern", "\\\\binom")
    page.wait_for_selector("#matched-count:text-is('1')")

    Session.objects.all().delete()  # the session expires while the TA is typing
    page.fill("#id_pattern", "\\\\binom|\\bchoose\\b")
    # The preview's request is answered "sign in": the whole page goes to the login page, which
    # brings the TA back to the editor afterwards.
    page.wait_for_url("**/login/?next=%2Fconcepts%2Fnchoosek%2Frule%2F")
    assert page.locator("#rule-preview").count() == 0 and page.locator("h1").inner_text() == "Log in"
    page.fill("#id_username", "alice")
    page.fill("#id_password", "password-123")
    page.click("button[type=submit]")
    page.wait_for_url("**/concepts/nchoosek/rule/")

    # The typed pattern is back (a local draft), said so, and previewed.
    assert page.locator("#id_pattern").input_value() == "\\\\binom|\\bchoose\\b"
    assert "was restored" in page.locator(".draft-note").inner_text()
    page.wait_for_selector("#matched-count:text-is('1')")
    page.click("button:text-is('Save as new version')")
    page.wait_for_selector(".messages li:has-text('Saved the rule')")
    assert ConceptRule.objects.get(concept__slug="nchoosek").pattern == "\\\\binom|\\bchoose\\b"
    # Saved: the draft is gone, so a later visit shows the saved rule with no note.
    page.reload()
    assert page.locator(".draft-note").count() == 0
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('prob2vec-draft:')).length") == 0


def leave_a_draft_and_come_back(page: Any, live_server: Any, login: Any, concept_factory: Any, boxes: dict[str, str]) -> None:
    """Alice types into the nchoosek rule's boxes, leaves without saving, and opens the rule again."""
    concept_factory("nchoosek")
    login("alice")
    page.goto(f"{live_server.url}/concepts/nchoosek/rule/")
    for box, text in boxes.items():
        page.fill(box, text)
    page.goto(f"{live_server.url}/problems/")  # leaves without saving (the prompt is dismissed)
    page.goto(f"{live_server.url}/concepts/nchoosek/rule/")


def test_a_discarded_draft_gives_back_the_saved_pattern(
    page: Any, live_server: Any, login: Any, alice: Any, concept_factory: Any
) -> None:
    leave_a_draft_and_come_back(page, live_server, login, concept_factory, {"#id_pattern": "draft only"})
    assert page.locator("#id_pattern").input_value() == "draft only"
    page.click(".draft-note button:text-is('Discard it')")
    assert page.locator("#id_pattern").input_value() == ""
    page.reload()
    assert page.locator("#id_pattern").input_value() == "" and page.locator(".draft-note").count() == 0


def test_a_restored_draft_says_which_rule_it_is_of_and_can_be_discarded(
    page: Any, live_server: Any, login: Any, alice: Any, concept_factory: Any
) -> None:
    leave_a_draft_and_come_back(
        page, live_server, login, concept_factory, {"#id_pattern": "draft only", "#id_statement_pattern": "statement draft"}
    )
    notes = page.locator(".draft-note")
    assert notes.count() == 2
    # The note names the rule and the box, in plain words (not the label's help text), and says what happened.
    when = r"\(from \d\d:\d\d(\s?[AP]M)?\)"
    for k, part in enumerate(["pattern", "statement-only branches"]):
        said = notes.nth(k).inner_text()
        assert re.fullmatch(rf"Your unsaved draft of the nchoosek rule's {part} {when} was restored; it is not saved yet\. Discard it", said), said
    notes.nth(0).locator("button:text-is('Discard it')").click()  # the pattern's note
    assert page.input_value("#id_pattern") == "" and page.input_value("#id_statement_pattern") == "statement draft"
    assert notes.count() == 1


def test_the_skip_link_is_the_first_tab_stop_and_focus_shows(page: Any, live_server: Any, login: Any, alice: Any) -> None:
    login("alice")
    page.goto(f"{live_server.url}/concepts/")  # a page with no autofocus field
    page.keyboard.press("Tab")
    skip = page.locator("a.skip-link")
    assert skip.evaluate("e => e === document.activeElement")
    box = skip.bounding_box()
    assert box is not None and box["y"] >= 0  # moved on screen when focused
    assert skip.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"
    page.keyboard.press("Enter")
    assert page.locator("#main").evaluate("e => e === document.activeElement")
    # Every control reached by Tab shows a visible outline.
    page.keyboard.press("Tab")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"


def test_on_a_phone_the_menu_button_opens_the_navigation(browser: Any, live_server: Any, alice: Any) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 740})
    page = context.new_page()
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", "password-123")
    page.click("button[type=submit]")
    page.wait_for_url("**/problems/")
    assert not page.locator("#site-nav").is_visible()
    page.click(".nav-toggle")
    assert page.locator("#site-nav").is_visible() and page.locator(".nav-toggle").get_attribute("aria-expanded") == "true"
    page.click("#site-nav summary:text-is('Concepts')")
    page.click("#site-nav a:text-is('Concepts & rules')")
    page.wait_for_url("**/concepts/")
    assert page.evaluate("document.scrollingElement.scrollWidth <= document.scrollingElement.clientWidth")
    context.close()


def test_a_problem_edit_kept_as_a_draft_is_dropped_once_saved(
    page: Any, live_server: Any, login: Any, alice: Any, problem_factory: Any
) -> None:
    from problems.models import Problem

    problem = problem_factory("Choose 2 of 5.", title="Committee")
    login("alice")
    edit = f"{live_server.url}/problems/{problem.pk}/edit/"
    page.goto(edit)
    page.fill("#id_text", "Choose 3 of 7.")
    page.goto(f"{live_server.url}/problems/")  # leaves without saving
    page.goto(edit)
    assert page.locator("#id_text").input_value() == "Choose 3 of 7."
    assert "Your unsaved draft of this problem's text" in page.locator(".draft-note").inner_text()
    page.fill("#id_text", "Choose 3 of 8.")
    page.click("form button[type=submit]:has-text('Save')")
    page.wait_for_selector(".messages li.saved")
    assert Problem.objects.get(pk=problem.pk).text == "Choose 3 of 8."
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('prob2vec-draft:')).length") == 0
    page.goto(edit)
    assert page.locator("#id_text").input_value() == "Choose 3 of 8." and page.locator(".draft-note").count() == 0
