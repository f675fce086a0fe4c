from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from problems.roles import ROLE_PERMISSIONS, ROLES, roles_ensure, user_role


def codes(group: Group) -> set[str]:
    return {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.select_related("content_type")}


def test_migrate_creates_every_role_with_exactly_its_permissions(db: Any) -> None:
    for role in ROLES:
        assert codes(Group.objects.get(name=role)) == set(ROLE_PERMISSIONS[role])


def test_each_role_holds_every_permission_of_the_roles_before_it() -> None:
    for lower, higher in zip(ROLES[1:], ROLES[2:]):
        assert set(ROLE_PERMISSIONS[lower]) <= set(ROLE_PERMISSIONS[higher])


def test_roles_ensure_is_idempotent_and_repairs_drift(db: Any) -> None:
    ta = Group.objects.get(name="ta")
    ta.permissions.clear()
    roles_ensure()
    roles_ensure()
    assert codes(ta) == set(ROLE_PERMISSIONS["ta"])
    assert Group.objects.filter(name__in=ROLES).count() == 4


def test_user_role_is_the_highest_role(make_user: Any, django_user_model: Any) -> None:
    both = make_user("both", "ta")
    both.groups.add(Group.objects.get(name="head_ta"))
    assert user_role(both) == "head_ta"
    assert user_role(make_user("nobody")) is None
    assert user_role(django_user_model.objects.create_superuser("root", password="x")) == "instructor"


@pytest.mark.parametrize(
    "who, sees_new, sees_import, badge",
    [("sam", False, False, "Student"), ("alice", True, True, "TA"), ("hana", True, True, "Head TA"), ("ivan", True, True, "Instructor")],
)
def test_navigation_shows_each_role_what_it_may_do(
    client: Any, request: Any, who: str, sees_new: bool, sees_import: bool, badge: str
) -> None:
    client.force_login(request.getfixturevalue(who))
    page = client.get(reverse("problems:list")).content.decode()
    assert (">New problem</a>" in page) is sees_new
    assert (">Import</a>" in page) is sees_import
    assert f'">{badge}</span>' in page


def test_login_and_logout_pages(client: Any, alice: Any) -> None:
    assert client.get(reverse("login")).status_code == 200
    response = client.post(reverse("login"), {"username": "alice", "password": "password-123"})
    assert response.status_code == 302 and response.url == reverse("home")
    assert client.get(reverse("home")).url == reverse("problems:list")
    assert "Please enter a correct username and password" in client.post(reverse("login"), {"username": "alice", "password": "bad"}).content.decode()
    client.post(reverse("logout"))
    assert client.get(reverse("problems:list")).status_code == 302


def test_a_wrong_password_is_said_once(client: Any, alice: Any) -> None:
    page = client.post(reverse("login"), {"username": "alice", "password": "bad"}).content.decode()
    assert page.count("Please enter a correct username and password") == 1
    assert page.count('role="alert"') == 1


def test_permissions_are_read_in_one_query_and_equal_djangos_own(make_user: Any, django_user_model: Any, django_assert_num_queries: Any) -> None:
    """problems.login_throttle.ThrottledModelBackend.get_all_permissions: the user's own permissions and
    their groups' in one query, the same set Django's ModelBackend computes in two."""
    from django.contrib.auth.backends import ModelBackend
    from django.contrib.auth.models import Permission

    from problems.login_throttle import ThrottledModelBackend

    ta = make_user("ta-and-direct", "ta")
    ta.user_permissions.add(Permission.objects.get(codename="delete_problem"))
    root = django_user_model.objects.create_superuser("root2", password="x")
    inactive = make_user("gone", "instructor")
    inactive.is_active = False
    inactive.save()
    for user in (ta, root, make_user("nobody2"), inactive):
        expected = ModelBackend().get_all_permissions(django_user_model.objects.get(pk=user.pk))
        fresh = django_user_model.objects.get(pk=user.pk)
        with django_assert_num_queries(1 if user.is_active else 0):
            assert ThrottledModelBackend().get_all_permissions(fresh) == expected
    fresh = django_user_model.objects.get(pk=ta.pk)
    with django_assert_num_queries(1):  # has_perm goes through the backend, and the answer is kept for the request
        assert fresh.has_perm("problems.delete_problem") and fresh.has_perm(ROLE_PERMISSIONS["ta"][0])
        assert not fresh.has_perm("problems.no_such_permission")
