"""Course roles: Django groups with permissions, built idempotently after every migrate.

Student < TA < head TA < instructor; each role holds every permission of the roles before it.
Later features add their permissions here, so the role matrix stays in one place.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser, Group, Permission
from rest_framework.permissions import BasePermission

STUDENT, TA, HEAD_TA, INSTRUCTOR = "student", "ta", "head_ta", "instructor"
ROLES = (STUDENT, TA, HEAD_TA, INSTRUCTOR)
ROLE_LABELS = {STUDENT: "Student", TA: "TA", HEAD_TA: "Head TA", INSTRUCTOR: "Instructor"}

_TA_PERMISSIONS = [
    "problems.view_problem",
    "problems.view_unreleased_problem",
    "problems.add_problem",
    "problems.change_problem",
    "problems.delete_problem",
    "problems.import_problem",
    "problems.view_module",
    "concepts.view_concept",
    "concepts.view_groundtruthlabel",
    "concepts.add_groundtruthlabel",
    "concepts.change_groundtruthlabel",
    "concepts.delete_groundtruthlabel",
    "concepts.view_conceptrule",
    "concepts.add_conceptrule",
    "concepts.change_conceptrule",
    "concepts.preview_conceptrule",
    "concepts.view_conceptruleversion",
    "concepts.view_extractionrun",
    "concepts.add_extractionrun",
    "concepts.view_extractorreport",
    "concepts.add_extractorreport",
    "concepts.view_labelset",
    "concepts.add_labelset",
    "concepts.change_labelset",
    "embeddings.view_similaritytriplet",
    "embeddings.add_similaritytriplet",
    "embeddings.add_tripletvote",
    "embeddings.view_embeddingrun",
    "embeddings.add_embeddingrun",
    "concepts.view_selectedword",
    "concepts.add_selectedword",
    "concepts.delete_selectedword",
    "concepts.view_neuralexperiment",
    "concepts.add_neuralexperiment",
    "practice.view_attempt",
]
_HEAD_TA_PERMISSIONS = _TA_PERMISSIONS + [
    "concepts.add_concept",
    "concepts.change_concept",
    "concepts.resolve_labels",
    "embeddings.decide_similaritytriplet",
    "embeddings.view_tripletvote",
]
_INSTRUCTOR_PERMISSIONS = _HEAD_TA_PERMISSIONS + [
    "problems.add_module",
    "problems.change_module",
    "practice.add_attempt",
    "concepts.delete_concept",
    "embeddings.change_activeembedding",  # the site default embedding, and "make active"
]

ROLE_PERMISSIONS: dict[str, list[str]] = {
    STUDENT: ["problems.view_problem"],
    TA: _TA_PERMISSIONS,
    HEAD_TA: _HEAD_TA_PERMISSIONS,
    INSTRUCTOR: _INSTRUCTOR_PERMISSIONS,
}


def roles_ensure(**kwargs: Any) -> None:
    """Create the role groups and set exactly their permissions (a post_migrate receiver)."""
    for role, perms in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        wanted = []
        for perm in perms:
            app_label, codename = perm.split(".")
            found = Permission.objects.filter(content_type__app_label=app_label, codename=codename).first()
            if found is not None:  # an app may not have migrated yet in a partial migrate
                wanted.append(found)
        group.permissions.set(wanted)


def user_role(user: Any) -> str | None:
    """The highest role the user holds; superusers count as instructors."""
    if user is None or isinstance(user, AnonymousUser) or not user.is_authenticated:
        return None
    if user.is_superuser:
        return INSTRUCTOR
    names = {g.name for g in user.groups.all()}
    for role in reversed(ROLES):
        if role in names:
            return role
    return None


def is_course_staff(user: Any) -> bool:
    """TAs, head TAs and instructors: people who may see unreleased problems and labels."""
    return bool(user is not None and user.is_authenticated and user.has_perm("problems.view_unreleased_problem"))


def role_context(request: Any) -> dict[str, Any]:
    user = getattr(request, "user", None)
    role = user_role(user)
    return {
        "role": role,
        "role_label": ROLE_LABELS.get(role or "", ""),
        "is_course_staff": is_course_staff(user),
    }


def permission_required(perm: str, raise_exception: bool = True) -> Any:
    """Django's decorator, but a signed-in user without the permission gets 403 ("you may not open
    this") rather than being sent back to the login page as if not signed in; anonymous users still
    go to the login page."""
    from functools import wraps

    from django.contrib.auth.views import redirect_to_login
    from django.core.exceptions import PermissionDenied

    def decorator(view: Any) -> Any:
        @wraps(view)
        def guarded(request: Any, *args: Any, **kwargs: Any) -> Any:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not request.user.has_perm(perm):
                raise PermissionDenied(f"your role does not include {perm}")
            return view(request, *args, **kwargs)

        return guarded

    return decorator


def has_course_role(user: Any) -> bool:
    """Whether a signed-in user holds a course role. Every role (and every superuser) can see problems,
    so that one permission stands for "has a role"; an account nobody gave a role has none."""
    return bool(user is not None and user.is_authenticated and user.has_perm("problems.view_problem"))


# Paths a signed-in user without a role may still open: signing in and out, the Django admin (it checks
# is_staff itself), static files, and the API's public schema and docs (the API itself is gated by
# HasCourseRole, since a token user is only known once DRF authenticates the request).
ROLELESS_PATHS = ("/login/", "/logout/", "/admin/", "/static/", "/api/")


class CourseRoleMiddleware:
    """A signed-in user with no role gets a page that says to ask for one (403), instead of being
    treated as a student by every page that only checks sign-in."""

    def __init__(self, get_response: Any):
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and not request.path.startswith(ROLELESS_PATHS) and not has_course_role(user):
            from django.shortcuts import render

            return render(request, "no_role.html", status=403)
        return self.get_response(request)


class HasCourseRole(BasePermission):
    """The API's default permission: signed in (token or session) and holding a course role."""

    message = "Your account has no role in the course yet: ask your instructor to give you one."

    def has_permission(self, request: Any, view: Any) -> bool:
        return has_course_role(request.user)
