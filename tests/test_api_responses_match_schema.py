"""Real responses match the OpenAPI schema the app serves (README "API schema and docs"): scripts
and generated clients read the schema, so a field it calls a string must never come back null."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer
from rest_framework.test import APIClient


def _schema() -> dict[str, Any]:
    generated = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(generated))


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0 to JSON Schema: `nullable: true` becomes "or null", refs point into `defs`."""
    if isinstance(node, list):
        return [_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema(v) for k, v in node.items() if k != "nullable"}
    if "$ref" in out:
        out = {"$ref": "#/defs/" + out["$ref"].rsplit("/", 1)[1]}
    return {"anyOf": [out, {"type": "null"}]} if node.get("nullable") else out


def assert_matches_schema(response: Any, method: str, path: str) -> None:
    """The response's body is what the schema says `method path` answers with its status code."""
    schema = _schema()
    template = next(
        p for p in sorted(schema["paths"], key=lambda p: p.count("{"))
        if re.fullmatch(re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(p)), path)
    )
    documented = schema["paths"][template][method.lower()]["responses"]
    assert str(response.status_code) in documented, (method, path, response.status_code, response.content[:300])
    body_schema = documented[str(response.status_code)]["content"]["application/json"]["schema"]
    defs = {name: _json_schema(s) for name, s in schema["components"]["schemas"].items()}
    jsonschema.validate(response.json(), {"defs": defs, **_json_schema(body_schema)})


def test_a_rule_nobody_signed_matches_the_schema_with_updated_by_and_author_null(alice: Any, concept_factory: Any) -> None:
    """A rule loaded by `load_demo` or an import has no author: `updated_by` (and each version's
    `author`) is null, and the schema says it may be."""
    from concepts.services import rule_save

    rule_save(concept=concept_factory("nchoosek"), user=None, pattern="choose")
    client = APIClient()
    client.force_authenticate(alice)
    for path in ("/api/rules/", "/api/rules/nchoosek/"):
        response = client.get(path)
        assert response.status_code == 200
        assert_matches_schema(response, "GET", path)
    assert client.get("/api/rules/nchoosek/").json()["versions"][0]["author"] is None


def test_a_run_not_finished_yet_matches_the_schema_with_finished_at_null(alice: Any) -> None:
    """A queued or running extraction run has no `finished_at` yet: null, as the schema says."""
    from concepts.models import ExtractionRun

    run = ExtractionRun.objects.create(fingerprint="x")
    client = APIClient()
    client.force_authenticate(alice)
    for path in ("/api/extraction-runs/", f"/api/extraction-runs/{run.pk}/"):
        response = client.get(path)
        assert response.status_code == 200
        assert_matches_schema(response, "GET", path)
    assert client.get(f"/api/extraction-runs/{run.pk}/").json()["finished_at"] is None


def test_a_page_past_the_last_is_a_404_the_schema_documents(alice: Any, problem_factory: Any) -> None:
    """`GET /api/problems/?page=N` past the last page answers 404 {"detail": "Invalid page."}: a
    script paging until it stops needs the schema to say so."""
    problem_factory("One problem.", title="One")
    client = APIClient()
    client.force_authenticate(alice)
    response = client.get("/api/problems/", {"page": 99})
    assert response.status_code == 404 and response.json() == {"detail": "Invalid page."}
    assert_matches_schema(response, "GET", "/api/problems/")
