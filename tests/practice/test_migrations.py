"""Attempt moved from problems/ to practice/ (issue 16) without losing a row: the migrations change
Django's state only, and the table `problems_attempt` stays where it was."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

def migrate(targets: list[Any]) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def latest() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def before_the_move() -> list[Any]:
    """Every app at its latest migration but problems at 0006 (Attempt still there) and no practice/."""
    return [node for node in latest() if node[0] not in ("problems", "practice")] + [("problems", "0006_attempt_client_key"), ("practice", None)]


@pytest.mark.django_db(transaction=True)
def test_an_attempt_stored_before_the_move_survives_it_with_its_permissions() -> None:
    migrate(before_the_move())
    executor = MigrationExecutor(connection)
    old = executor.loader.project_state([node for node in before_the_move() if node[1] is not None]).apps
    assert not any(node[0] == "practice" for node in executor.loader.applied_migrations)

    User, Problem, Attempt = old.get_model("auth", "User"), old.get_model("problems", "Problem"), old.get_model("problems", "Attempt")
    ContentType, Permission, Group = old.get_model("contenttypes", "ContentType"), old.get_model("auth", "Permission"), old.get_model("auth", "Group")
    student = User.objects.create(username="before-the-move")
    problem = Problem.objects.create(collection="test", source_id="p1", title="Count", text="Choose 2 of 5.", answer="10")
    stored = Attempt.objects.create(student=student, problem=problem, verdict="correct", outcome=1.0, answer="10",
                                    recommended_because="A first problem.", client_key="k1")
    attempt_type, _ = ContentType.objects.get_or_create(app_label="problems", model="attempt")
    view, _ = Permission.objects.get_or_create(content_type=attempt_type, codename="view_attempt", defaults={"name": "Can view attempt"})
    ContentType.objects.filter(app_label="practice", model="attempt").delete()  # as on a site that never had practice/
    lms = Group.objects.create(name="lms-service")
    lms.permissions.add(view)

    migrate(latest())

    from django.contrib.auth.models import Group as LiveGroup

    from practice.models import Attempt as MovedAttempt

    moved = MovedAttempt.objects.get()
    assert (moved.pk, moved.student.username, moved.problem.title, moved.verdict, moved.answer, moved.client_key, moved.created_at) == (
        stored.pk, "before-the-move", "Count", "correct", "10", "k1", stored.created_at,
    )
    assert MovedAttempt._meta.db_table == "problems_attempt"
    perms = list(LiveGroup.objects.get(name="lms-service").permissions.values_list("content_type__app_label", "codename"))
    assert perms == [("practice", "view_attempt")]  # the same permission row, now under practice/
    assert not ContentType.objects.filter(app_label="problems", model="attempt").exists()
