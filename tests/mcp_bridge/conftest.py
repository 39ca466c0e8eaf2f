"""Fixtures and request builders for the HTTP-free MCP and A2A tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_bridge.jsonrpc import Outcome
from mcp_bridge.protocol import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    NAME_BEARING,
    McpHeaders,
    handle_post,
)
from tests.mcp_bridge.fakes import FakeBackend, FakeTaskStore
from tests.mcp_bridge.live import LiveServer, live_server

MODERN = "2026-07-28"
CLIENT_INFO = {"name": "pytest", "version": "1.0"}


@pytest.fixture(scope="session")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One gunicorn server (two workers) on a fresh database for the whole session; see tests/mcp_bridge/live.py."""
    with live_server(tmp_path_factory.mktemp("live")) as server:
        yield server


@pytest.fixture
def backend() -> FakeBackend:
    return FakeBackend()


@pytest.fixture
def tasks() -> FakeTaskStore:
    return FakeTaskStore()


def post(backend: FakeBackend, message: Any, headers: McpHeaders | None = None) -> Outcome:
    return handle_post(json.dumps(message).encode(), headers or McpHeaders(), backend)


def modern_request(
    method: str, params: dict[str, Any] | None = None, *, request_id: int | str = 1, version: str = MODERN
) -> tuple[dict[str, Any], McpHeaders]:
    """A 2026-07-28 request with a coherent ``_meta`` envelope and routing headers, as the SDK sends it."""
    body_params = dict(params or {})
    body_params["_meta"] = {
        META_PROTOCOL_VERSION: version,
        META_CLIENT_CAPABILITIES: {},
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }
    field = NAME_BEARING.get(method)
    name = body_params.get(field) if field else None
    headers = McpHeaders(protocol_version=version, method=method, name=name)
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body_params}, headers


def call_modern(backend: FakeBackend, method: str, params: dict[str, Any] | None = None) -> Outcome:
    message, headers = modern_request(method, params)
    return post(backend, message, headers)


def legacy_request(method: str, params: dict[str, Any] | None = None, *, request_id: int | str = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def call_legacy(
    backend: FakeBackend, method: str, params: dict[str, Any] | None = None, *, version: str | None = "2025-11-25"
) -> Outcome:
    return post(backend, legacy_request(method, params), McpHeaders(protocol_version=version))


def result_of(outcome: Outcome) -> dict[str, Any]:
    assert outcome.status == 200, outcome
    assert outcome.body is not None and "result" in outcome.body, outcome.body
    result: dict[str, Any] = outcome.body["result"]
    return result


def error_of(outcome: Outcome) -> dict[str, Any]:
    assert outcome.body is not None and "error" in outcome.body, outcome.body
    error: dict[str, Any] = outcome.body["error"]
    return error
