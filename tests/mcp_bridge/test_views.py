"""The HTTP edges of POST /mcp and /a2a through Django: methods, media types, Origin, size, gate, status codes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from knowledge.models import Namespace
from knowledge.services.api_keys import api_key_create
from tests.configure import configure
from tests.mcp_bridge.conftest import legacy_request, modern_request
from tests.mcp_bridge.http_calls import http_headers, legacy, modern, post
from tests.servingfixtures import alpha, beta, clean_serving_state, demo, no_rate_limit

__all__ = ["alpha", "beta", "clean_serving_state", "demo", "no_rate_limit"]

pytestmark = pytest.mark.django_db

HANDSHAKE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pytest", "version": "1"}}


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "HEAD"])
@pytest.mark.parametrize("path", ["/mcp", "/t/evergreen/mcp", "/a2a", "/t/evergreen/a2a"])
def test_only_post_is_allowed(client: Client, demo: Namespace, method: str, path: str) -> None:
    response = client.generic(method, path)

    assert response.status_code == 405
    assert response["Allow"] == "POST"


def test_a_wrong_accept_is_406_and_a_wrong_content_type_is_415(client: Client, demo: Namespace) -> None:
    ping = legacy_request("ping")
    not_json = client.generic(
        "POST", "/mcp", json.dumps(ping), content_type="application/json", headers={"Accept": "text/html"}
    )
    as_form = post(client, "/mcp", ping, content_type="application/x-www-form-urlencoded")

    assert not_json.status_code == 406 and not_json.json()["error"]["code"] == -32600
    assert as_form.status_code == 415


def test_one_message_per_post_an_array_is_refused(client: Client, demo: Namespace) -> None:
    response = post(client, "/mcp", [legacy_request("ping")])

    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Body must be a single JSON-RPC request or notification object",
            "data": {"code": "invalid_request"},
        },
    }


@pytest.mark.parametrize("path", ["/mcp", "/a2a"])
def test_unparseable_json_is_a_parse_error(client: Client, demo: Namespace, path: str) -> None:
    response = post(client, path, b'{"jsonrpc": "2.0", "id": 1,')

    assert response.json()["error"]["code"] == -32700
    assert response.json()["id"] is None
    assert response.status_code == (400 if path == "/mcp" else 200)  # A2A errors travel in 200 (docs/protocols.md)


def test_an_unknown_method_is_404_with_method_not_found_in_2026_07_28(client: Client, demo: Namespace) -> None:
    response = modern(client, "/mcp", "sampling/createMessage")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == -32601


def test_notifications_are_accepted_with_202_and_no_body(client: Client, demo: Namespace) -> None:
    initialized = post(client, "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    cancelled = post(
        client,
        "/mcp",
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "notifications/cancelled"},
    )

    assert (initialized.status_code, initialized.content) == (202, b"")
    assert (cancelled.status_code, cancelled.content) == (202, b"")


def test_headers_that_contradict_the_body_are_400_header_mismatch(client: Client, demo: Namespace) -> None:
    message, headers = modern_request("tools/call", {"name": "get_metrics", "arguments": {}})
    wrong_name = post(client, "/mcp", message, headers={**http_headers(headers), "Mcp-Name": "get_entry"})
    wrong_method = post(client, "/mcp", message, headers={**http_headers(headers), "Mcp-Method": "tools/list"})

    assert wrong_name.status_code == wrong_method.status_code == 400
    assert wrong_name.json()["error"]["code"] == wrong_method.json()["error"]["code"] == -32020


def test_both_eras_are_served_on_one_endpoint(client: Client, demo: Namespace) -> None:
    handshake = legacy(client, "/t/evergreen/mcp", "initialize", HANDSHAKE)
    discover = modern(client, "/t/evergreen/mcp", "server/discover")

    assert handshake.json()["result"]["protocolVersion"] == "2025-11-25"
    assert "Mcp-Session-Id" not in handshake  # stateless: no session is minted
    assert discover.json()["result"]["supportedVersions"][0] == "2026-07-28"
    assert discover.json()["result"]["ttlMs"] == 900_000 and discover.json()["result"]["cacheScope"] == "public"


def test_a_foreign_origin_is_refused(client: Client, alpha: Namespace, settings: Any) -> None:
    configure(settings, mcp_allowed_origins=("https://inspector.example.org", "http://localhost:*"))

    def origin(value: str) -> Any:
        headers = {"Origin": value} if value else {}
        return post(client, "/t/alpha/mcp", legacy_request("ping"), headers=headers)

    refused = origin("https://evil.example")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == -32600
    assert post(client, "/t/alpha/a2a", {}, headers={"Origin": "https://evil.example"}).status_code == 403
    assert origin("null").status_code == 403
    assert origin("https://alpha.example.com").status_code == 200  # the namespace's canonical origin
    assert origin("http://testserver").status_code == 200  # the host this request addressed
    assert origin("http://localhost:6274").status_code == 200  # a port wildcard, as in the SDK's settings
    listed = origin("https://inspector.example.org")
    assert listed.status_code == 200
    assert listed["Access-Control-Allow-Origin"] == "https://inspector.example.org"
    assert origin("").status_code == 200  # no Origin: not a browser


def test_an_untrusted_origin_is_403_before_method_key_or_namespace(client: Client, beta: Namespace) -> None:
    beta.is_public = False
    beta.save(update_fields=["is_public"])
    evil = {"Origin": "https://evil.example"}

    assert client.get("/t/beta/mcp", headers=evil).status_code == 403
    assert post(client, "/t/beta/mcp", legacy_request("ping"), headers=evil).status_code == 403
    assert post(client, "/t/nowhere/mcp", legacy_request("ping"), headers=evil).status_code == 403
    assert (
        post(client, "/t/beta/mcp", legacy_request("ping"), headers={"Origin": "https://beta.example.com"}).status_code
        == 404
    )


def test_an_allowed_browser_gets_a_cors_preflight(client: Client, alpha: Namespace, settings: Any) -> None:
    configure(settings, mcp_allowed_origins=("https://inspector.example.org",))

    allowed = client.options("/t/alpha/mcp", headers={"Origin": "https://inspector.example.org"})
    foreign = client.options("/t/alpha/mcp", headers={"Origin": "https://evil.example"})

    assert allowed.status_code == 204
    assert allowed["Access-Control-Allow-Methods"] == "POST"
    assert "MCP-Protocol-Version" in allowed["Access-Control-Allow-Headers"]
    assert "Authorization" in allowed["Access-Control-Allow-Headers"]
    assert foreign.status_code == 403


def test_a_body_over_the_cap_is_413(client: Client, demo: Namespace, settings: Any) -> None:
    configure(settings, mcp_max_body_bytes=1024)  # /a2a answers the same error in a 200: test_a2a_http_refusals
    big = legacy_request("tools/call", {"name": "search_context", "arguments": {"query": "x" * 2000}})

    response = post(client, "/mcp", big)

    assert response.status_code == 413
    assert response.json()["error"] == {
        "code": -32600,
        "message": "Request body too large: at most 1024 bytes",
        "data": {"code": "body_too_large"},
    }


def test_a_private_namespace_without_its_key_looks_missing(client: Client, beta: Namespace) -> None:
    beta.is_public = False
    beta.save(update_fields=["is_public"])
    _, key = api_key_create(namespace=beta, name="agent", actor=None, check_permission=False)
    ping = legacy_request("ping", request_id=7)

    anonymous = post(client, "/t/beta/mcp", ping)
    wrong_key = post(client, "/t/beta/mcp", ping, headers={"Authorization": "Bearer egk_wrong"})
    nowhere = post(client, "/t/nowhere/mcp", ping)
    admitted = post(client, "/t/beta/mcp", ping, headers={"Authorization": f"Bearer {key}"})

    assert anonymous.status_code == wrong_key.status_code == nowhere.status_code == 404
    assert anonymous.json() == wrong_key.json() == nowhere.json()
    assert anonymous.json()["id"] == 7
    assert anonymous.json()["error"]["code"] == -32000
    assert anonymous.json()["error"]["data"]["code"] == "not_found"
    assert admitted.status_code == 200 and admitted.json()["result"] == {}


@pytest.mark.services
def test_over_the_rate_limit_is_429_with_retry_after(client: Client, demo: Namespace, settings: Any) -> None:
    configure(settings, rate_limit="2/hour")

    answers = [post(client, "/mcp", legacy_request("ping", request_id=n)) for n in range(3)]

    assert [a.status_code for a in answers] == [200, 200, 429]
    refused = answers[-1]
    assert 1 <= int(refused["Retry-After"]) <= 3600
    assert refused["RateLimit"].startswith('"default";r=0;')
    assert refused.json()["id"] == 2
    assert refused.json()["error"]["code"] == -32000 and refused.json()["error"]["data"]["code"] == "rate_limited"
    assert answers[0]["RateLimit-Policy"] == '"default";q=2;w=3600'
