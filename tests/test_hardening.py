"""Issue 17: the holes a probe of a production-like instance found, one test (or a few) per numbered item.

Each of these failed before its fix: see the commit that closed the item."""

from __future__ import annotations

import csv
import io
import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from problems.models import LoginFailure, Problem

from practice.models import Attempt

ROOT = Path(__file__).resolve().parents[1]


def token_client(user: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


# --- 1. the Django admin's sign-in is throttled like every other ------------------------------------


def test_the_admin_login_is_throttled_and_shares_the_count(settings: Any, make_user: Any) -> None:
    settings.LOGIN_FAILURE_LIMIT = 3
    boss = make_user("boss", "instructor")
    boss.is_staff = True
    boss.save()
    client = Client()
    for _ in range(3):
        response = client.post("/admin/login/?next=/admin/", {"username": "boss", "password": "wrong", "next": "/admin/"})
        assert response.status_code == 200
    response = client.post("/admin/login/?next=/admin/", {"username": "boss", "password": "password-123", "next": "/admin/"})
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()
    assert "_auth_user_id" not in client.session
    # The same count locks the other sign-in paths: one throttle, whichever door is tried.
    assert Client().post("/login/", {"username": "boss", "password": "password-123"}).status_code == 429
    assert APIClient().post("/api/token/", {"username": "boss", "password": "password-123"}, format="json").status_code == 429


# --- 2. the lock is keyed on the normalised username ---------------------------------------------------


@pytest.mark.parametrize("spelling", [" sam", "sam ", "ｓａｍ", "SAM", "Sam"])
def test_no_spelling_of_a_locked_username_gets_past_the_lock(settings: Any, sam: Any, spelling: str) -> None:
    settings.LOGIN_FAILURE_LIMIT = 3
    for _ in range(3):
        Client().post("/login/", {"username": "sam", "password": "wrong"})
    response = Client().post("/login/", {"username": spelling, "password": "password-123"})
    assert response.status_code == 429 and "Too many failed sign-ins" in response.content.decode()
    assert APIClient().post("/api/token/", {"username": spelling, "password": "password-123"}, format="json").status_code == 429


def test_failures_under_other_spellings_count_against_the_account(settings: Any, sam: Any) -> None:
    settings.LOGIN_FAILURE_LIMIT = 3
    Client().post("/login/", {"username": " sam", "password": "wrong"})
    for spelling in ("ｓａｍ", "SAM "):
        APIClient().post("/api/token/", {"username": spelling, "password": "wrong"}, format="json")
    assert set(LoginFailure.objects.values_list("username", flat=True)) == {"sam"}
    assert Client().post("/login/", {"username": "sam", "password": "password-123"}).status_code == 429


# --- 3. stored answers are revealed only where practice allows ----------------------------------------


def test_a_student_gets_no_answer_of_a_problem_outside_practice(sam: Any, course: dict[str, Any]) -> None:
    closed = course["closed"]  # released, in a module not open for practice
    response = token_client(sam).post("/api/attempts", {"problem": closed.pk, "answer": "0"}, format="json")
    assert response.status_code == 403 and "not open for practice" in response.json()["detail"]
    assert "expected" not in response.content.decode() and not Attempt.objects.exists()
    # The practice page: an offer whose module was closed since is dropped, nothing is revealed.
    client = logged_in(sam)
    session = client.session
    session["practice"] = {"problem": closed.pk, "reason": "r", "kind": "start", "key": "k1"}
    session.save()
    page = client.post("/practice/", {"action": "answer", "answer": "0", "submission": "k1"})
    assert "expected" not in page.content.decode() and not Attempt.objects.exists()


def test_staff_may_still_record_an_attempt_anywhere(ivan: Any, sam: Any, course: dict[str, Any]) -> None:
    response = token_client(ivan).post("/api/attempts", {"problem": course["closed"].pk, "answer": "1", "student": sam.pk}, format="json")
    assert response.status_code == 201


# --- 4. unreleased problems are never named to students -------------------------------------------------


def test_a_draft_is_not_named_in_a_recommendation(sam: Any, course: dict[str, Any]) -> None:
    api = token_client(sam)
    Problem.objects.filter(pk=course["hidden"].pk).update(title="SECRET DRAFT TITLE")
    response = api.get(f"/api/students/{sam.pk}/next", {"mode": "similar", "current": course["hidden"].pk})
    assert response.status_code == 404 and "SECRET" not in response.content.decode()
    # Enumerating ids tells nothing: a draft answers exactly as a problem that does not exist.
    missing = api.get(f"/api/students/{sam.pk}/next", {"mode": "similar", "current": 987654})
    assert missing.status_code == 404 and missing.json() == response.json()


def test_a_problem_withdrawn_after_an_attempt_is_not_named(sam: Any, course: dict[str, Any]) -> None:
    api = token_client(sam)
    assert api.post("/api/attempts", {"problem": course["count1"].pk, "answer": "7"}, format="json").status_code == 201
    Problem.objects.filter(pk=course["count1"].pk).update(title="WITHDRAWN TITLE", released=False, updated_at=timezone.now())
    body = api.get(f"/api/students/{sam.pk}/next").json()
    assert body["problem"] is not None and "WITHDRAWN" not in body["reason"]


# --- 5. triplet judging is blind until one votes; votes are final ---------------------------------------


@pytest.fixture
def triplet(problem_factory: Any, alice: Any) -> Any:
    from embeddings.services import triplet_create

    a = problem_factory("Choose 3 of 10.", title="Anchor")
    b = problem_factory("Choose 2 of 8 people.", title="Close")
    c = problem_factory("Arrange 5 books.", title="Far")
    return triplet_create(anchor=a, positive=b, negative=c, user=alice, note="B uses the same count")


def test_a_judge_who_has_not_voted_never_sees_the_proposers_order(triplet: Any, bob: Any) -> None:
    from embeddings.selectors import candidates_swapped

    api = token_client(bob)
    swapped = candidates_swapped(triplet, bob)
    left, right = (triplet.negative_id, triplet.positive_id) if swapped else (triplet.positive_id, triplet.negative_id)
    for body in (api.get(f"/api/triplets/{triplet.pk}/").json(), api.get("/api/triplets/?status=proposed").json()[0]):
        assert body["blind"] is True and body["positive"] is None and body["negative"] is None
        assert (body["left"], body["right"]) == (left, right) and body["note"] == "" and "votes" not in body
    page = logged_in(bob).get(f"/triplets/{triplet.pk}/").content.decode()
    assert "closer" not in page.replace("is closer", "") and "farther" not in page and "B uses the same count" not in page
    # After the vote the order and the others' votes are shown.
    assert api.post(f"/api/triplets/{triplet.pk}/votes/", {"pick": "left"}, format="json").status_code == 201
    body = api.get(f"/api/triplets/{triplet.pk}/").json()
    assert body["blind"] is False and (body["positive"], body["negative"]) == (triplet.positive_id, triplet.negative_id)
    assert "B · closer" in logged_in(bob).get(f"/triplets/{triplet.pk}/").content.decode()


def test_the_proposer_and_the_head_ta_see_the_order(triplet: Any, alice: Any, hana: Any) -> None:
    for user in (alice, hana):
        body = token_client(user).get(f"/api/triplets/{triplet.pk}/").json()
        assert body["blind"] is False and body["positive"] == triplet.positive_id


def test_a_vote_is_final(triplet: Any, bob: Any) -> None:
    from embeddings.models import TripletVote

    api = token_client(bob)
    assert api.post(f"/api/triplets/{triplet.pk}/votes/", {"pick": "cant_tell"}, format="json").status_code == 201
    again = api.post(f"/api/triplets/{triplet.pk}/votes/", {"pick": "left"}, format="json")
    assert again.status_code == 409 and "final" in again.json()["detail"]
    client = logged_in(bob)
    client.post("/triplets/judge/", {"triplet": triplet.pk, "pick": "right"})
    assert list(TripletVote.objects.values_list("choice", flat=True)) == ["cant_tell"]


# --- 6. a slow fallback rule has a total time budget over the bank --------------------------------------

SLOW = r"\A(.{0,120})(.{0,120})(.{0,120})\3\d{7}"  # backreference: RE2 refuses it, `regex` backtracks


def test_a_slow_fallback_rule_is_refused_before_saving_and_stopped_in_runs(
    settings: Any, problem_factory: Any, concept_factory: Any, alice: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from concepts.models import ConceptRule, ExtractionRun
    from concepts.services import RuleRejected, extraction_run_start, rule_save

    settings.RULE_FALLBACK_BUDGET_SECONDS = 0.1
    for i in range(40):
        problem_factory("x" * 150 + f" {i}", title=f"Long {i}")
    concept = concept_factory("nchoosek")
    with pytest.raises(RuleRejected, match="budget"):
        rule_save(concept=concept, pattern=SLOW, user=alice)
    assert not ConceptRule.objects.exists()
    preview = logged_in(alice).post("/concepts/rules/preview/", {"concept": "nchoosek", "pattern": SLOW, "ignore_case": "on"})
    assert preview.status_code == 200 and "budget" in preview.content.decode()
    # A rule saved when the bank was small, run over the bank it grew into: the run stops and says why.
    ConceptRule.objects.create(concept=concept, pattern=SLOW, version=1)
    concept.rule.versions.create(number=1, pattern=SLOW)
    with django_capture_on_commit_callbacks(execute=True):  # Celery is eager in tests: the run happens on commit
        run = extraction_run_start(user=alice)
    run = ExtractionRun.objects.get(pk=run.pk)
    assert run.status == "failed" and "nchoosek" in run.error and "budget" in run.error


# --- 7. malformed bodies are a 400 with a message, never a 500 ----------------------------------------


@pytest.mark.parametrize("path", ["/api/token/", "/api/attempts", "/api/triplets/", "/api/rules/preview/", "/api/reports/"])
def test_deeply_nested_json_is_a_bad_request(path: str, alice: Any) -> None:
    client = APIClient(raise_request_exception=True)
    if path != "/api/token/":
        client.force_authenticate(alice)
    response = client.post(path, "[" * 20_000, content_type="application/json")
    assert response.status_code == 400 and "nested" in response.json()["detail"]


def test_a_huge_integer_in_json_is_a_bad_request(sam: Any) -> None:
    client = APIClient()
    client.force_authenticate(sam)
    response = client.post("/api/attempts", '{"problem": ' + "9" * 5000 + "}", content_type="application/json")
    assert response.status_code == 400 and "detail" in response.json()


@pytest.mark.parametrize("body", [[None, None], "x", None, 7, {"pick": ["left"]}, {"decision": {"a": 1}}])
def test_votes_and_decisions_refuse_bodies_that_are_not_the_object_they_need(triplet: Any, bob: Any, hana: Any, body: Any) -> None:
    from embeddings.models import TripletVote

    for user, path in ((bob, "votes"), (hana, "decision")):
        client = APIClient()
        client.force_authenticate(user)
        response = client.post(f"/api/triplets/{triplet.pk}/{path}/", json.dumps(body), content_type="application/json")
        assert response.status_code == 400, (path, body, response.content)
    assert not TripletVote.objects.exists()
    triplet.refresh_from_db()
    assert triplet.status == "proposed"


@pytest.mark.parametrize(
    "line, reason",
    [
        ('{"id": 1, "text": ' + "[" * 5000 + "]" * 5000 + "}", "nested"),
        ('{"id": ' + "7" * 5000 + ', "text": "x"}', "digits"),
        ('{"id": 1, "text": "a\\u0000b"}', "NUL"),
        ('{"id": 1, "text": "a\\ud800b"}', "surrogate"),
        ('{"id": 1, "text": "ok", "answer": {"deep": [\"\\u0000\"]}}', "NUL"),
    ],
)
def test_the_upload_page_reports_malformed_lines_and_imports_nothing(alice: Any, line: str, reason: str) -> None:
    good = json.dumps({"id": "fine", "text": "A fine problem."})
    upload = SimpleUploadedFile("bank.jsonl", (good + "\n" + line + "\n").encode())
    response = logged_in(alice).post("/problems/import/", {"file": upload})
    assert response.status_code == 200
    page = response.content.decode()
    assert "line 2" in page and reason in page, page[-3000:]
    assert not Problem.objects.exists()


def test_labels_that_are_a_string_are_a_bad_line() -> None:
    from problems.bank_io import parse_jsonl

    result = parse_jsonl(b'{"id": 1, "text": "Choose 2.", "labels": "nchoosek"}\n')
    assert not result.records and [str(e) for e in result.errors] == ["line 1: 'labels' must be a list of strings"]


# --- 8. the body limit holds on every parser -------------------------------------------------------


def test_an_oversized_json_body_is_refused_and_nothing_is_stored(settings: Any, sam: Any, course: dict[str, Any]) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    body = json.dumps({"problem": course["count1"].pk, "answer": "10", "pad": "x" * 20_000})
    response = token_client(sam).post("/api/attempts", body, content_type="application/json")
    assert response.status_code == 413 and "10,000" in response.json()["detail"]
    assert not Attempt.objects.exists()
    form = token_client(sam).post("/api/attempts", {"problem": course["count1"].pk, "answer": "10", "pad": "x" * 20_000})
    assert form.status_code == 413 and not Attempt.objects.exists()


def test_the_api_takes_no_file_uploads(sam: Any, course: dict[str, Any]) -> None:
    upload = SimpleUploadedFile("big.bin", b"x" * 1000)
    response = token_client(sam).post("/api/attempts", {"problem": course["count1"].pk, "answer": "10", "f": upload}, format="multipart")
    assert response.status_code == 400 and "takes no files" in response.json()["detail"] and not Attempt.objects.exists()


def test_pages_refuse_oversized_bodies_before_reading_them(settings: Any, sam: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    upload = SimpleUploadedFile("big.bin", b"x" * 20_000)  # a file part is not counted by Django's own limit
    response = logged_in(sam).post("/practice/", {"answer": "1", "f": upload})
    assert response.status_code == 413


# --- 9. CSV export neutralises formulas -------------------------------------------------------------


def test_csv_export_neutralises_formulas_and_imports_back_unchanged(alice: Any, problem_factory: Any) -> None:
    from problems.bank_io import parse_csv

    evil = {
        "title": '=HYPERLINK("http://evil.example","x")',
        "text": "+SUM(1,2)",
        "answer": "-1",
        "solution": "@SUM(A1)",
        "level": "-2",
        "source": "'=already quoted",
    }
    problem_factory(evil["text"], title=evil["title"], answer=evil["answer"], solution=evil["solution"], level=evil["level"], source=evil["source"])
    response = logged_in(alice).get("/problems/export/?format=csv")
    data = b"".join(response.streaming_content)
    rows = list(csv.DictReader(io.StringIO(data.decode())))
    for column, value in evil.items():
        assert rows[0][column] == "'" + value, column
    for row in rows:
        for cell in row.values():
            assert not cell or cell[0] not in "=+-@\t\r", row
    record = parse_csv(data).records[0]
    assert (record.title, record.text, record.answer, record.solution, record.level, record.source) == tuple(evil.values())


# --- 10. a submission is stored once ----------------------------------------------------------------


def test_a_practice_form_submitted_twice_is_stored_once(sam: Any, course: dict[str, Any]) -> None:
    client = logged_in(sam)
    page = client.get("/practice/").content.decode()
    offer = dict(client.session["practice"])
    assert f'name="submission" value="{offer["key"]}"' in page
    answer = {"action": "answer", "answer": "7", "submission": offer["key"]}
    first = client.post("/practice/", answer)
    # The second of a double click was read with the session as it was before the first finished.
    session = client.session
    session["practice"] = offer
    session.save()
    second = client.post("/practice/", answer)
    assert first.status_code == second.status_code == 200 and "Not quite" in second.content.decode()
    assert Attempt.objects.count() == 1


def test_a_repeated_api_post_is_stored_once(sam: Any, course: dict[str, Any]) -> None:
    api = token_client(sam)
    body = {"problem": course["count1"].pk, "answer": "7"}
    first = api.post("/api/attempts", body, format="json")
    again = api.post("/api/attempts", body, format="json")
    assert first.status_code == 201 and again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert Attempt.objects.count() == 1
    keyed = {"problem": course["count2"].pk, "answer": "20", "client_key": "lms-42"}
    assert api.post("/api/attempts", keyed, format="json").status_code == 201
    Attempt.objects.update(created_at=Attempt.objects.first().created_at.replace(year=2000))  # long after the window
    assert api.post("/api/attempts", keyed, format="json").status_code == 200  # the key still holds
    assert api.post("/api/attempts", body, format="json").status_code == 201  # no key, outside the window: a new try
    assert Attempt.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_simultaneous_posts_store_one_attempt(make_user: Any, problem_factory: Any) -> None:
    from django.db import connection

    sam = make_user("sam", "student")
    problem = problem_factory("Choose 2 of 5.", title="Count", answer="10", labels=["nchoosek"])
    problem.module.open_for_practice = True
    problem.module.save()
    key = Token.objects.create(user=sam).key
    start = threading.Barrier(4)
    codes: list[int] = []

    def post() -> None:
        try:
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
            start.wait()
            codes.append(client.post("/api/attempts", {"problem": problem.pk, "answer": "7"}, format="json").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200, 200, 200, 201] and Attempt.objects.count() == 1


# --- 11. a signed-in user with no role is asked to get one ---------------------------------------------


def test_a_user_without_a_role_is_told_to_ask_for_one(charlie: Any, course: dict[str, Any]) -> None:
    client = logged_in(charlie)
    for path in ("/", "/problems/", f"/problems/{course['count1'].pk}/", "/practice/", f"/lab/problems/{course['count1'].pk}/similar/"):
        response = client.get(path)
        assert response.status_code == 403, path
        assert "has no role" in response.content.decode() and "ask" in response.content.decode().lower(), path
    assert client.post("/practice/", {"action": "skip"}).status_code == 403
    api = token_client(charlie)
    assert api.get("/api/problems/").status_code == 403
    assert api.get(f"/api/students/{charlie.pk}/next").status_code == 403
    assert api.post("/api/attempts", {"problem": course["count1"].pk, "skip": True}, format="json").status_code == 403
    assert not Attempt.objects.exists()
    # Signing out still works.
    assert client.post("/logout/").status_code == 302


def test_every_api_endpoint_tells_a_user_without_a_role_to_ask_for_one(charlie: Any, course: dict[str, Any]) -> None:
    # README Security: "the API answers 403 with the same message", also where a view names its own permission.
    api = token_client(charlie)
    pk = course["count1"].pk
    for method, path in (
        ("get", "/api/rules/"), ("get", "/api/rules/nchoosek/"), ("post", "/api/rules/preview/"), ("post", "/api/rules/suggestions/"),
        ("get", "/api/extraction-runs/"), ("post", "/api/reports/"), ("get", f"/api/problems/{pk}/labels/"),
        ("post", f"/api/problems/{pk}/labels/resolve/"), ("get", "/api/triplets/"), ("get", "/api/triplets/next/"),
        ("post", "/api/triplets/1/votes/"), ("post", "/api/triplets/1/decision/"),
    ):
        response = getattr(api, method)(path, {}, format="json")
        assert response.status_code == 403, path
        assert "no role" in response.json()["detail"] and "ask your instructor" in response.json()["detail"], path
    assert APIClient().get("/api/rules/").status_code == 401  # anonymous: still asked to authenticate


# --- 13. CSP, the production recipe, tokens and logout, 403 logs ------------------------------------


def test_every_page_sends_a_content_security_policy(sam: Any) -> None:
    for client, path in ((Client(), "/login/"), (logged_in(sam), "/problems/"), (logged_in(sam), "/api/problems/")):
        policy = client.get(path)["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "'unsafe-eval'" not in policy and "frame-ancestors 'none'" in policy
        assert "script-src 'self' 'unsafe-inline'" not in policy


def _readme_production_env() -> dict[str, str]:
    """The variables the README's production recipe exports (its `export` command)."""
    import re
    import shlex

    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Production", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    command = re.search(r"^export (.*?)(?<!\\)$", block, re.M | re.S).group(1).replace("\\\n", " ")
    return dict(word.split("=", 1) for word in shlex.split(command))


def test_the_readme_production_recipe_passes_the_deploy_check(tmp_path: Path) -> None:
    from tests.test_settings import run_python

    env = _readme_production_env()
    assert env["DEBUG"] == "False" and "SECRET_KEY_FILE" in env
    (tmp_path / "secret_key").write_text("k" * 64 + "-production-like-secret-Zq9\n")
    env["SECRET_KEY_FILE"] = str(tmp_path / "secret_key")
    result = run_python("manage", "check", "--deploy", "--fail-level", "WARNING", **env)
    assert result.returncode == 0, result.stderr


def test_signing_out_revokes_the_api_token(sam: Any) -> None:
    key = Token.objects.create(user=sam).key
    client = logged_in(sam)
    client.post("/logout/")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/problems/").status_code == 401
    # An API client signs out by deleting its token.
    fresh = APIClient().post("/api/token/", {"username": "sam", "password": "password-123"}, format="json").json()["token"]
    api.credentials(HTTP_AUTHORIZATION=f"Token {fresh}")
    assert api.delete("/api/token/").status_code == 204
    assert api.get("/api/problems/").status_code == 401 and not Token.objects.exists()


def test_a_403_is_logged_in_one_line_without_a_traceback(sam: Any, caplog: Any) -> None:
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert logged_in(sam).get("/concepts/").status_code == 403
    records = [r for r in caplog.records if r.name == "django.request"]
    assert records and all(r.exc_info is None for r in records)
    assert "Forbidden" in records[0].getMessage() and "/concepts/" in records[0].getMessage()


def test_proposing_a_triplet_again_does_not_reveal_its_order(triplet: Any, bob: Any) -> None:
    from embeddings.models import SimilarityTriplet

    api = token_client(bob)
    replies = [
        api.post("/api/triplets/", {"anchor": triplet.anchor_id, "positive": p, "negative": n}, format="json")
        for p, n in ((triplet.positive_id, triplet.negative_id), (triplet.negative_id, triplet.positive_id))
    ]
    assert [r.status_code for r in replies] == [400, 400] and replies[0].json() == replies[1].json()
    assert SimilarityTriplet.objects.count() == 1


def test_a_nul_in_a_page_form_or_a_query_string_is_a_bad_request(sam: Any, alice: Any, course: dict[str, Any]) -> None:
    # Found by the form fuzz pass (tests/test_form_fuzz.py): these reached the database as 500s.
    response = logged_in(sam).post("/practice/", {"action": "answer", "answer": "1\x00"})
    assert response.status_code == 400 and "NUL" in response.content.decode()
    response = logged_in(alice).post(f"/concepts/label/{course['count1'].pk}/", {"concepts": ["nchoosek\x00"]})
    assert response.status_code == 400
    assert logged_in(alice).get("/triplets/new/", {"module": course["count1"].module_id, "q": "a\x00"}).status_code == 400
    assert token_client(alice).get("/api/triplets/", {"status": "\x00"}).status_code == 400
    assert not Attempt.objects.exists()


def test_a_new_problem_with_a_taken_id_is_a_form_error(alice: Any) -> None:
    client = logged_in(alice)
    first = client.post("/problems/new/", {"title": "One", "text": "x", "source_id": "same"})
    assert first.status_code == 302
    again = client.post("/problems/new/", {"title": "Two", "text": "y", "source_id": "same"})
    assert again.status_code == 200 and "already exists" in again.content.decode()
    assert Problem.objects.count() == 1
