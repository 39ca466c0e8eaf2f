"""HTTP-level refusals and JSON-RPC framing of /mcp, in both eras."""

from __future__ import annotations

import pytest

from knowledge.retrieval.contract.records import AgentNamespace
from mcp_bridge.jsonrpc import INTERNAL_ERROR_MESSAGE, INVALID_BODY_MESSAGE, Outcome
from mcp_bridge.protocol import McpHeaders, check_http, handle_post
from tests.mcp_bridge.conftest import MODERN, call_legacy, call_modern, error_of, modern_request, post, result_of
from tests.mcp_bridge.fakes import FakeBackend

HANDSHAKE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pytest", "version": "1"}}

JSON = "application/json"
BOTH = "application/json, text/event-stream"


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "HEAD"])
def test_it_refuses_every_method_but_post_with_405_and_allow(method: str) -> None:
    assert check_http(method, accept=BOTH, content_type=JSON) == Outcome(405, None, (("Allow", "POST"),))


@pytest.mark.parametrize("accept", [None, "", "text/event-stream", "text/html"])
def test_it_answers_406_when_json_is_not_acceptable(accept: str | None) -> None:
    outcome = check_http("POST", accept=accept, content_type=JSON)
    assert outcome is not None and outcome.status == 406


@pytest.mark.parametrize("accept", [JSON, BOTH, "*/*", "application/*", "text/html, application/json;q=0.9"])
def test_it_accepts_json_and_wildcards(accept: str) -> None:
    assert check_http("post", accept=accept, content_type="application/json; charset=utf-8") is None


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_it_answers_415_for_a_body_that_is_not_json(content_type: str | None) -> None:
    outcome = check_http("POST", accept=BOTH, content_type=content_type)
    assert outcome is not None and outcome.status == 415


def test_406_comes_before_415() -> None:
    outcome = check_http("POST", accept="text/html", content_type="text/plain")
    assert outcome is not None and outcome.status == 406


@pytest.mark.parametrize("body", [b"{", b"\xff\xfe{}", b'{"a": NaN}', b"", b"1" * 5000])
def test_unparseable_bodies_are_parse_errors_with_a_null_id(backend: FakeBackend, body: bytes) -> None:
    outcome = handle_post(body, McpHeaders(), backend)
    assert outcome.status == 400
    error = {"code": -32700, "message": "Parse error", "data": {"code": "parse_error"}}
    assert outcome.body == {"jsonrpc": "2.0", "id": None, "error": error}


def test_deep_nesting_is_a_parse_error_not_a_crash(backend: FakeBackend) -> None:
    outcome = handle_post(b"[" * 100_000 + b"]" * 100_000, McpHeaders(), backend)
    assert outcome.status == 400 and error_of(outcome)["code"] == -32700


@pytest.mark.parametrize("headers", [McpHeaders(), McpHeaders(protocol_version=MODERN)])
def test_a_batch_is_an_invalid_request(backend: FakeBackend, headers: McpHeaders) -> None:
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    outcome = post(backend, batch, headers)
    assert outcome.status == 400
    assert error_of(outcome) == {"code": -32600, "message": INVALID_BODY_MESSAGE, "data": {"code": "invalid_request"}}


@pytest.mark.parametrize("request_id", [None, True, 1.5, [1], {"a": 1}])
def test_an_unusable_id_is_an_invalid_request(backend: FakeBackend, request_id: object) -> None:
    outcome = post(backend, {"jsonrpc": "2.0", "id": request_id, "method": "ping"})
    assert outcome.status == 400
    assert outcome.body is not None and outcome.body["id"] is None
    assert error_of(outcome)["code"] == -32600


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": 7},
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1, 2]},
        {"jsonrpc": "2.0", "id": 1},
    ],
)
def test_a_malformed_envelope_is_an_invalid_request_echoing_the_id(backend: FakeBackend, message: object) -> None:
    outcome = post(backend, message)
    assert outcome.status == 400
    assert outcome.body is not None and outcome.body["id"] == 1 and error_of(outcome)["code"] == -32600


def test_string_ids_are_echoed(backend: FakeBackend) -> None:
    outcome = post(backend, {"jsonrpc": "2.0", "id": "abc", "method": "ping"})
    assert outcome.body == {"jsonrpc": "2.0", "id": "abc", "result": {}}


def test_legacy_notifications_are_accepted_with_202_and_no_body(backend: FakeBackend) -> None:
    outcome = post(backend, {"jsonrpc": "2.0", "method": "notifications/initialized"}, McpHeaders("2025-11-25"))
    assert outcome == Outcome(202)
    assert backend.calls == []


def test_legacy_posted_responses_are_accepted_with_202(backend: FakeBackend) -> None:
    assert post(backend, {"jsonrpc": "2.0", "id": 5, "result": {}}) == Outcome(202)


def test_modern_notifications_are_accepted_with_202(backend: FakeBackend) -> None:
    message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert post(backend, message, McpHeaders(protocol_version=MODERN)) == Outcome(202)


def test_a_modern_notification_at_an_unknown_version_is_refused(backend: FakeBackend) -> None:
    outcome = post(backend, {"jsonrpc": "2.0", "method": "notifications/x"}, McpHeaders("2099-01-01"))
    assert outcome.status == 400
    assert error_of(outcome)["code"] == -32022 and outcome.body is not None and outcome.body["id"] is None


def test_a_modern_notification_without_the_version_header_is_a_header_mismatch(backend: FakeBackend) -> None:
    message, _ = modern_request("notifications/cancelled")
    del message["id"]
    outcome = post(backend, message)
    assert outcome.status == 400 and error_of(outcome)["code"] == -32020


def test_a_malformed_notification_is_an_invalid_request(backend: FakeBackend) -> None:
    outcome = post(backend, {"jsonrpc": "2.0", "method": 3})
    assert outcome.status == 400 and error_of(outcome)["code"] == -32600


def test_modern_posted_responses_are_refused(backend: FakeBackend) -> None:
    outcome = post(backend, {"jsonrpc": "2.0", "id": 5, "result": {}}, McpHeaders(protocol_version=MODERN))
    assert outcome.status == 400 and error_of(outcome)["code"] == -32600


@pytest.mark.parametrize("call", [call_legacy, call_modern])
def test_a_backend_crash_is_an_internal_error_never_an_exception(backend: FakeBackend, call: object) -> None:
    backend.fail_with = RuntimeError("database is down")
    outcome = call(backend, "tools/call", {"name": "search_context", "arguments": {"query": "token"}})  # type: ignore[operator]
    assert outcome.status == 200
    assert error_of(outcome) == {"code": -32603, "message": INTERNAL_ERROR_MESSAGE, "data": {"code": "internal_error"}}
    assert "database" not in str(outcome.body)


def test_a_backend_crash_while_listing_resources_is_an_internal_error(backend: FakeBackend) -> None:
    backend.fail_with = KeyError("boom")
    outcome = call_modern(backend, "resources/list")
    assert error_of(outcome)["code"] == -32603 and outcome.body is not None and outcome.body["id"] == 1


def test_a_backend_that_cannot_even_name_its_namespace_still_gets_an_answer() -> None:
    class Broken(FakeBackend):
        def namespace(self) -> AgentNamespace:
            raise RuntimeError("no namespace")

    outcome = call_legacy(Broken(), "initialize", HANDSHAKE)
    assert error_of(outcome)["code"] == -32603


def test_ping_answers_an_empty_result_in_the_legacy_era(backend: FakeBackend) -> None:
    assert result_of(call_legacy(backend, "ping")) == {}
