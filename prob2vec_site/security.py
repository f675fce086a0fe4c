"""Site-wide request hardening: bounded request parsing, the body-size limit, the Content-Security-Policy
header, and logs of refused requests without tracebacks. No business logic; settings.py wires these in.
"""

from __future__ import annotations

import io
import logging
from typing import Any, Callable

from django.conf import settings
from django.core.exceptions import BadRequest, PermissionDenied, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import render
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import DataAndFiles, FormParser, JSONParser, MultiPartParser


BIGINT_MAX = 2**63 - 1


def whole_number(value: Any, maximum: int = BIGINT_MAX) -> int | None:
    """A non-negative integer from a request parameter, or None: ASCII digits only (`"²".isdigit()` is
    True, and 5,000 digits pass isdigit() but not int()), and no larger than a database id can be."""
    if not isinstance(value, str) or not value.isascii() or not value.isdigit() or len(value) > 19:
        return None
    number = int(value)
    return number if number <= maximum else None


def body_limit() -> int | None:
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def too_large_message(limit: int, length: int | None = None) -> str:
    got = f"{length:,} bytes" if length is not None else f"more than {limit:,} bytes"
    return f"The request body is {got}; the limit is {limit:,} bytes. Nothing was read or saved."


class RequestTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "request_too_large"


def _read_bounded(stream: Any) -> bytes:
    """The whole body, or RequestTooLarge as soon as it passes the limit (never read past it)."""
    if stream is None:
        return b""
    limit = body_limit()
    if limit is None:
        return stream.read()
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise RequestTooLarge(too_large_message(limit))
    return data


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser, with the body limit (DRF reads the stream, past Django's own check) and a 400
    for bodies Python's json module does not refuse cleanly: nesting deeper than the recursion limit
    (RecursionError, not a ValueError) among them."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict[str, Any] | None = None) -> Any:
        data = _read_bounded(stream)
        try:
            return super().parse(io.BytesIO(data), media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply") from None
        except UnicodeError as exc:
            raise ParseError(f"JSON parse error - the body is not valid text ({exc.reason})") from None


class BoundedFormParser(FormParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict[str, Any] | None = None) -> QueryDict:
        data = _read_bounded(stream)
        return super().parse(io.BytesIO(data), media_type, parser_context)


class FieldsOnlyMultiPartParser(MultiPartParser):
    """Multipart forms (`curl -F`, a browser form) for their fields. No API endpoint takes a file, so a
    body with one is refused; the body's size is bounded by its Content-Length (BodySizeLimitMiddleware),
    checked here again for a view that is not behind the middleware."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict[str, Any] | None = None) -> DataAndFiles:
        request = (parser_context or {}).get("request")
        limit = body_limit()
        length = int(getattr(request, "META", {}).get("CONTENT_LENGTH") or 0) if request is not None else 0
        if limit is not None and length > limit:
            raise RequestTooLarge(too_large_message(limit, length))
        parsed = super().parse(stream, media_type, parser_context)
        if parsed.files:
            raise ParseError("The API takes no files: send the fields as JSON or as a form.")
        return parsed


# --- the body-size limit, before anything reads the body ---------------------------------------------


def max_body_bytes(limit: Callable[[], int]) -> Callable[[Any], Any]:
    """Let a view take bodies up to `limit()` bytes (an upload page) instead of DATA_UPLOAD_MAX_MEMORY_SIZE."""

    def decorate(view: Any) -> Any:
        view.max_body_bytes = limit
        return view

    return decorate


class BodySizeLimitMiddleware:
    """Refuse (413) a request whose Content-Length is over the limit before anything reads it.

    Django checks DATA_UPLOAD_MAX_MEMORY_SIZE only when `request.body` or form fields are read, and
    never counts file parts, which it streams to disk; DRF's parsers read the raw stream. This holds
    for every view and parser. It runs before the CSRF middleware, which reads form bodies."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: Any, args: Any, kwargs: Any) -> HttpResponse | None:
        allowance = getattr(view, "max_body_bytes", None)
        limit = allowance() if allowance is not None else body_limit()
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _refuse(request, 400, "The Content-Length header is not a number.")
        if limit is not None and length > limit:
            return _refuse(request, 413, too_large_message(limit, length))
        return None


class NoNulInFormsMiddleware:
    """Refuse (400) a query string or a page's form that holds a NUL character, in any name or value.

    No field of the site can hold one (PostgreSQL text refuses it), and views that read raw request
    values (the practice page's answer, the labelling page's concepts, Django's own choice fields
    querying by a posted slug) would take it to the database and fail there with a 500. API bodies
    are left to DRF, whose fields refuse NUL with a message of their own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: Any, args: Any, kwargs: Any) -> HttpResponse | None:
        sources = [("query string", request.GET)]
        if request.method == "POST" and not request.path.startswith("/api/"):
            sources.append(("form", request.POST))
        for where, data in sources:
            for name, values in data.lists():
                if "\x00" in name or any("\x00" in v for v in values):
                    return _refuse(request, 400, f"The {where} field {name.replace(chr(0), '')!r} holds a NUL character (\\u0000), which no field accepts.")
        return None


CSRF_FAILURE_MESSAGE = (
    "This form was sent without a valid security token: the page was open from before you signed in or out "
    "(perhaps in another tab), or your browser keeps no cookies for this site. Go back, reload the page and send it again."
)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """settings.CSRF_FAILURE_VIEW: a form that fails the CSRF check gets the site's own 403 page in plain
    words, not Django's bare one. The reason is logged by the CSRF middleware (django.security.csrf)."""
    return _refuse(request, 403, CSRF_FAILURE_MESSAGE)


def _refuse(request: HttpRequest, status_code: int, message: str) -> HttpResponse:
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message}, status=status_code)
    return render(request, "request_refused.html", {"message": message}, status=status_code)


# --- Content-Security-Policy ----------------------------------------------------------------------------


class ContentSecurityPolicyMiddleware:
    """Send settings.CONTENT_SECURITY_POLICY on every response that has none of its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response


# --- logs ---------------------------------------------------------------------------------------------


class NoTracebackForClientErrors(logging.Filter):
    """A refused request (403, 400) is the client's doing, not a bug: log its one line, not a traceback.

    Django logs `PermissionDenied` and bad requests with the exception attached, so every 403 printed
    a full traceback and buried the real errors."""

    CLIENT_ERRORS = (PermissionDenied, BadRequest, SuspiciousOperation)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], self.CLIENT_ERRORS):
            record.exc_info = None
            record.exc_text = None
        return True
