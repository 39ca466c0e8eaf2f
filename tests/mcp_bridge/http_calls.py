"""Driving POST /mcp and /a2a through Django's test client, as the SDKs would (tests only)."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

from mcp_bridge.protocol import McpHeaders
from tests.mcp_bridge.conftest import legacy_request, modern_request

ACCEPT = "application/json, text/event-stream"


def post(
    client: Client,
    path: str,
    body: Any,
    *,
    headers: dict[str, str] | None = None,
    content_type: str = "application/json",
) -> Any:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.generic("POST", path, raw, content_type=content_type, headers={"Accept": ACCEPT, **(headers or {})})


def http_headers(headers: McpHeaders) -> dict[str, str]:
    names = {"MCP-Protocol-Version": headers.protocol_version, "Mcp-Method": headers.method, "Mcp-Name": headers.name}
    return {name: value for name, value in names.items() if value is not None}


def modern(client: Client, path: str, method: str, params: dict[str, Any] | None = None) -> Any:
    message, headers = modern_request(method, params)
    return post(client, path, message, headers=http_headers(headers))


def legacy(client: Client, path: str, method: str, params: dict[str, Any] | None = None) -> Any:
    return post(client, path, legacy_request(method, params), headers={"MCP-Protocol-Version": "2025-11-25"})


def tool(client: Client, path: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    response = modern(client, path, "tools/call", {"name": name, "arguments": arguments})
    assert response.status_code == 200, response.content
    result: dict[str, Any] = response.json()["result"]
    return result


def details(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is True
    found: dict[str, Any] = json.loads(result["content"][1]["text"])
    return found
