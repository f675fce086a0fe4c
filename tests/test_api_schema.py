"""The OpenAPI schema covers every endpoint, the docs page serves it from our own static files, and
schemathesis, generating requests from the schema, never gets a server error, whoever asks."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error


def _schema() -> dict[str, Any]:
    generated = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(generated))


def _api_routes() -> set[str]:
    """Every URL under /api/ as the schema writes it (`/api/problems/{pk}/`)."""
    found: set[str] = set()

    def walk(patterns: list[Any], prefix: str) -> None:
        for p in patterns:
            route = prefix + str(p.pattern)
            if isinstance(p, URLResolver):
                walk(p.url_patterns, route)
            elif isinstance(p, URLPattern) and route.startswith("api/"):
                found.add("/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route))

    walk(get_resolver().url_patterns, "")
    return found


API = schemathesis.openapi.from_dict(_schema())
API.app = WSGIHandler()


def test_the_schema_documents_every_api_endpoint_with_request_and_response_bodies() -> None:
    schema = _schema()
    undocumented = {"/api/schema/", "/api/docs/"}  # the schema itself and its page
    shape = lambda path: re.sub(r"\{\w+\}", "{}", path)  # noqa: E731  (`pk` is `id` in the schema)
    assert {shape(p) for p in schema["paths"]} == {shape(p) for p in _api_routes() - undocumented}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert any(code.startswith("2") for code in operation["responses"]), (method, path)
            if method in ("post", "put", "patch") and path != "/api/extraction-runs/":
                assert "requestBody" in operation, (method, path)
    schemes = schema["components"]["securitySchemes"]
    assert {"tokenAuth", "cookieAuth"} <= set(schemes)


def test_the_docs_page_serves_swagger_ui_from_our_static_files(client: Any, sam: Any) -> None:
    response = client.get("/api/docs/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "swagger-ui" in page and "<script>" not in page  # its setup is a script file: the CSP allows no inline script
    setup = client.get("/api/docs/?script=")
    assert setup["Content-Type"].startswith("application/javascript") and "/api/schema/" in setup.content.decode()
    assert "cdn" not in page.lower() and "https://" not in page  # the machines are offline
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200 and schema.json()["info"]["title"] == "Prob2Vec Studio API"


@pytest.fixture(autouse=True)
def keep_the_test_connection() -> Any:
    """Django closes the connection when a request finishes; inside a test transaction that would end
    the test's data, so (like Django's own test client) we keep it open while requests run."""
    from django.core import signals
    from django.db import close_old_connections

    for signal in (signals.request_started, signals.request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (signals.request_started, signals.request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def tokens(course: dict[str, Any]) -> dict[str, str]:
    """A token per role; the users have no password (hashing four would triple the fixture's time)."""
    from django.contrib.auth.models import Group, User
    from rest_framework.authtoken.models import Token

    made = {}
    for name, role in [("sam", "student"), ("alice", "ta"), ("ivan", "instructor")]:
        user = User.objects.create(username=name)
        user.groups.add(Group.objects.get(name=role))
        made[name] = Token.objects.create(user=user).key
    return made


FUZZ = settings(
    max_examples=10,
    deadline=None,
    derandomize=True,  # the same requests every run: a failure can be reproduced
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@API.parametrize()
@FUZZ
@pytest.mark.parametrize("who", ["anonymous", "sam", "alice", "ivan"])
def test_no_request_the_schema_allows_gets_a_server_error(case: Any, who: str, tokens: dict[str, str]) -> None:
    headers = {"Authorization": f"Token {tokens[who]}"} if who in tokens else {}
    case.call_and_validate(headers=headers, checks=[not_a_server_error])
