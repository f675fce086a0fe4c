"""Sign-in throttling: after too many failed sign-ins for one account (or from one address) within a
window, further tries are refused for a while with a clear message, whichever door is used.

One throttle for every path: the check lives in the authentication backend (`ThrottledModelBackend`),
so the login form, the Django admin's login, `POST /api/token/` and any path added later that calls
`authenticate()` are all held by it. Failures are keyed on the normalised username (NFKC, stripped,
case-folded): " student2", "student2 " and a full-width "ｓｔｕｄｅｎｔ２" are one account, as they
are for the form's own lookup. Failures are rows in the database, so every web process sees the same
count and it keeps working when Redis is down."""

from __future__ import annotations

import math
import unicodedata
from datetime import timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model, user_logged_in, user_logged_out, user_login_failed
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.core.exceptions import NON_FIELD_ERRORS
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from prob2vec_site.security import BoundedFormParser, BoundedJSONParser, FieldsOnlyMultiPartParser
from problems.models import LoginFailure

MAX_USERNAME = 150


def username_key(username: Any) -> str:
    """The account a sign-in names, as failures are counted: NFKC (as Django's login form reads a
    username), stripped and case-folded."""
    return unicodedata.normalize("NFKC", str(username or "")).strip().casefold()[:MAX_USERNAME]


def client_ip(request: Any) -> str | None:
    # REMOTE_ADDR only: X-Forwarded-For is whatever the client says unless a proxy we trust rewrites it.
    return getattr(request, "META", {}).get("REMOTE_ADDR") or None


def _wait(failures: list[Any], limit: int, now: Any) -> int:
    """Seconds until fewer than `limit` of these failures (oldest first) are inside the window."""
    if len(failures) < limit:
        return 0
    frees_at = failures[len(failures) - limit] + timedelta(seconds=settings.LOGIN_FAILURE_WINDOW_SECONDS)
    return max(1, math.ceil((frees_at - now).total_seconds()))


def login_lockout(*, username: str, ip: str | None) -> int:
    """Seconds this sign-in must wait (0: go ahead)."""
    now = timezone.now()
    since = now - timedelta(seconds=settings.LOGIN_FAILURE_WINDOW_SECONDS)
    recent = LoginFailure.objects.filter(at__gte=since).order_by("at")
    by_user = list(recent.filter(username=username_key(username)).values_list("at", flat=True))
    by_ip = list(recent.filter(ip=ip).values_list("at", flat=True)) if ip else []
    return max(_wait(by_user, settings.LOGIN_FAILURE_LIMIT, now), _wait(by_ip, settings.LOGIN_IP_FAILURE_LIMIT, now))


def lockout_message(seconds: int) -> str:
    minutes = math.ceil(seconds / 60)
    return (
        "Too many failed sign-ins for this account or from this address. "
        f"Try again in {minutes} minute{'s' if minutes != 1 else ''}."
    )


class SignInThrottled(Exception):
    """Raised by the backend while an account or address is locked. It is not PermissionDenied on
    purpose: `authenticate()` would turn that into one more recorded failure and a plain "wrong
    password", and the lock would then never say why or lift while someone keeps trying."""

    def __init__(self, wait: int):
        self.wait = wait
        super().__init__(lockout_message(wait))


class ThrottledModelBackend(ModelBackend):
    """Django's ModelBackend behind the sign-in throttle (settings.AUTHENTICATION_BACKENDS)."""

    def authenticate(self, request: Any, username: str | None = None, password: str | None = None, **kwargs: Any) -> Any:
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if username is None or password is None:
            return None
        wait = login_lockout(username=username, ip=client_ip(request) if request is not None else None)
        if wait:
            raise SignInThrottled(wait)  # before the password hasher: a locked account costs no CPU
        # The same reading of a username on every path (the login form already does this; the API did not).
        username = unicodedata.normalize("NFKC", str(username)).strip()
        return super().authenticate(request, username=username, password=password, **kwargs)

    def get_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        """Django's answer in one query instead of two (the user's own permissions, then their groups'):
        every API request asks once whether its user holds a course role."""
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        if not hasattr(user_obj, "_perm_cache"):
            from django.contrib.auth.models import Permission
            from django.db.models import Q

            perms = Permission.objects.all() if user_obj.is_superuser else Permission.objects.filter(Q(user=user_obj) | Q(group__user=user_obj))
            user_obj._perm_cache = {f"{app}.{codename}" for app, codename in perms.values_list("content_type__app_label", "codename").order_by()}
        return user_obj._perm_cache


