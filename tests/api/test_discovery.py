"""Discovery (issue 10): /.well-known/llms.txt, the MCP server card and catalog, and pages that link the
machine interfaces in their Link header."""

from __future__ import annotations

import re
from typing import Any

import pytest

from mcp_bridge.protocol import SUPPORTED_VERSIONS

pytestmark = pytest.mark.django_db

CLIENT = {"name": "pytest", "version": "1"}
CARD_NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")  # the v2 schema's pattern
CARD_REQUIRED = {"$schema", "description", "name", "version"}
CARD_FIELDS = CARD_REQUIRED | {"title", "websiteUrl", "remotes", "icons", "repository", "_meta"}


@pytest.mark.parametrize("prefix", ["", "/t/evergreen"])
def test_well_known_llms_txt_is_llms_txt(client: Any, demo: Any, prefix: str) -> None:
    well_known = client.get(f"{prefix}/.well-known/llms.txt")
    llms = client.get(f"{prefix}/llms.txt")

    assert well_known.status_code == 200
    assert well_known.content == llms.content
    assert well_known["ETag"] == llms["ETag"]
    assert well_known["Content-Type"] == "text/markdown; charset=utf-8"


@pytest.mark.parametrize("path", ["/mcp/server-card", "/.well-known/mcp/server-card.json"])
def test_the_server_card_names_the_endpoint_and_the_versions_initialize_answers(
    client: Any, demo: Any, path: str
) -> None:
    response = client.get(f"/t/evergreen{path}")
    card = response.json()

    assert response.status_code == 200
    assert response["Content-Type"] == "application/mcp-server-card+json; charset=utf-8"
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["ETag"] and response["X-Content-Type-Options"] == "nosniff"
    assert CARD_REQUIRED <= set(card) <= CARD_FIELDS
    assert card["$schema"] == "https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json"
    assert CARD_NAME.match(card["name"]) and card["name"] == "testserver/evergreen-evergreen"
    assert 1 <= len(card["description"]) <= 100
    assert card["remotes"] == [
        {
            "type": "streamable-http",
            "url": "http://testserver/t/evergreen/mcp",
            "supportedProtocolVersions": list(SUPPORTED_VERSIONS),
        }
    ]
    initialize = client.post(
        "/t/evergreen/mcp",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT},
        },
        content_type="application/json",
        headers={"Accept": "application/json, text/event-stream"},
    ).json()["result"]["serverInfo"]
    assert card["version"] == initialize["version"]
    assert card["name"].endswith("/" + initialize["name"])


def test_a_private_namespace_card_asks_for_the_key_and_needs_one(client: Any, demo: Any) -> None:
    demo.is_public = False
    demo.save(update_fields=["is_public"])

    assert client.get("/t/evergreen/mcp/server-card").status_code == 404


def test_the_catalog_points_at_the_card(client: Any, demo: Any) -> None:
    catalog = client.get("/.well-known/mcp/catalog.json").json()

    assert catalog["specVersion"] == "draft"
    (entry,) = catalog["entries"]
    assert entry["type"] == "application/mcp-server-card+json"
    assert entry["url"] == "http://testserver/mcp/server-card"
    assert entry["identifier"] == "urn:air:testserver:evergreen-evergreen"
    assert client.get("/mcp/server-card").status_code == 200


@pytest.mark.parametrize("route", ["", "entries/", "entries/EG-202", "docs/protocol-stack", "metrics.html"])
def test_html_pages_link_the_mcp_endpoint_the_cards_and_the_openapi_document(
    client: Any, demo: Any, route: str
) -> None:
    link = client.get(f"/t/evergreen/{route}")["Link"]

    assert '</t/evergreen/mcp>; rel="service"' in link
    assert '</t/evergreen/mcp/server-card>; rel="service-meta"; type="application/mcp-server-card+json"' in link
    assert '</t/evergreen/.well-known/agent-card.json>; rel="service-meta"' in link
    assert '</api/schema/>; rel="service-desc"' in link
    assert '</t/evergreen/llms.txt>; rel="describedby"; type="text/markdown"' in link
    for target in re.findall(r"<([^>]+)>", link):
        assert client.get(target).status_code == 200 or target.endswith("/mcp"), target
