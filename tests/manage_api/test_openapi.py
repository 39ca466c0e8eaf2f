"""The management API's OpenAPI: valid, complete (every route, filter and error), and true of real answers."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from django.urls import URLPattern, URLResolver
from drf_spectacular.validation import validate_schema

from manage_api import urls as manage
from manage_api.openapi import manage_schema
from tests.manage_api.routes import BASE, FIRST, ROUTES, call

pytestmark = pytest.mark.django_db


def json_schema(node: Any) -> Any:
    """OpenAPI 3.0 `nullable: true` as JSON Schema's type list, so jsonschema can check real answers."""
    if isinstance(node, list):
        return [json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: json_schema(value) for key, value in node.items() if key != "nullable"}
    if node.get("nullable") and "type" in node:
        converted["type"] = [node["type"], "null"]
    return converted


def _route_count(patterns: list[URLPattern | URLResolver]) -> int:
    return len(patterns)


def test_the_schema_is_valid_and_documents_every_route_filter_and_error(client: Any) -> None:
    response = client.get("/api/manage/schema/?format=json")
    assert response.status_code == 200
    schema = response.json()
    validate_schema(schema)
    paths = schema["paths"]
    assert len(paths) == len(manage.urlpatterns)  # one path per route of the router, and the root
    for path, methods in paths.items():
        for method, operation in methods.items():
            codes = set(operation["responses"])
            assert "401" in codes and "404" in codes and "429" in codes, (method, path)
            if method != "get":
                assert "403" in codes, (method, path)
    entry_filters = {p["name"] for p in paths["/api/manage/entries/"]["get"]["parameters"]}
    assert {
        "state",
        "category",
        "tag",
        "author",
        "reviewer",
        "updated_after",
        "updated_before",
        "approved_after",
        "approved_before",
        "confidence_min",
        "confidence_max",
        "stale",
        "sensitivity",
        "q",
        "ordering",
        "cursor",
        "limit",
    } <= entry_filters
    assert {"personalToken", "session"} <= set(schema["components"]["securitySchemes"])


def test_the_docs_page_lists_the_operations(client: Any) -> None:
    response = client.get("/api/manage/docs/")
    assert response.status_code == 200
    assert b"/api/manage/versions/{id}/approve/" in response.content


def _operation(schema: dict[str, Any], method: str, concrete: str) -> tuple[str, dict[str, Any]]:
    """The documented path template matching a concrete path."""
    import re

    for template, methods in schema["paths"].items():
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(pattern, concrete) and method in methods:
            return template, methods[method]
    raise AssertionError(f"{method} {concrete} is not documented")


def _check(schema: dict[str, Any], method: str, path: str, response: Any) -> None:
    template, operation = _operation(schema, method, path.replace("/t/alpha", ""))
    status = str(response.status_code)
    assert status in operation["responses"], f"{method} {template} answered an undocumented {status}"
    documented = operation["responses"][status]["content"]["application/json"]["schema"]
    body_schema = {**json_schema(documented), "components": json_schema(schema["components"])}
    jsonschema.validate(response.json(), body_schema)


@pytest.mark.parametrize("route", ROUTES, ids=[r.name for r in ROUTES])
def test_real_answers_match_the_schema(world: Any, route: Any) -> None:
    schema = manage_schema()
    route.setup(world)
    path = route.path(world)
    refusals = [("reviewer_b", 404), ("readonly_a", 403 if route.role else 200)]
    for name, _ in refusals:
        response = call(world.callers[name], route, world, path)
        _check(schema, route.method, BASE + path, response)
    response = call(world.callers[FIRST[route.role]], route, world, path)
    assert response.status_code == route.ok
    _check(schema, route.method, BASE + path, response)


def test_error_answers_match_the_schema(world: Any) -> None:
    schema = manage_schema()
    editor = world.callers["editor_a"]
    cases = [
        ("post", BASE + "entries/", editor.post(BASE + "entries/", {"category": "fact"})),
        ("patch", BASE + f"versions/{world.draft.pk}/", editor.patch(BASE + f"versions/{world.draft.pk}/", {})),
        (
            "post",
            BASE + f"versions/{world.draft.pk}/approve/",
            world.callers["reviewer_a"].post(BASE + f"versions/{world.draft.pk}/approve/"),
        ),
    ]
    for method, path, response in cases:
        assert response.status_code >= 400
        _check(schema, method, path, response)