@receiver(user_login_failed, dispatch_uid="problems.login_failure_record")
def login_failure_record(sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any) -> None:
    LoginFailure.objects.create(username=username_key(credentials.get("username")), ip=client_ip(request) if request is not None else None)
    # Keep the table small: nothing older than the window is ever read again.
    LoginFailure.objects.filter(at__lt=timezone.now() - timedelta(seconds=settings.LOGIN_FAILURE_WINDOW_SECONDS)).delete()


@receiver(user_logged_in, dispatch_uid="problems.login_failures_clear")
def login_failures_clear(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    LoginFailure.objects.filter(username=username_key(user.get_username())).delete()


@receiver(user_logged_out, dispatch_uid="problems.api_token_revoke")
def api_token_revoke(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    """Signing out signs out everywhere: the user's API token stops working too."""
    if user is not None:
        Token.objects.filter(user=user).delete()


class _ThrottledFormMixin:
    """A sign-in form that turns the backend's lock into its own error, with the wait."""

    throttle_wait = 0

    def clean(self) -> dict[str, Any]:
        try:
            return super().clean()  # type: ignore[misc]
        except SignInThrottled as exc:
            self.throttle_wait = exc.wait
            raise forms.ValidationError(lockout_message(exc.wait), code="throttled") from None


class ThrottledAuthenticationForm(_ThrottledFormMixin, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(_ThrottledFormMixin, AdminAuthenticationForm):
    pass


def _throttled_status(response: HttpResponse, form: Any) -> HttpResponse:
    if form is not None and form.has_error(NON_FIELD_ERRORS, "throttled"):
        response.status_code = 429
        response["Retry-After"] = str(form.throttle_wait)
    return response


class ThrottledLoginView(LoginView):
    authentication_form = ThrottledAuthenticationForm

    def form_invalid(self, form: Any) -> HttpResponse:
        return _throttled_status(super().form_invalid(form), form)


def login_view(request: HttpRequest) -> HttpResponse:
    return ThrottledLoginView.as_view()(request)


def admin_login_view(request: HttpRequest) -> HttpResponse:
    """The Django admin's login page with the throttled form, answering 429 while locked."""
    from django.contrib import admin

    response = admin.site.login(request)  # its form is ThrottledAdminAuthenticationForm (prob2vec_site/urls.py)
    form = (getattr(response, "context_data", None) or {}).get("form")
    return _throttled_status(response, form)


class TokenOutput(serializers.Serializer):
    token = serializers.CharField()


class ThrottledObtainAuthToken(ObtainAuthToken):
    """`POST /api/token/` with {"username", "password"} → {"token"}; 429 while throttled.
    `DELETE /api/token/` revokes the caller's token (an API client signing out)."""

    parser_classes = (BoundedJSONParser, BoundedFormParser, FieldsOnlyMultiPartParser)

    def get_permissions(self) -> list[Any]:
        return [IsAuthenticated()] if self.request.method == "DELETE" else [AllowAny()]

    @extend_schema(summary="Get an API token", request=ObtainAuthToken.serializer_class, responses={200: TokenOutput, 400: dict, 429: dict})
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        try:
            return super().post(request, *args, **kwargs)
        except SignInThrottled as exc:
            return Response({"detail": lockout_message(exc.wait)}, status=status.HTTP_429_TOO_MANY_REQUESTS,
                            headers={"Retry-After": str(exc.wait)})

    @extend_schema(summary="Revoke my API token (sign out)", request=None, responses={204: None, 401: dict})
    def delete(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        Token.objects.filter(user=request.user).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)

