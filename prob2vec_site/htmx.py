"""htmx glue for the whole site, in one middleware rather than in each view.

- Every response varies on `HX-Request`: a page and its htmx fragment share a URL (the list pushes
  `?q=...` into the address bar), so without `Vary` the browser's cache may hand the fragment back
  for a full page load (the back button then shows an unstyled fragment).
- An htmx request whose session has expired is answered with `HX-Redirect` to the login page,
  carrying `next` = the page the person is on (`HX-Current-URL`), not the fragment's URL. The
  browser's XMLHttpRequest follows a plain 302 by itself, so without this the login page would be
  swapped into a panel. `X-Login-Required` tells static/js/site.js to keep unsaved edits as drafts
  and not to ask "leave this page?" on the way.
"""

from __future__ import annotations

from typing import Any, Callable
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django.utils.cache import patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme


def _login_path() -> str:
    return urlsplit(resolve_url(settings.LOGIN_URL)).path


def _page_path(request: HttpRequest) -> str:
    """The path and query of the page the htmx request came from, or "/" when it is absent or foreign."""
    current = request.headers.get("HX-Current-URL", "")
    if current and url_has_allowed_host_and_scheme(current, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        parts = urlsplit(current)
        if parts.path and not parts.path.startswith(_login_path()):
            return parts.path + (f"?{parts.query}" if parts.query else "")
    return "/"


def needs_login(request: HttpRequest, response: HttpResponse) -> bool:
    if response.status_code == 401:
        return True
    if response.status_code in (301, 302, 303, 307, 308) and response.has_header("Location"):
        return urlsplit(response["Location"]).path == _login_path()
    return False


class HtmxSiteMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> Any:
        response = self.get_response(request)
        patch_vary_headers(response, ("HX-Request",))
        is_htmx = request.headers.get("HX-Request") == "true"
        if is_htmx and not request.path.startswith("/api/") and needs_login(request, response):
            login = f"{resolve_url(settings.LOGIN_URL)}?{urlencode({'next': _page_path(request)})}"
            redirect = HttpResponse(status=200)
            redirect["HX-Redirect"] = login
            redirect["X-Login-Required"] = "1"
            patch_vary_headers(redirect, ("HX-Request", "Cookie"))
            return redirect
        return response


def reload_when_finished() -> HttpResponse:
    """The answer to a job page's status poll that finds the job finished (done, failed or cancelled):
    the poll swaps the status card alone, and what lies around it (figures, tables, the Cancel button,
    "Make active") changes too, so the browser reloads the page. 204: nothing is swapped meanwhile."""
    response = HttpResponse(status=204)
    response["HX-Refresh"] = "true"
    return response
