"""Shared fixtures. The cast follows HC: Alice and Bob are TAs, Charlie has no role, Sam is a student,
Hana is the head TA and Ivan the instructor."""

from __future__ import annotations

import os
import socket
from typing import Any, Callable
from urllib.parse import urlparse

import pytest

REDIS_URL = os.getenv("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def pytest_sessionstart(session: pytest.Session) -> None:
    """Fail at once, saying what to start, when a service the suite needs is down (never skip silently)."""
    if not session.config.pluginmanager.hasplugin("django"):
        return  # pure tests run alone with `-p no:django`: no services needed
    from django.conf import settings

    settings.PRACTICE_BANK_RECHECK_SECONDS = 0  # tests change the bank and ask for a problem at once
    settings.PRACTICE_BANK_COUNT_SECONDS = 0
    db = settings.DATABASES["default"]
    problems = []
    if db["ENGINE"] != "django.db.backends.postgresql":
        problems.append(
            "the suite runs on PostgreSQL: run it with `make test` or set DATABASE_URL=postgres://... "
            f"(got {db['ENGINE']})"
        )
    elif not _reachable(db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432)):
        problems.append(
            f"PostgreSQL is not reachable at {db.get('HOST')}:{db.get('PORT')}: install it "
            "(apt-get install postgresql) and start it "
            "(pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start), or set TEST_DATABASE_URL"
        )
    redis = urlparse(REDIS_URL)
    if not _reachable(redis.hostname or "127.0.0.1", redis.port or 6379):
        problems.append(
            f"Redis is not reachable at {redis.hostname}:{redis.port}: install it (apt-get install redis-server) "
            'and start it (redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no), '
            "or set TEST_REDIS_URL"
        )
    if problems:
        pytest.exit("Cannot run the tests:\n- " + "\n- ".join(problems), returncode=2)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> Any:
    """pytest-django's test database, whose drop at the end no longer races the connections of the
    gunicorn and Celery processes that the full-stack tests killed (their PostgreSQL backends may
    still be closing): those are ended first, so the drop never fails with "being accessed"."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture
def make_user(db: Any) -> Callable[..., Any]:
    from django.contrib.auth.models import Group, User

    def make(username: str, role: str | None = None, password: str = "password-123") -> User:
        user = User.objects.create_user(username=username, password=password)
        if role:
            user.groups.add(Group.objects.get(name=role))
        return user

    return make


@pytest.fixture
def alice(make_user: Callable[..., Any]) -> Any:
    return make_user("alice", "ta")


@pytest.fixture
def bob(make_user: Callable[..., Any]) -> Any:
    return make_user("bob", "ta")


@pytest.fixture
def charlie(make_user: Callable[..., Any]) -> Any:
    return make_user("charlie")


@pytest.fixture
def sam(make_user: Callable[..., Any]) -> Any:
    return make_user("sam", "student")


@pytest.fixture
def hana(make_user: Callable[..., Any]) -> Any:
    return make_user("hana", "head_ta")


@pytest.fixture
def ivan(make_user: Callable[..., Any]) -> Any:
    return make_user("ivan", "instructor")


@pytest.fixture
def module_factory(db: Any) -> Callable[..., Any]:
    from problems.models import Module

    def make(name: str = "counting", order: int = 4) -> Module:
        return Module.objects.get_or_create(name=name, defaults={"order": order})[0]

    return make


@pytest.fixture
def concept_factory(db: Any, module_factory: Callable[..., Any]) -> Callable[..., Any]:
    from concepts.models import Concept

    def make(slug: str, module: str = "counting", name: str = "") -> Concept:
        return Concept.objects.get_or_create(slug=slug, defaults={"name": name or slug, "module": module_factory(module)})[0]

    return make


@pytest.fixture
def problem_factory(db: Any, module_factory: Callable[..., Any], concept_factory: Callable[..., Any]) -> Callable[..., Any]:
    from concepts.models import GroundTruthLabel
    from problems.models import Problem

    counter = {"n": 0}

    def make(
        text: str = "How many ways to choose $k$ of $n$? Use $\\binom{n}{k}$.",
        *,
        title: str = "",
        module: str = "counting",
        labels: list[str] | None = None,
        released: bool = True,
        collection: str = "test",
        **extra: Any,
    ) -> Problem:
        counter["n"] += 1
        problem = Problem.objects.create(
            collection=collection,
            source_id=extra.pop("source_id", f"p{counter['n']}"),
            title=title or f"Problem {counter['n']}",
            text=text,
            module=module_factory(module),
            released=released,
            **extra,
        )
        for slug in labels or []:
            GroundTruthLabel.objects.create(problem=problem, concept=concept_factory(slug, module))
        return problem

    return make


@pytest.fixture
def demo_course(db: Any, settings: Any) -> None:
    from django.core.management import call_command

    settings.DEBUG = True  # demo logins are created only with DEBUG on
    call_command("load_demo", stdout=open(os.devnull, "w"))


@pytest.fixture
def course(problem_factory: Callable[..., Any]) -> dict[str, Any]:
    """A practice course with known recommendations (tests/practice/course.py)."""
    from tests.practice.course import make_practice_course

    return make_practice_course(problem_factory)
