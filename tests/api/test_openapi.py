"""The OpenAPI 3.1 document at /api/schema/: valid for openapi-spec-validator, complete, and true of real answers."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import orjson
import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from openapi_spec_validator import validate

from api.openapi.document import openapi_document
from tests.golden.golden import assert_golden

pytestmark = pytest.mark.django_db

# Routes this document leaves out: the admin, and the management API (its own document: /api/manage/schema/).
UNDOCUMENTED = ("admin/", "api/manage/")


def _routes(patterns: list[Any], prefix: str = "") -> set[str]:
    """Every public route of the URLconf as an OpenAPI path (`<str:entry_id>` → `{entry_id}`)."""
    found: set[str] = set()
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if route.startswith(UNDOCUMENTED) or route.startswith("t/<slug:namespace>/"):
            continue
        if isinstance(pattern, URLResolver):
            found |= _routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            found.add("/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route))
    return found


def _schema(document: dict[str, Any], path: str, status: str, method: str = "get") -> dict[str, Any]:
    response = document["paths"][path][method]["responses"][status]
    if "$ref" in response:
        response = document["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    return response["content"]["application/json"]["schema"]


def test_the_served_document_is_valid_openapi_3_1_and_matches_its_golden_file(client: Any, demo: Any) -> None:
    response = client.get("/api/schema/")
    document = response.json()

    assert response.status_code == 200
    assert document["openapi"] == "3.1.0"
    validate(document)
    assert_golden("openapi.json", orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))


def test_a_document_without_a_namespace_is_valid_too() -> None:
    validate(openapi_document())


def test_every_public_route_is_documented() -> None:
    routes = _routes(get_resolver().url_patterns)
    documented = set(openapi_document()["paths"])

    assert routes - documented == set(), "routes missing from api/openapi/paths.py"
    assert documented - routes == set(), "documented paths that are not routes"


def test_the_parameters_state_the_rules_the_server_enforces(client: Any, demo: Any) -> None:
    document = client.get("/api/schema/").json()
    context = {p["name"]: p for p in document["paths"]["/api/context"]["get"]["parameters"] if "name" in p}

    assert context["category"]["schema"]["enum"] == ["fact", "protocol", "rule", "principle", "workflow", ""]
    assert context["budget"]["schema"]["type"] == "integer"
    assert context["budget"]["allowEmptyValue"] is True
    assert context["topic"]["allowEmptyValue"] is True
    assert context["topic"]["schema"]["maxLength"] == 500
    codes = _schema(document, "/api/context", "400")["properties"]["error"]["properties"]["code"]["enum"]
    assert {"invalid_budget", "unknown_category", "topic_too_long", "repeated_parameter"} <= set(codes)
    # The JSON route's ID pattern cannot match the Markdown twin's last segment.
    entry = document["paths"]["/api/entries/{entry_id}"]["get"]["parameters"][0]["schema"]["pattern"]
    assert re.match(entry, "EG-202") and not re.match(entry, "EG-202.md")


def test_what_the_document_declares_the_server_does(client: Any, demo: Any, no_rate_limit: None) -> None:
    assert client.get("/api/context?category=nonsense").json()["error"]["code"] == "unknown_category"
    assert client.get("/api/context?budget=").json()["budget"] == 2000
    assert client.get("/api/context?topic=&category=").json()["query"] == {
        "topic": "",
        "budget": 2000,
        "category": None,
    }
    assert client.get("/api/context?budget=12.5").json()["error"]["code"] == "invalid_budget"
    assert client.get("/api/entries/EG-202.md")["Content-Type"].startswith("text/markdown")


def test_real_answers_match_the_documented_shapes(client: Any, demo: Any, no_rate_limit: None) -> None:
    document = openapi_document(categories=["fact", "protocol", "rule", "principle", "workflow"])
    cases = [
        ("/api/context?topic=token%20预算", "/api/context", "200"),
        ("/api/context?topic=量子色动力学&budget=200", "/api/context", "200"),
        ("/api/context?budget=x", "/api/context", "400"),
        ("/api/context?release=999", "/api/context", "400"),
        ("/api/entries/EG-202", "/api/entries/{entry_id}", "200"),
        ("/api/entries/EG-999", "/api/entries/{entry_id}", "404"),
        ("/api/entries/EG-202?version=x", "/api/entries/{entry_id}", "400"),
        ("/api/metrics", "/api/metrics", "200"),
        ("/metrics.json", "/metrics.json", "200"),
        ("/api/changes?since=0", "/api/changes", "200"),
        ("/api/changes?since=never", "/api/changes", "400"),
        ("/api/prompt-pack?scenario=nope", "/api/prompt-pack", "400"),
        ("/entries/?page=0", "/entries/", "400"),
        ("/t/nowhere/api/context", "/api/context", "404"),
        ("/healthz", "/healthz", "200"),
    ]
    for url, path, status in cases:
        response = client.get(url)
        assert str(response.status_code) == status, url
        jsonschema.validate(response.json(), _schema(document, path, status))


def test_a_verify_report_matches_its_documented_shape(client: Any, demo: Any) -> None:
    document = openapi_document()
    response = client.post(
        "/api/verify", {"answer": "Ask for 2000 tokens [EG-202]. Elsewhere [EG-999]."}, content_type="application/json"
    )
    assert response.status_code == 200
    jsonschema.validate(response.json(), _schema(document, "/api/verify", "200", "post"))


@pytest.mark.parametrize("url", ["/api/schema/", "/api/docs/", "/healthz"])
def test_schema_docs_and_health_carry_the_promised_headers(client: Any, demo: Any, url: str) -> None:
    response = client.get(url)

    assert response.status_code == 200
    assert "charset=utf-8" in response["Content-Type"]
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["ETag"]
    expected = "no-store" if url == "/healthz" else "public, max-age=900"
    assert response["Cache-Control"] == expected
    if url != "/healthz":
        assert client.get(url, HTTP_IF_NONE_MATCH=response["ETag"]).status_code == 304
    head = client.head(url)
    assert head.content == b""
    assert head["Content-Length"] == str(len(response.content))


def test_the_docs_page_lists_every_operation_without_outside_assets(client: Any, demo: Any) -> None:
    page = client.get("/api/docs/").content.decode()

    for operation in ("context_get", "entry_get", "entry_markdown_get", "llms_txt_get", "mcp_post", "a2a_post"):
        assert f'id="{operation}"' in page
    assert "<script" not in page
    assert "http" not in page.split("<body>")[0].replace('content="width', "")
