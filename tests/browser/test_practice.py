"""A student practises in Chromium: a wrong answer brings a similar problem with its reason, a right one a new concept."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

ANSWERS = {"Count one": "10", "Count two": "20", "Binomial": "0.375"}


def test_a_student_is_offered_a_similar_problem_after_a_miss_and_a_new_concept_after_a_success(
    page: Any, live_server: Any, login: Any, sam: Any, course: dict[str, Any]
) -> None:
    from practice.models import Attempt

    login("sam")
    assert page.url.endswith("/practice/")  # students land on practice
    assert "first problem" in page.inner_text("#reason")
    first = page.inner_text("#practice-problem h2")
    assert first in ("Count one", "Count two")

    page.fill("#answer", "7")
    page.press("#answer", "Enter")
    assert "Not quite." in page.inner_text("#feedback")
    page.click("#next-problem")
    second = page.inner_text("#practice-problem h2")
    reason = page.inner_text("#reason")
    assert second == ({"Count one", "Count two"} - {first}).pop()
    assert f"You did not solve “{first}”" in reason and "same ideas" in reason and "similarity" in reason

    page.fill("#answer", ANSWERS[second])
    page.click("button[value=answer]")
    assert "Correct!" in page.inner_text("#feedback")
    page.click("#next-problem")
    assert page.inner_text("#practice-problem h2") == "Binomial"
    assert f"You solved “{second}”; this one adds Binomial distribution." in page.inner_text("#reason")
    assert list(Attempt.objects.filter(student=sam).values_list("verdict", flat=True)) == ["incorrect", "correct"]


def test_a_refused_answer_is_said_on_the_answer_box(page: Any, live_server: Any, login: Any, sam: Any, course: dict[str, Any]) -> None:
    """Check with an empty box reloads the page with "type an answer, or say whether you solved the
    problem" above the form, and the focus back in the answer box (autofocus): a screen reader read the
    box's label and nothing else, since the message was tied to nothing. The box now names the message
    as its description and is marked invalid."""
    from playwright.sync_api import expect

    from practice.models import Attempt

    login("sam")
    page.press("#answer", "Enter")
    page.wait_for_selector("#practice-form .errorlist")
    message = page.inner_text("#practice-form .errorlist")
    assert "type an answer" in message
    answer = page.locator("#answer")
    assert page.evaluate("document.activeElement.id") == "answer"
    expect(answer).to_have_accessible_description(message)
    expect(answer).to_have_attribute("aria-invalid", "true")
    assert not Attempt.objects.filter(student=sam).exists()
