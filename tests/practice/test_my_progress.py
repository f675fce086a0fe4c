"""Students land on practice after signing in, and see their own progress."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from tests.practice.test_practice import offered


@pytest.mark.django_db
def test_students_land_on_practice_and_staff_on_the_bank(client: Any, sam: Any, alice: Any, charlie: Any) -> None:
    for user, where in ((sam, reverse("practice:practice")), (alice, reverse("problems:list"))):
        response = client.post(reverse("login"), {"username": user.get_username(), "password": "password-123"})
        assert response.status_code == 302 and response.url == reverse("home")
        assert client.get(reverse("home")).url == where
        client.logout()
    client.force_login(charlie)  # no role: the no-role page, as before
    assert client.get(reverse("home")).status_code == 403


@pytest.mark.django_db
def test_my_progress_shows_mastery_recent_attempts_and_what_next(client: Any, sam: Any, course: dict[str, Any]) -> None:
    client.force_login(sam)
    empty = client.get(reverse("practice:my-progress")).content.decode()
    assert "No attempts yet" in empty and 'id="what-next"' in empty and "Practise:" in empty
    first, _ = offered(client)
    client.post(reverse("practice:practice"), {"action": "answer", "answer": "7"})  # wrong
    second, _ = offered(client)
    answer = "20" if second == course["count2"].pk else "10"
    client.post(reverse("practice:practice"), {"action": "answer", "answer": answer})  # right
    page = client.get(reverse("practice:my-progress")).content.decode()
    # Mastery per concept, by name, as a figure in a table and as an SVG bar.
    concepts = page.split('id="concept-mastery"')[1].split("</section>")[0]
    assert "Combinations" in concepts and "<svg" in concepts and 'aria-label="Combinations: ' in concepts
    assert "%" in concepts.split("Combinations")[1].split("</tr>")[0]
    modules = page.split('id="module-mastery"')[1].split("</section>")[0]
    assert "counting" in modules and "<svg" in modules
    recent = page.split('id="recent-attempts"')[1].split("</section>")[0]
    assert recent.count('<tr class="verdict-') == 2 and "verdict-incorrect" in recent and "verdict-correct" in recent
    assert "Practise:" in page and 'id="active-run"' in page
    # Never another student's page: the URL has no id, and staff pages stay closed to students.
    assert client.get(reverse("practice:practice-student", args=[sam.pk])).status_code == 403


@pytest.mark.django_db
def test_my_progress_hides_titles_of_withdrawn_problems(client: Any, sam: Any, course: dict[str, Any]) -> None:
    from problems.models import Problem
    from practice.services import attempt_record

    attempt_record(student=sam, problem=course["count1"], answer="10")
    Problem.objects.filter(pk=course["count1"].pk).update(released=False)
    client.force_login(sam)
    page = client.get(reverse("practice:my-progress")).content.decode()
    assert "Count one" not in page and f"problem #{course['count1'].pk} (withdrawn)" in page


@pytest.mark.django_db
def test_what_next_names_the_problem_practice_has_on_offer(client: Any, sam: Any, course: dict[str, Any]) -> None:
    """After "Show me a similar problem" practice offers Y, not the plain next X: "Practise: …" on my
    progress leads to the practice page, so it names Y and the reason Y was offered, not X."""
    from problems.models import Problem

    client.force_login(sam)
    first, _ = offered(client)
    client.post(reverse("practice:practice"), {"action": "similar"})
    now, reason = offered(client)
    assert now != first
    what_next = client.get(reverse("practice:my-progress")).content.decode().split('id="what-next"')[1].split("</section>")[0]
    practise = what_next.split('id="practise-next">')[1].split("</a>")[0]
    assert Problem.objects.get(pk=now).title in practise and Problem.objects.get(pk=first).title not in practise
    assert reason.split("</strong>")[1].strip() in what_next and "Similar to" in reason  # the reason it was offered
