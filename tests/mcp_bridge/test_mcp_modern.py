"""MCP 2026-07-28: server/discover, the per-request envelope, the header ladder and the result fields."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types import methods as sdk_methods

from mcp_bridge.ports import CachePolicy
from mcp_bridge.protocol import SUPPORTED_VERSIONS, McpHeaders
from tests.mcp_bridge.conftest import MODERN, call_modern, error_of, modern_request, post, result_of
from tests.mcp_bridge.fakes import SECRET_BODY_MARKER, FakeBackend, demo_info

EVERY_METHOD: list[tuple[str, dict[str, Any]]] = [
    ("server/discover", {}),
    ("tools/list", {}),
    ("tools/call", {"name": "search_context", "arguments": {"query": "token", "budget": 800}}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": "evergreen://evergreen/EG-202"}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "coding"}),
]


@pytest.mark.parametrize(("method", "params"), EVERY_METHOD)
def test_every_method_answers_a_result_the_sdk_accepts_for_2026_07_28(
    backend: FakeBackend, method: str, params: dict[str, Any]
) -> None:
    result = result_of(call_modern(backend, method, params))
    sdk_methods.validate_server_result(method, MODERN, result)
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {
        "name": "evergreen-evergreen",
        "title": "Evergreen · AI Context Engine",
        "version": "1.2.0",
        "websiteUrl": "https://evergreen.example.com/t/evergreen",
    }


@pytest.mark.parametrize(("method", "params"), EVERY_METHOD)
def test_cache_hints_follow_the_namespace_http_caching(
    backend: FakeBackend, method: str, params: dict[str, Any]
) -> None:
    result = result_of(call_modern(backend, method, params))
    if method in sdk_methods.CACHEABLE_METHODS:
        assert (result["ttlMs"], result["cacheScope"]) == (900_000, "public")
    else:
        assert "ttlMs" not in result and "cacheScope" not in result


def test_a_private_namespace_marks_cached_results_private(backend: FakeBackend) -> None:
    backend.policy = CachePolicy(max_age=60, public=False)
    result = result_of(call_modern(backend, "tools/list"))
    assert (result["ttlMs"], result["cacheScope"]) == (60_000, "private")


def test_discover_names_both_eras_and_the_capabilities(backend: FakeBackend) -> None:
    result = result_of(call_modern(backend, "server/discover"))
    assert result["supportedVersions"] == list(SUPPORTED_VERSIONS)
    assert result["supportedVersions"][0] == MODERN
    assert set(result["capabilities"]) == {"tools", "resources", "prompts"}


def test_instructions_restate_the_rules_but_never_entry_text(backend: FakeBackend) -> None:
    instructions = result_of(call_modern(backend, "server/discover"))["instructions"]
    for rule in backend.rules():
        assert rule in instructions
    assert "search_context" in instructions and "matched=false" in instructions
    assert SECRET_BODY_MARKER not in instructions
    assert all(entry["summary"] not in instructions for entry in backend.entries)


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel", "subscriptions/listen", "nope/never"])
def test_an_unknown_method_is_404_with_method_not_found(backend: FakeBackend, method: str) -> None:
    outcome = call_modern(backend, method, {"protocolVersion": "2025-11-25", "capabilities": {}})
    assert outcome.status == 404
    assert error_of(outcome)["code"] == -32601


def test_a_request_without_the_envelope_is_invalid_params(backend: FakeBackend) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    outcome = post(backend, message, McpHeaders(MODERN, "tools/list"))
    assert outcome.status == 400 and error_of(outcome)["code"] == -32602


def test_a_missing_capabilities_key_is_invalid_params(backend: FakeBackend) -> None:
    message, headers = modern_request("tools/list")
    del message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    outcome = post(backend, message, headers)
    assert outcome.status == 400 and error_of(outcome)["code"] == -32602


def test_a_modern_body_without_the_version_header_is_a_header_mismatch(backend: FakeBackend) -> None:
    message, headers = modern_request("tools/list")
    outcome = post(backend, message, McpHeaders(None, headers.method))
    assert outcome.status == 400 and error_of(outcome)["code"] == -32020


def test_a_version_header_that_disagrees_with_the_body_is_a_header_mismatch(backend: FakeBackend) -> None:
    message, headers = modern_request("tools/list")
    outcome = post(backend, message, McpHeaders("2025-11-25", headers.method))
    assert outcome.status == 400 and error_of(outcome)["code"] == -32020


@pytest.mark.parametrize("method_header", [None, "tools/call", "TOOLS/LIST"])
def test_an_mcp_method_header_that_disagrees_is_a_header_mismatch(
    backend: FakeBackend, method_header: str | None
) -> None:
    message, _ = modern_request("tools/list")
    outcome = post(backend, message, McpHeaders(MODERN, method_header))
    assert outcome.status == 400 and error_of(outcome)["code"] == -32020


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "search_context", "arguments": {"query": "x"}}),
        ("prompts/get", {"name": "coding"}),
        ("resources/read", {"uri": "evergreen://evergreen/EG-202"}),
    ],
)
@pytest.mark.parametrize("name_header", [None, "other", "=?base64?!!!?="])
def test_an_mcp_name_header_that_disagrees_is_a_header_mismatch(
    backend: FakeBackend, method: str, params: dict[str, Any], name_header: str | None
) -> None:
    message, _ = modern_request(method, params)
    outcome = post(backend, message, McpHeaders(MODERN, method, name_header))
    assert outcome.status == 400 and error_of(outcome)["code"] == -32020
    assert backend.calls == []


def test_a_base64_encoded_mcp_name_is_decoded_before_comparison(backend: FakeBackend) -> None:
    uri = "evergreen://evergreen/EG-202"
    message, _ = modern_request("resources/read", {"uri": uri})
    encoded = "=?base64?ZXZlcmdyZWVuOi8vZXZlcmdyZWVuL0VHLTIwMg==?="
    result = result_of(post(backend, message, McpHeaders(MODERN, "resources/read", encoded)))
    assert result["contents"][0]["uri"] == uri


def test_an_unsupported_version_lists_what_is_supported(backend: FakeBackend) -> None:
    message, headers = modern_request("tools/list", version="2099-01-01")
    outcome = post(backend, message, headers)
    assert outcome.status == 400
    assert outcome.body is not None and outcome.body["id"] == 1
    error = error_of(outcome)
    assert error["code"] == -32022
    assert error["data"] == {
        "code": "unsupported_protocol_version",
        "supported": list(SUPPORTED_VERSIONS),
        "requested": "2099-01-01",
    }


def test_a_handshake_version_inside_a_modern_envelope_is_unsupported(backend: FakeBackend) -> None:
    message, headers = modern_request("tools/list", version="2025-11-25")
    outcome = post(backend, message, headers)
    assert outcome.status == 400 and error_of(outcome)["code"] == -32022


def test_a_non_string_version_never_matches_the_header(backend: FakeBackend) -> None:
    message, _ = modern_request("tools/list")
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = 2026
    outcome = post(backend, message, McpHeaders("2026", "tools/list"))
    assert outcome.status == 400 and error_of(outcome)["code"] == -32020


def test_an_unknown_header_version_without_an_envelope_is_unsupported(backend: FakeBackend) -> None:
    outcome = post(backend, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, McpHeaders("1999-01-01", "ping"))
    assert outcome.status == 400 and error_of(outcome)["code"] == -32022
    assert error_of(outcome)["data"]["requested"] == "1999-01-01"


def test_a_known_modern_header_without_an_envelope_is_invalid_params(backend: FakeBackend) -> None:
    outcome = post(backend, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, McpHeaders(MODERN, "tools/list"))
    assert outcome.status == 400 and error_of(outcome)["code"] == -32602


def test_requests_do_not_depend_on_earlier_requests(backend: FakeBackend) -> None:
    first = call_modern(backend, "tools/list")
    second = call_modern(backend, "tools/list")
    assert first == second
    assert "initialize" not in backend.calls


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"arguments": {}}),
        ("tools/call", {"name": "search_context", "arguments": ["query"]}),
        ("tools/call", {"name": "no_such_tool"}),
        ("prompts/get", {"name": "legal"}),
        ("prompts/get", {"name": "coding", "arguments": "x"}),
        ("resources/read", {}),
        ("tools/list", {"cursor": "anything"}),
        ("prompts/list", {"cursor": "anything"}),
    ],
)
def test_malformed_method_params_are_invalid_params_with_400(
    backend: FakeBackend, method: str, params: dict[str, Any]
) -> None:
    outcome = call_modern(backend, method, params)
    assert outcome.status == 400 and error_of(outcome)["code"] == -32602


def test_an_unknown_tool_is_named_in_the_error(backend: FakeBackend) -> None:
    outcome = call_modern(backend, "tools/call", {"name": "no_such_tool", "arguments": {}})
    assert error_of(outcome)["message"] == "Unknown tool: no_such_tool"


def test_another_namespace_serves_its_own_identity() -> None:
    other = FakeBackend(info=demo_info(slug="acme"))
    result = result_of(call_modern(other, "server/discover"))
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "evergreen-acme"
    assert "evergreen://acme/<ID>" in result["instructions"]
