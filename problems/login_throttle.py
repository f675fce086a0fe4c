"""Login throttling: after too many failed sign-ins for one account (or from one address) within a
window, further tries are refused for a while with a clear message, on the login form and on
`POST /api/token/` alike. Failures are rows in the database, so every web process sees the same
count and it keeps working when Redis is down."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import user_logged_in, user_login_failed
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.core.exceptions import NON_FIELD_ERRORS
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from rest_framework import status
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.request import Request
from rest_framework.response import Response

from problems.models import LoginFailure


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
    by_user = list(recent.filter(username=username.lower()).values_list("at", flat=True))
    by_ip = list(recent.filter(ip=ip).values_list("at", flat=True)) if ip else []
    return max(_wait(by_user, settings.LOGIN_FAILURE_LIMIT, now), _wait(by_ip, settings.LOGIN_IP_FAILURE_LIMIT, now))


def lockout_message(seconds: int) -> str:
    minutes = math.ceil(seconds / 60)
    return (
        "Too many failed sign-ins for this account or from this address. "
        f"Try again in {minutes} minute{'s' if minutes != 1 else ''}."
    )


@receiver(user_login_failed, dispatch_uid="problems.login_failure_record")
def login_failure_record(sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any) -> None:
    username = str(credentials.get("username") or "")[:150].lower()
    LoginFailure.objects.create(username=username, ip=client_ip(request) if request is not None else None)
    # Keep the table small: nothing older than the window is ever read again.
    LoginFailure.objects.filter(at__lt=timezone.now() - timedelta(seconds=settings.LOGIN_FAILURE_WINDOW_SECONDS)).delete()


@receiver(user_logged_in, dispatch_uid="problems.login_failures_clear")
def login_failures_clear(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    LoginFailure.objects.filter(username=user.get_username().lower()).delete()


class ThrottledAuthenticationForm(AuthenticationForm):
    def clean(self) -> dict[str, Any]:
        wait = login_lockout(username=self.data.get("username") or "", ip=client_ip(self.request))
        if wait:
            raise forms.ValidationError(lockout_message(wait), code="throttled")
        return super().clean()


class ThrottledLoginView(LoginView):
    authentication_form = ThrottledAuthenticationForm

    def form_invalid(self, form: Any) -> HttpResponse:
        response = super().form_invalid(form)
        if form.has_error(NON_FIELD_ERRORS, "throttled"):
            response.status_code = 429
        return response


class ThrottledObtainAuthToken(ObtainAuthToken):
    """`POST /api/token/` with {"username", "password"} → {"token"}; 429 while throttled."""

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = request.data if hasattr(request.data, "get") else {}  # a JSON list is the serializer's to refuse
        wait = login_lockout(username=str(data.get("username") or ""), ip=client_ip(request))
        if wait:
            return Response({"detail": lockout_message(wait)}, status=status.HTTP_429_TOO_MANY_REQUESTS,
                            headers={"Retry-After": str(wait)})
        return super().post(request, *args, **kwargs)


def login_view(request: HttpRequest) -> HttpResponse:
    return ThrottledLoginView.as_view()(request)
