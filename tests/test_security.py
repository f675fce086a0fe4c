"""Security: who may open what (every URL × every role), CSRF, problem text that tries to run script,
sign-in throttling and body size limits."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

ROLES = ["anonymous", "norole", "student", "ta", "head_ta", "instructor"]  # norole: signed in, never given a role
RANK = {role: i for i, role in enumerate(ROLES)}
POST_ONLY = "post-only"


def _every_route() -> set[str]:
    found: set[str] = set()

    def walk(patterns: list[Any], prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                if str(p.pattern) != "admin/":  # Django's own admin: staff accounts only, checked below
                    walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern):
                found.add(prefix + str(p.pattern))

    walk(get_resolver().url_patterns, "")
    return found


# route -> (the least role that may GET it, or POST_ONLY). Every route of the site is listed: a new
# URL fails test_the_matrix_lists_every_url until someone decides who may open it.
MATRIX: dict[str, str] = {
    "": "student",
    "login/": "anonymous",
    "admin/login/": "anonymous",  # the admin's sign-in, throttled like the others
    "logout/": POST_ONLY,
    "problems/": "student",
    "problems/new/": "ta",
    "problems/import/": "ta",
    "problems/export/": "ta",
    "problems/<int:pk>/": "student",
    "problems/<int:pk>/edit/": "ta",
    "problems/<int:pk>/delete/": "ta",
    "concepts/": "ta",
    "concepts/rules/preview/": POST_ONLY,
    "concepts/rules/suggestions/": POST_ONLY,
    "concepts/analysis/": "ta",
    "concepts/extraction/": "ta",
    "concepts/extraction/<int:pk>/": "ta",
    "concepts/reports/": "ta",
    "concepts/reports/<int:pk>/": "ta",
    "concepts/reports/<int:pk>/<str:slug>/<str:kind>/": "ta",
    "concepts/words/": "ta",
    "concepts/neural/": "ta",
    "concepts/neural/<int:pk>/": "ta",
    "concepts/neural/<int:pk>/cancel/": POST_ONLY,
    "concepts/label/": "ta",
    "concepts/label/next/": "ta",
    "concepts/label/agreement/": "ta",
    "concepts/label/<int:pk>/": "ta",
    "concepts/label/<int:pk>/held-out/": POST_ONLY,  # head TAs (hold a problem out of rule writing)
    "concepts/label/hold-out/": POST_ONLY,  # head TAs (hold out a draw of a collection's problems)
    "concepts/<str:slug>/rule/": "ta",
    "concepts/<str:slug>/rule/history/": "ta",
    "concepts/<str:slug>/rule/revert/<int:number>/": POST_ONLY,
    "triplets/": "ta",
    "triplets/new/": "ta",
    "triplets/judge/": "ta",
    "triplets/consensus/": "head_ta",
    "triplets/<int:pk>/": "ta",
    "triplets/<int:pk>/decide/": POST_ONLY,
    "practice/": "student",
    "practice/progress/": "student",  # one's own progress only: the URL names nobody
    "practice/class/": "ta",
    "practice/class/students/<int:student_id>/": "ta",
    "lab/": "ta",
    "lab/runs/<int:pk>/": "ta",
    "lab/runs/<int:pk>/cancel/": POST_ONLY,
    "lab/runs/<int:pk>/activate/": POST_ONLY,  # instructors ("make active")
    "lab/default/": POST_ONLY,  # instructors (the site default embedding)
    "lab/concepts/": "ta",
    "lab/problems/<int:pk>/similar/": "student",
    "api/problems/": "student",
    "api/problems/<int:pk>/": "student",
    "api/rules/": "ta",
    "api/rules/preview/": POST_ONLY,
    "api/rules/suggestions/": POST_ONLY,
    "api/rules/<str:slug>/": "ta",
    "api/rules/<str:slug>/revert/<int:number>/": POST_ONLY,
    "api/extraction-runs/": "ta",
    "api/extraction-runs/<int:pk>/": "ta",
    "api/reports/": "ta",
    "api/reports/<int:pk>/": "ta",
    "api/problems/<int:pk>/labels/": "ta",
    "api/problems/<int:pk>/labels/resolve/": POST_ONLY,
    "api/triplets/": "ta",
    "api/triplets/next/": "ta",
    "api/triplets/<int:pk>/": "ta",
    "api/triplets/<int:pk>/votes/": POST_ONLY,
    "api/triplets/<int:pk>/decision/": POST_ONLY,
    "api/students/<int:student_id>/next": "ta",  # another student's; one's own is checked below
    "api/attempts": POST_ONLY,
    "api/token/": POST_ONLY,
    "api/schema/": "anonymous",  # the API's shape is public; its data is not
    "api/docs/": "anonymous",
}


def test_the_matrix_lists_every_url() -> None:
    assert _every_route() == set(MATRIX)


@pytest.fixture
def site(demo_course: None, make_user: Any) -> dict[str, Any]:
    """The demo course with one of everything a URL can point at, and a user per role."""
    from concepts.models import ExtractionRun, ExtractorReport, NeuralExperiment
    from embeddings.models import EmbeddingRun, SimilarityTriplet
    from problems.models import Problem

    quiet = io.StringIO()
    call_command("extract_concepts", stdout=quiet)
    call_command("extractor_report", "--json", stdout=quiet)
    call_command("rebuild_embeddings", "--method", "prob2vec", "--source", "labels", stdout=quiet)
    users = {role: make_user(f"matrix-{role}", None if role == "norole" else role) for role in ROLES[1:]}
    report = ExtractorReport.objects.latest("id")
    return {
        "users": users,
        "pk": {
            "problems/": Problem.objects.filter(released=True).first().pk,
            "concepts/extraction/": ExtractionRun.objects.latest("id").pk,
            "concepts/reports/": report.pk,
            "concepts/neural/": NeuralExperiment.objects.create(concepts=["nchoosek"], schemes=["plain"], rounds=1).pk,
            "triplets/": SimilarityTriplet.objects.first().pk,
            "lab/runs/": EmbeddingRun.objects.latest("id").pk,
            "api/extraction-runs/": ExtractionRun.objects.latest("id").pk,
            "api/reports/": report.pk,
            "api/triplets/": SimilarityTriplet.objects.first().pk,
        },
        "slug": next(iter(report.concepts)) if report.concepts else "nchoosek",
        "student": make_user("matrix-other-student", "student").pk,  # someone else's data
    }


def _path(route: str, site: dict[str, Any]) -> str:
    pk = next((v for prefix, v in site["pk"].items() if route.startswith(prefix)), site["pk"]["problems/"])
    return "/" + (
        route.replace("<int:pk>", str(pk))
        .replace("<str:slug>", site["slug"])
        .replace("<str:kind>", "fp")
        .replace("<int:number>", "1")
        .replace("<int:student_id>", str(site["student"]))
    )


def _refused(response: Any, role: str, api: bool) -> bool:
    if role == "anonymous":
        if api:
            return response.status_code in (401, 403)
        return response.status_code == 302 and response["Location"].startswith("/login/")
    return response.status_code in (403, 404)


@pytest.mark.slow
def test_every_role_opens_exactly_the_urls_its_role_allows(site: dict[str, Any]) -> None:
    wrong: list[str] = []
    for role in ROLES:
        client = Client()
        if role != "anonymous":
            client.force_login(site["users"][role])
        for route, least in sorted(MATRIX.items()):
            path = _path(route, site)
            response = client.get(path)
            api = route.startswith("api/")
            if least == POST_ONLY:
                ok = response.status_code == 405 or _refused(response, role, api)
                expected = "405 or refused"
            elif RANK[role] >= RANK[least]:
                ok = response.status_code in (200, 204) or (
                    response.status_code == 302 and not response["Location"].startswith("/login/")
                )
                expected = "allowed"
            else:
                ok = _refused(response, role, api)
                expected = "refused"
            if not ok:
                wrong.append(f"{role:10} GET {path:45} -> {response.status_code} (expected {expected})")
    assert not wrong, "\n".join(wrong)


@pytest.mark.slow
def test_a_student_reads_only_their_own_next_problem_and_nobody_reaches_the_admin(site: dict[str, Any]) -> None:
    student = Client()
    student.force_login(site["users"]["student"])
    me = site["users"]["student"]
    assert student.get(f"/api/students/{me.pk}/next").status_code == 200
    assert student.get(f"/api/students/{site['student']}/next").status_code == 403
    for role, user in site["users"].items():
        client = Client()
        client.force_login(user)
        response = client.get("/admin/")
        assert response.status_code == 302 and "/admin/login/" in response["Location"], role


# --- CSRF ---------------------------------------------------------------------------------------


def test_writes_without_the_csrf_token_are_refused(alice: Any, problem_factory: Any) -> None:
    from problems.models import Problem

    problem = problem_factory("Choose 2 of 5.", title="Count", labels=["nchoosek"])
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post(f"/problems/{problem.pk}/edit/", {"title": "Hacked", "text": "x"})
    assert response.status_code == 403
    response = client.put(f"/api/problems/{problem.pk}/labels/", json.dumps({"concepts": ["nchoosek"]}), content_type="application/json")
    assert response.status_code == 403 and "CSRF" in response.json()["detail"]
    assert Problem.objects.get(pk=problem.pk).title == "Count"
    # With the token from the page, the same session may write.
    page = client.get(f"/problems/{problem.pk}/edit/")
    token = page.cookies["csrftoken"].value
    response = client.put(
        f"/api/problems/{problem.pk}/labels/", json.dumps({"concepts": ["nchoosek"]}), content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert response.status_code == 200


def test_token_clients_need_no_csrf_token(alice: Any, problem_factory: Any) -> None:
    from rest_framework.authtoken.models import Token

    problem = problem_factory("Choose 2 of 5.", title="Count", labels=["nchoosek"])
    client = Client(enforce_csrf_checks=True)
    key = Token.objects.create(user=alice).key
    response = client.put(
        f"/api/problems/{problem.pk}/labels/", json.dumps({"concepts": ["nchoosek"]}), content_type="application/json",
        HTTP_AUTHORIZATION=f"Token {key}",
    )
    assert response.status_code == 200


# --- problem text that holds HTML or script ------------------------------------------------------

EVIL = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2"> and $x<y$ <b>bold</b>'


@pytest.mark.slow
def test_problem_text_with_html_renders_inert_on_every_page_that_shows_it(course: dict[str, Any], sam: Any, alice: Any, hana: Any) -> None:
    from problems.models import Problem

    problem = course["count1"]
    Problem.objects.filter(pk=problem.pk).update(text=EVIL, title='<script>t()</script>Count "one"')
    pages = {
        sam: ["/problems/", f"/problems/{problem.pk}/", "/practice/"],
        alice: [f"/problems/{problem.pk}/edit/", f"/concepts/label/{problem.pk}/", "/practice/class/"],
        hana: ["/triplets/new/"],
    }
    for user, paths in pages.items():
        client = Client()
        client.force_login(user)
        for path in paths:
            response = client.get(path)
            assert response.status_code == 200, path
            body = response.content.decode()
            assert "<script>window.pwned" not in body and "<script>t()" not in body, path
            assert "<img src=x" not in body and "<b>bold" not in body, path
    client = Client()
    client.force_login(sam)
    # JSON carries the text as data: it is never sniffed as HTML.
    response = client.get(f"/api/problems/{problem.pk}/")
    assert response["Content-Type"] == "application/json" and response["X-Content-Type-Options"] == "nosniff"
    client.force_login(alice)
    preview = client.post("/concepts/rules/preview/", {"concept": "nchoosek", "pattern": "pwned", "ignore_case": "on"})
    assert preview.status_code == 200
    assert "<script>window.pwned" not in preview.content.decode()


# --- sign-in throttling ----------------------------------------------------------------------------


def test_sign_in_is_throttled_per_account_with_a_clear_message(settings: Any, sam: Any) -> None:
    settings.LOGIN_FAILURE_LIMIT = 3
    client = Client()
    for _ in range(3):
        response = client.post("/login/", {"username": "sam", "password": "wrong"})
        assert response.status_code == 200 and "didn" not in response.content.decode()
    # Now even the right password is refused, with a message that says why and for how long.
    response = client.post("/login/", {"username": "sam", "password": "password-123"})
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode() and "15 minutes" in response.content.decode()
    assert "_auth_user_id" not in client.session
    # The API's token endpoint shares the count.
    response = client.post("/api/token/", {"username": "sam", "password": "password-123"})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    # Another account is not affected.
    from django.contrib.auth.models import User

    User.objects.create_user("other", password="pw-other-123")
    assert Client().post("/login/", {"username": "other", "password": "pw-other-123"}).status_code == 302


def test_the_lock_lifts_when_the_window_passes_and_a_success_clears_the_count(settings: Any, sam: Any) -> None:
    from datetime import timedelta

    from problems.models import LoginFailure

    settings.LOGIN_FAILURE_LIMIT = 2
    client = Client()
    for _ in range(2):
        client.post("/login/", {"username": "sam", "password": "wrong"})
    assert client.post("/login/", {"username": "sam", "password": "password-123"}).status_code == 429
    LoginFailure.objects.update(at=LoginFailure.objects.first().at - timedelta(seconds=settings.LOGIN_FAILURE_WINDOW_SECONDS + 1))
    assert client.post("/login/", {"username": "sam", "password": "password-123"}).status_code == 302
    assert not LoginFailure.objects.filter(username="sam").exists()


def test_sign_in_is_throttled_per_address_across_accounts(settings: Any, sam: Any) -> None:
    settings.LOGIN_IP_FAILURE_LIMIT = 4
    client = Client(REMOTE_ADDR="203.0.113.9")
    for i in range(4):
        client.post("/api/token/", {"username": f"guess{i}", "password": "x"})
    assert client.post("/api/token/", {"username": "sam", "password": "password-123"}).status_code == 429
    assert Client(REMOTE_ADDR="198.51.100.7").post("/api/token/", {"username": "sam", "password": "password-123"}).status_code == 200


# --- sizes ----------------------------------------------------------------------------------------


def test_an_oversized_request_body_is_refused_cleanly(settings: Any, alice: Any, problem_factory: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    problem = problem_factory("Choose 2 of 5.", title="Count")
    client = Client()
    client.force_login(alice)
    body = json.dumps({"concepts": ["x" * 20_000]})
    response = client.put(f"/api/problems/{problem.pk}/labels/", body, content_type="application/json")
    assert response.status_code in (400, 413)
    response = client.post(f"/problems/{problem.pk}/edit/", {"title": "t", "text": "y" * 20_000})
    assert response.status_code in (400, 413)


def test_a_token_request_with_a_list_body_is_refused_not_a_server_error(db: Any) -> None:
    response = Client().post("/api/token/", json.dumps(["sam", "pw"]), content_type="application/json")
    assert response.status_code == 400
