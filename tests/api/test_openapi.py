"""The OpenAPI description at /api/schema/ and its docs page; real answers match the documented shapes."""

from __future__ import annotations

from typing import Any

import jsonschema
import orjson
import pytest
from drf_spectacular.validation import validate_schema

from api.openapi.views import api_schema
from tests.golden.golden import assert_golden

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


def response_schema(schema: dict[str, Any], path: str, status: str) -> Any:
    return json_schema(schema["paths"][path]["get"]["responses"][status]["content"]["application/json"]["schema"])


def test_the_schema_is_valid_openapi_and_matches_its_golden_file(client: Any) -> None:
    response = client.get("/api/schema/?format=json")
    schema = response.json()

    assert response.status_code == 200
    validate_schema(schema)
    assert set(schema["paths"]) == {
        "/api/context",
        "/api/entries/{entry_id}",
        "/api/entries/{entry_id}.md",
        "/api/prompt-pack",
        "/api/metrics",
        "/api/changes",
        "/api/verify",
    }
    assert_golden("openapi.json", orjson.dumps(schema, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))


def test_real_answers_match_the_documented_shapes(client: Any, demo: Any, alpha: Any) -> None:
    schema = api_schema()
    cases = [
        ("/api/context?topic=token%20预算", "/api/context", "200"),
        ("/api/context?topic=量子色动力学&budget=200", "/api/context", "200"),
        ("/api/context?budget=x", "/api/context", "400"),
        ("/api/entries/EG-202", "/api/entries/{entry_id}", "200"),
        ("/api/entries/EG-999", "/api/entries/{entry_id}", "404"),
        ("/api/metrics", "/api/metrics", "200"),
        ("/api/changes?since=0", "/api/changes", "200"),
        ("/api/changes?since=never", "/api/changes", "400"),
    ]
    for url, path, status in cases:
        response = client.get(url)
        assert str(response.status_code) == status, url
        jsonschema.validate(response.json(), response_schema(schema, path, status))


def test_the_docs_page_lists_every_operation_without_outside_assets(client: Any) -> None:
    page = client.get("/api/docs/").content.decode()

    for operation in ("context_get", "entry_get", "entry_markdown_get", "prompt_pack_get", "metrics_get"):
        assert f'id="{operation}"' in page
    assert "<script" not in page
    assert "http" not in page.split("<body>")[0].replace('content="width', "")


def test_a_verify_report_matches_its_documented_shape(client: Any, demo: Any) -> None:
    schema = api_schema()
    response = client.post(
        "/api/verify", {"answer": "Ask for 2000 tokens [EG-202]. Elsewhere [EG-999]."}, content_type="application/json"
    )
    documented = schema["paths"]["/api/verify"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert response.status_code == 200
    jsonschema.validate(response.json(), json_schema(documented))
