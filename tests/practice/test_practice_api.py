"""The practice API for other front ends: GET /api/students/<id>/next and POST /api/attempts, token auth."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from practice.models import Attempt

NEXT_KEYS = {"student", "embedding_run", "problem", "kind", "reason", "because_of", "new_concepts", "similarity", "estimated_success"}


def token_client(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@pytest.mark.django_db
def test_a_student_with_a_token_practises_through_the_api(sam: Any, course: dict[str, Any]) -> None:
    api = token_client(sam)
    first = api.get(f"/api/students/{sam.pk}/next")
    assert first.status_code == 200
    body = first.json()
    assert body.keys() == NEXT_KEYS and body["student"] == sam.pk and body["kind"] == "start"
    assert body["problem"]["id"] in (course["count1"].pk, course["count2"].pk)
    assert body["problem"].keys() == {"id", "title", "text", "module", "url"} and body["problem"]["module"] == "counting"

    wrong = api.post("/api/attempts", {"problem": body["problem"]["id"], "answer": "7", "reason": body["reason"]}, format="json")
    assert wrong.status_code == 201
    attempt = wrong.json()
    assert attempt["verdict"] == "incorrect" and attempt["outcome"] == 0.0 and attempt["check"]["verdict"] == "incorrect"
    assert attempt["check"]["read"] and attempt["check"]["read"] in attempt["answer"].replace(",", ";")
    stored = Attempt.objects.get(pk=attempt["id"])
    assert stored.student == sam and stored.recommended_because == body["reason"]
    retry = attempt["next"]
    assert retry["kind"] == "retry-similar" and retry["because_of"] == body["problem"]["id"] and "You did not solve" in retry["reason"]

    answer = "20" if retry["problem"]["id"] == course["count2"].pk else "10"
    right = api.post("/api/attempts", {"problem": retry["problem"]["id"], "answer": answer}, format="json").json()
    assert right["verdict"] == "correct"
    assert right["next"]["problem"]["id"] == course["binom"].pk and right["next"]["kind"] == "new-concept"
    assert right["next"]["new_concepts"] == ["binomial-distribution"]
    # The same answer through GET: the API is stateless, it agrees with the reply to the POST.
    assert api.get(f"/api/students/{sam.pk}/next").json()["problem"]["id"] == course["binom"].pk

    # Similar to a counting problem: the binomial one shares its concept. (From the binomial problem the
    # only open candidate left is Bayes, which shares nothing: its cosine's sign is the skip-gram's draw.)
    similar = api.get(f"/api/students/{sam.pk}/next", {"mode": "similar", "current": course["count1"].pk}).json()
    assert similar["kind"] == "similar" and similar["problem"]["id"] == course["binom"].pk


@pytest.mark.django_db
def test_self_reports_skips_and_clear_refusals(sam: Any, course: dict[str, Any]) -> None:
    api = token_client(sam)
    bayes = course["bayes"].pk
    refused = api.post("/api/attempts", {"problem": bayes}, format="json")
    assert refused.status_code == 400 and "say whether you solved" in refused.json()["detail"]
    assert api.post("/api/attempts", {"problem": bayes, "self_report": "maybe"}, format="json").status_code == 400
    assert api.post("/api/attempts", {"answer": "1"}, format="json").json().keys() == {"problem"}
    assert api.post("/api/attempts", {"problem": course["hidden"].pk, "answer": "1"}, format="json").status_code == 404  # unreleased
    assert api.get(f"/api/students/{sam.pk}/next", {"mode": "sideways"}).status_code == 400
    assert api.get(f"/api/students/{sam.pk}/next", {"mode": "similar"}).status_code == 400
    assert Attempt.objects.count() == 0  # nothing half-written

    partly = api.post("/api/attempts", {"problem": bayes, "self_report": "partly"}, format="json").json()
    assert partly["verdict"] == "partly" and partly["outcome"] == 0.5 and partly["check"] is None
    skipped = api.post("/api/attempts", {"problem": course["count1"].pk, "skip": True}, format="json").json()
    assert skipped["verdict"] == "skipped" and skipped["next"]["problem"]["id"] != course["count1"].pk


@pytest.mark.django_db
def test_who_may_act_for_whom(sam: Any, make_user: Any, alice: Any, ivan: Any, course: dict[str, Any]) -> None:
    other = make_user("olga", "student")
    # Anonymous, and a bad token, are refused.
    assert APIClient().get(f"/api/students/{sam.pk}/next").status_code in (401, 403)
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert bad.get(f"/api/students/{sam.pk}/next").status_code == 401
    # A student sees only their own next problem and posts only their own attempts.
    assert token_client(sam).get(f"/api/students/{other.pk}/next").status_code == 403
    assert token_client(sam).post("/api/attempts", {"problem": course["count1"].pk, "answer": "10", "student": other.pk}, format="json").status_code == 403
    # A TA reads any student's next problem but records attempts only as themselves.
    assert token_client(alice).get(f"/api/students/{sam.pk}/next").status_code == 200
    assert token_client(alice).get("/api/students/999999/next").status_code == 404
    assert token_client(alice).post("/api/attempts", {"problem": course["count1"].pk, "answer": "10", "student": sam.pk}, format="json").status_code == 403
    assert not Attempt.objects.exists()
    # An instructor (or the LMS account holding practice.add_attempt) records attempts for a student.
    made = token_client(ivan).post("/api/attempts", {"problem": course["count1"].pk, "answer": "10", "student": sam.pk}, format="json")
    assert made.status_code == 201 and Attempt.objects.get().student == sam and made.json()["next"]["student"] == sam.pk


@pytest.mark.django_db
def test_tokens_come_from_username_and_password(sam: Any) -> None:
    reply = APIClient().post("/api/token/", {"username": "sam", "password": "password-123"}, format="json")
    assert reply.status_code == 200 and reply.json()["token"] == Token.objects.get(user=sam).key
    assert APIClient().post("/api/token/", {"username": "sam", "password": "wrong"}, format="json").status_code == 400
    call_command("drf_create_token", "sam", "--reset", stdout=__import__("io").StringIO())
    assert Token.objects.get(user=sam).key != reply.json()["token"]


@pytest.mark.django_db
def test_nothing_left_is_a_clear_reply(sam: Any, problem_factory: Any) -> None:
    problem_factory("Closed.", module="closed", labels=["nchoosek"])
    body = token_client(sam).get(f"/api/students/{sam.pk}/next").json()
    assert body.keys() == NEXT_KEYS and body["problem"] is None and body["kind"] == "done"


@pytest.mark.django_db
def test_next_skips_the_recent_problems_a_client_names(sam: Any, course: dict[str, Any]) -> None:
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(sam)
    first = api.get(f"/api/students/{sam.pk}/next").json()["problem"]["id"]
    similar = api.get(f"/api/students/{sam.pk}/next", {"mode": "similar", "current": first, "recent": str(first)}).json()
    again = api.get(
        f"/api/students/{sam.pk}/next", {"mode": "similar", "current": similar["problem"]["id"], "recent": f"{first},{similar['problem']['id']}"}
    ).json()
    assert again["problem"]["id"] not in (first, similar["problem"]["id"])
    assert api.get(f"/api/students/{sam.pk}/next", {"recent": "1,x"}).status_code == 400


@pytest.mark.django_db
def test_more_than_50_recent_ids_keep_the_newest(sam: Any, course: dict[str, Any]) -> None:
    # `recent` is oldest first: past 50 ids, the ones dropped must be the oldest, not the problem just shown.
    api = token_client(sam)
    first = api.get(f"/api/students/{sam.pk}/next").json()["problem"]["id"]
    older = [str(900_000 + i) for i in range(50)]  # ids of no problem, shown long ago
    body = api.get(f"/api/students/{sam.pk}/next", {"recent": ",".join([*older, str(first)])}).json()
    assert body["problem"]["id"] != first


@pytest.mark.django_db
def test_a_request_reads_a_fixed_number_of_rows_whatever_the_history(
    sam: Any, course: dict[str, Any], settings: Any, django_assert_max_num_queries: Any
) -> None:
    """GET next and POST attempt cost the same queries after 1 attempt as after 12 (no query per attempt
    or per problem: the bank comes from process memory, the history in one query)."""
    settings.PRACTICE_BANK_RECHECK_SECONDS = settings.PRACTICE_BANK_COUNT_SECONDS = 600  # as in production: one check per few seconds
    api = token_client(sam)
    keys = iter(range(100))  # each its own submission (the same self-report again would be a duplicate, not stored)

    def attempt(problem: int) -> Any:
        made = api.post("/api/attempts", {"problem": problem, "self_report": "not_solved", "client_key": f"k{next(keys)}"}, format="json")
        assert made.status_code == 201
        return made

    counts = []
    for history in (1, 12):
        while Attempt.objects.filter(student=sam).count() < history:
            attempt(api.get(f"/api/students/{sam.pk}/next").json()["problem"]["id"])
        with django_assert_max_num_queries(5) as get_next:  # token, 2 permission reads, the attempts, the problem
            offered = api.get(f"/api/students/{sam.pk}/next").json()
        with django_assert_max_num_queries(11) as post:  # + the problem, the lock, the duplicate check, the insert
            attempt(offered["problem"]["id"])
        counts.append((len(get_next.captured_queries), len(post.captured_queries)))
    assert counts[0] == counts[1]


@pytest.mark.django_db
def test_an_answer_to_a_problem_with_no_answer_to_check_is_asked_for_a_self_report_not_for_an_answer(sam: Any, course: dict[str, Any]) -> None:
    """Bayes has no stored answer: a typed answer alone cannot be checked, and the refusal says so
    (not "type an answer", which the student just did); with a self-report it is stored, answer kept."""
    api = token_client(sam)
    refused = api.post("/api/attempts", {"problem": course["bayes"].pk, "answer": "0.5"}, format="json")
    assert refused.status_code == 400
    detail = refused.json()["detail"]
    assert "cannot be checked automatically" in detail and "type an answer" not in detail
    assert not Attempt.objects.exists()
    stored = api.post("/api/attempts", {"problem": course["bayes"].pk, "answer": "0.5", "self_report": "solved"}, format="json").json()
    assert stored["verdict"] == "solved" and stored["answer"] == "0.5" and stored["check"] is None
