"""The instructors' picture of the class: mastery heatmaps, the most failed problems, stuck students."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import reverse

from practice.selectors import class_progress
from practice.services import attempt_record


def answer(student: Any, problem: Any, text: str = "", report: str = "") -> None:
    attempt_record(student=student, problem=problem, answer=text, self_report=report)


@pytest.fixture
def practised(course: dict[str, Any], sam: Any, make_user: Any) -> dict[str, Any]:
    olga, newbie = make_user("olga", "student"), make_user("nina", "student")
    answer(sam, course["count1"], "7")  # wrong
    answer(sam, course["count2"], "20")  # right
    answer(sam, course["binom"], "0.375")  # right
    for problem, wrong in (("count1", "1"), ("count2", "2"), ("binom", "3"), ("count1", "4")):
        answer(olga, course[problem], wrong)
    return {"sam": sam, "olga": olga, "nina": newbie, **course}


def cells(html: str, username: str) -> list[str]:
    row = re.search(rf"<tr[^>]*><th><a[^>]*>{username}</a>.*?</tr>", html, re.S).group(0)
    return re.findall(r'<td class="heat"[^>]*>([^<]*)</td>', row)


@pytest.mark.django_db
def test_the_class_picture(practised: dict[str, Any]) -> None:
    progress = class_progress()
    by_name = {s.student.username: s for s in progress.students}
    assert by_name.keys() == {"sam", "olga", "nina"}
    sam, olga, nina = by_name["sam"], by_name["olga"], by_name["nina"]
    assert (sam.progress.attempts, sam.progress.solved, sam.progress.failed) == (3, 2, 1)
    assert sam.concepts["binomial-distribution"] == 1.0 and sam.concepts["nchoosek"] > 0.9
    assert olga.concepts["nchoosek"] == 0.0 and nina.concepts == {} and nina.modules == {}
    # Projected through similarity: sam's counting module is high, olga's low; nobody tried anything like Bayes.
    assert sam.modules["counting"] > 0.5 > olga.modules["counting"] and "bayes" not in sam.modules
    assert sam.modules["counting"] - olga.modules["counting"] > 0.3
    assert progress.class_modules["counting"] == pytest.approx((sam.modules["counting"] + olga.modules["counting"]) / 2)
    assert [s.student.username for s in progress.stuck] == ["olga"] and "4 tries in a row without a success" in olga.progress.stuck
    top = progress.failed_problems[0]
    assert top["problem_id"] == practised["count1"].pk and (top["failures"], top["tries"], top["students"]) == (3, 3, 2)
    assert [m.name for m in progress.modules] == ["bayes", "counting"]  # open for practice, by (order, name); "later" is closed


@pytest.mark.django_db
def test_the_dashboard_page(client: Any, alice: Any, practised: dict[str, Any]) -> None:
    client.force_login(alice)
    html = client.get(reverse("practice:practice-class")).content.decode()
    assert 'id="stuck"' in html and 'olga</a>: <span class="math">4 tries in a row' in html
    sam_cells, olga_cells = cells(html, "sam"), cells(html, "olga")
    assert len(sam_cells) == 2 and sam_cells[0] == "·" and int(sam_cells[1]) > 50 > int(olga_cells[1])  # bayes, counting
    assert "Class mean" in html and "Count one" in html.split('id="failed"')[1]
    by_concept = client.get(reverse("practice:practice-class"), {"by": "concepts"}).content.decode()
    assert "<span>nchoosek</span>" in by_concept and "<span>binomial-distribution</span>" in by_concept
    assert cells(by_concept, "olga")[0] == "0" and cells(by_concept, "nina") == ["·", "·"]

    page = client.get(reverse("practice:practice-student", args=[practised["olga"].pk])).content.decode()
    assert "Stuck: 4 tries in a row" in page and page.count('class="verdict-incorrect"') == 4
    assert 'id="next"' in page and "You did not solve" in page
    assert client.get(reverse("practice:practice-student", args=[999999])).status_code == 404


@pytest.mark.django_db
def test_only_course_staff_see_the_class(client: Any, sam: Any, alice: Any, hana: Any, ivan: Any, practised: dict[str, Any]) -> None:
    url, student_url = reverse("practice:practice-class"), reverse("practice:practice-student", args=[sam.pk])
    assert client.get(url).status_code == 302  # to the login page
    client.force_login(sam)
    assert client.get(url).status_code == 403 and client.get(student_url).status_code == 403
    assert "Class progress" not in client.get(reverse("practice:practice")).content.decode()
    for staff in (alice, hana, ivan):
        client.force_login(staff)
        assert client.get(url).status_code == 200 and client.get(student_url).status_code == 200
