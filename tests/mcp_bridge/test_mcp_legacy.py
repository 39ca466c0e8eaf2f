"""MCP 2025-11-25 and older: initialize, version negotiation, statelessness, legacy error codes."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types import methods as sdk_methods

from mcp_bridge.protocol import HANDSHAKE_VERSIONS, McpHeaders
from tests.mcp_bridge.conftest import call_legacy, error_of, legacy_request, post, result_of
from tests.mcp_bridge.fakes import FakeBackend

INITIALIZE = {"capabilities": {}, "clientInfo": {"name": "pytest", "version": "1.0"}}

EVERY_METHOD: list[tuple[str, dict[str, Any] | None]] = [
    ("initialize", {**INITIALIZE, "protocolVersion": "2025-11-25"}),
    ("ping", None),
    ("tools/list", None),
    ("tools/call", {"name": "search_context", "arguments": {"query": "token"}}),
    ("resources/list", None),
    ("resources/templates/list", None),
    ("resources/read", {"uri": "evergreen://evergreen/EG-001"}),
    ("prompts/list", None),
    ("prompts/get", {"name": "chat"}),
]


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
@pytest.mark.parametrize(("method", "params"), EVERY_METHOD)
def test_every_method_answers_a_result_the_sdk_accepts_at_each_handshake_version(
    backend: FakeBackend, version: str, method: str, params: dict[str, Any] | None
) -> None:
    result = result_of(call_legacy(backend, method, params, version=version))
    sdk_methods.validate_server_result(method, version, result)
    assert not {"resultType", "ttlMs", "cacheScope", "_meta"} & set(result)


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_initialize_echoes_a_supported_version(backend: FakeBackend, version: str) -> None:
    result = result_of(call_legacy(backend, "initialize", {**INITIALIZE, "protocolVersion": version}, version=None))
    assert result["protocolVersion"] == version


@pytest.mark.parametrize("requested", ["2026-07-28", "1.0.0", "2099-01-01"])
def test_initialize_offers_the_latest_handshake_version_otherwise(backend: FakeBackend, requested: object) -> None:
    result = result_of(call_legacy(backend, "initialize", {**INITIALIZE, "protocolVersion": requested}, version=None))
    assert result["protocolVersion"] == "2025-11-25"


def test_initialize_carries_capabilities_server_info_and_instructions(backend: FakeBackend) -> None:
    result = result_of(call_legacy(backend, "initialize", {**INITIALIZE, "protocolVersion": "2025-11-25"}))
    assert result["capabilities"] == {
        "tools": {"listChanged": False},
        "resources": {"subscribe": False, "listChanged": False},
        "prompts": {"listChanged": False},
    }
    assert result["serverInfo"]["name"] == "evergreen-evergreen"
    assert "Citation rules of this knowledge base" in result["instructions"]


def test_the_handshake_mints_no_session(backend: FakeBackend) -> None:
    outcome = call_legacy(backend, "initialize", {**INITIALIZE, "protocolVersion": "2025-11-25"}, version=None)
    assert outcome.headers == ()


def test_requests_work_without_a_prior_initialize(backend: FakeBackend) -> None:
    tools = result_of(call_legacy(backend, "tools/list"))["tools"]
    assert tools[0]["name"] == "search_context"


def test_a_missing_version_header_is_served_as_legacy(backend: FakeBackend) -> None:
    result = result_of(call_legacy(backend, "tools/list", version=None))
    assert "resultType" not in result


@pytest.mark.parametrize("method", ["server/discover", "logging/setLevel", "completion/complete", "nope"])
def test_an_unknown_legacy_method_is_method_not_found_in_a_200(backend: FakeBackend, method: str) -> None:
    outcome = call_legacy(backend, method)
    assert outcome.status == 200
    assert error_of(outcome)["code"] == -32601


def test_invalid_params_travel_in_a_200(backend: FakeBackend) -> None:
    outcome = call_legacy(backend, "tools/call", {"name": "no_such_tool"})
    assert outcome.status == 200 and error_of(outcome)["code"] == -32602


def test_a_missing_resource_is_minus_32002_with_its_uri(backend: FakeBackend) -> None:
    outcome = call_legacy(backend, "resources/read", {"uri": "evergreen://evergreen/EG-999"})
    assert outcome.status == 200
    assert error_of(outcome) == {
        "code": -32002,
        "message": "Resource not found",
        "data": {"code": "not_found", "uri": "evergreen://evergreen/EG-999"},
    }


def test_an_unsupported_version_header_on_a_legacy_body_is_a_400(backend: FakeBackend) -> None:
    outcome = post(backend, legacy_request("tools/list"), McpHeaders("2024-01-01"))
    assert outcome.status == 400
    assert error_of(outcome)["data"]["supported"][0] == "2026-07-28"
