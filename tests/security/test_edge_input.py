"""Issue 9 item 6: no input reaches an internal error; undecodable text and whole floats get clear answers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from knowledge.models import Namespace
from tests.mcp_bridge.conftest import legacy_request, modern_request
from tests.mcp_bridge.http_calls import ACCEPT, http_headers
from tests.servingfixtures import alpha, beta, clean_serving_state, demo, no_rate_limit

__all__ = ["alpha", "beta", "clean_serving_state", "demo", "no_rate_limit"]

pytestmark = pytest.mark.django_db

LONE = "\ud800"  # json.dumps writes it as the escape "\\ud800", which json.loads turns back into a lone surrogate


def _raw_post(client: Client, path: str, message: Any, headers: dict[str, str] | None = None) -> Any:
    raw = json.dumps(message).encode()  # ensure_ascii: the surrogate travels as a \\ud800 escape
    return client.generic(
        "POST", path, raw, content_type="application/json", headers={"Accept": ACCEPT, **(headers or {})}
    )


def _modern(client: Client, method: str, params: dict[str, Any], **kwargs: Any) -> Any:
    message, headers = modern_request(method, params, **kwargs)
    return _raw_post(client, "/t/alpha/mcp", message, http_headers(headers))


def _a2a_send(client: Client, parts: list[dict[str, Any]], message_id: str = "m-1") -> Any:
    message = {"role": "user", "messageId": message_id, "parts": parts, "kind": "message"}
    return _raw_post(
        client, "/t/alpha/a2a", {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    )


def _error(response: Any) -> dict[str, Any]:
    assert response.status_code < 500
    body = response.json()
    assert "error" in body, body
    error: dict[str, Any] = body["error"]
    assert error["code"] != -32603, body
    return error


# A tool's arguments are refused as a tool result (isError), like any invalid argument (MCP: tool errors).
ARGUMENT_CASES = {
    "mcp search": (
        lambda c: _modern(c, "tools/call", {"name": "search_context", "arguments": {"query": LONE}}),
        "$.query",
    ),
    "mcp get_entry": (
        lambda c: _modern(c, "tools/call", {"name": "get_entry", "arguments": {"id": "AL-0" + LONE}}),
        "$.id",
    ),
    "mcp feedback": (
        lambda c: _modern(
            c, "tools/call", {"name": "submit_feedback", "arguments": {"kind": "other", "message": "bad " + LONE}}
        ),
        "$.message",
    ),
    "legacy search": (
        lambda c: _raw_post(
            c,
            "/t/alpha/mcp",
            legacy_request("tools/call", {"name": "search_context", "arguments": {"query": LONE}}),
            {"MCP-Protocol-Version": "2025-11-25"},
        ),
        "$.query",
    ),
}
SURROGATE_CASES = {
    "mcp resources/read": lambda c: _modern(c, "resources/read", {"uri": "evergreen://alpha/" + LONE}),
    "mcp request id": lambda c: _modern(c, "tools/list", {}, request_id="id-" + LONE),
    "a2a text": lambda c: _a2a_send(c, [{"kind": "text", "text": LONE}]),
    "a2a messageId": lambda c: _a2a_send(c, [{"kind": "text", "text": "budget"}], message_id=LONE),
    "a2a data key": lambda c: _a2a_send(c, [{"kind": "data", "data": {LONE: 1}}]),
}


@pytest.mark.parametrize("case", sorted(SURROGATE_CASES))
def test_a_lone_surrogate_is_refused_naming_the_parameter(
    client: Client, alpha: Namespace, no_rate_limit: None, case: str
) -> None:
    error = _error(SURROGATE_CASES[case](client))

    if case.endswith("request id"):
        assert error["code"] == -32600
    else:
        assert error["code"] == -32602
        assert error["data"]["code"] == "invalid_text"
        assert error["data"]["param"].startswith("params.")


@pytest.mark.parametrize("case", sorted(ARGUMENT_CASES))
def test_a_lone_surrogate_in_a_tool_argument_is_a_tool_error_naming_it(
    client: Client, alpha: Namespace, no_rate_limit: None, case: str
) -> None:
    call, param = ARGUMENT_CASES[case]
    response = call(client)

    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    details = json.loads(result["content"][1]["text"])
    assert details["code"] == "invalid_text" and details["param"] == param


def _a2a(client: Client, method: str, params: dict[str, Any]) -> Any:
    return _raw_post(client, "/t/alpha/a2a", {"jsonrpc": "2.0", "id": 7, "method": method, "params": params})


def _send_data(client: Client, data: dict[str, Any], **configuration: Any) -> Any:
    message = {"role": "user", "messageId": "m-1", "parts": [{"kind": "data", "data": data}], "kind": "message"}
    params: dict[str, Any] = {"message": message}
    if configuration:
        params["configuration"] = configuration
    return _a2a(client, "message/send", params)


def test_a_whole_float_budget_is_a_budget_over_mcp_in_both_eras(
    client: Client, alpha: Namespace, no_rate_limit: None
) -> None:
    arguments = {"name": "search_context", "arguments": {"query": "token budget", "budget": 600.0, "limit": 2.0}}
    modern = _modern(client, "tools/call", arguments)
    legacy = _raw_post(
        client, "/t/alpha/mcp", legacy_request("tools/call", arguments), {"MCP-Protocol-Version": "2025-11-25"}
    )

    for response in (modern, legacy):
        result = response.json()["result"]
        assert result["isError"] is False, result
        assert result["structuredContent"]["budget"] == 600
        assert result["structuredContent"]["query"]["budget"] == 600
        assert result["structuredContent"]["entryCount"] <= 2


def test_a_fractional_budget_is_a_clear_argument_error(client: Client, alpha: Namespace, no_rate_limit: None) -> None:
    result = _modern(client, "tools/call", {"name": "search_context", "arguments": {"query": "x", "budget": 600.5}})

    body = result.json()["result"]
    assert body["isError"] is True
    assert json.loads(body["content"][1]["text"]) == {
        "code": "invalid_arguments",
        "error": "invalid_arguments",
        "param": "$.budget",
    }


def test_a_whole_float_version_reads_that_version(client: Client, alpha: Namespace, no_rate_limit: None) -> None:
    arguments = {"name": "get_entry", "arguments": {"id": "AL-001", "version": 1.0}}
    huge = {"name": "get_entry", "arguments": {"id": "AL-001", "version": 10**30}}

    assert _modern(client, "tools/call", arguments).json()["result"]["structuredContent"]["version"] == 1
    refused = _modern(client, "tools/call", huge).json()["result"]
    assert refused["isError"] is True
    assert json.loads(refused["content"][1]["text"])["error"] == "unknown_version"


def test_a2a_takes_whole_float_budgets_and_history_lengths(
    client: Client, alpha: Namespace, no_rate_limit: None
) -> None:
    sent = _send_data(client, {"topic": "token budget", "budget": 600.0}, historyLength=1.0).json()
    task = sent["result"]
    fetched = _a2a(client, "tasks/get", {"id": task["id"], "historyLength": 0.0}).json()["result"]

    assert task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"][0]["data"]["budget"] == 600
    assert len(task["history"]) == 1
    assert fetched["history"] == []


@pytest.mark.parametrize("budget", [600.5, "600", True, "1e999"])
def test_a2a_refuses_a_budget_that_is_not_a_whole_number(
    client: Client, alpha: Namespace, no_rate_limit: None, budget: Any
) -> None:
    if budget == "1e999":  # a literal that Python's JSON decoder reads as infinity
        message = {"role": "user", "messageId": "m", "parts": [{"kind": "data", "data": {"budget": 1}}]}
        raw = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {"message": message}})
        response = client.generic(
            "POST", "/t/alpha/a2a", raw.replace('"budget": 1', '"budget": 1e999'), content_type="application/json"
        )
    else:
        response = _send_data(client, {"topic": "token budget", "budget": budget})
    error = _error(response)

    assert error["code"] == -32602
    assert "budget" in error["message"]


@pytest.mark.parametrize("length", [-1, 1.5, "2", False])
def test_a2a_refuses_a_history_length_that_is_not_a_count(
    client: Client, alpha: Namespace, no_rate_limit: None, length: Any
) -> None:
    error = _error(_a2a(client, "tasks/get", {"id": "nope", "historyLength": length}))

    assert error["code"] == -32602


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("topic=%ff%fe", "topic"),
        ("topic=%ed%a0%80", "topic"),  # a surrogate, UTF-8-encoded (CESU-8): not UTF-8
        ("budget=600&%c3=1", "\ufffd"),
        ("category=fact&topic=caf%e9", "topic"),
    ],
)
def test_rest_refuses_query_strings_that_are_not_utf8(
    client: Client, alpha: Namespace, no_rate_limit: None, query: str, param: str
) -> None:
    response = client.get(f"/t/alpha/api/context?{query}")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_text"
    assert response.json()["error"]["param"] == param


def test_rest_refuses_bad_utf8_on_every_read_route(client: Client, alpha: Namespace, no_rate_limit: None) -> None:
    for path in ("/t/alpha/api/prompt-pack", "/t/alpha/api/entries/AL-001", "/t/alpha/llms.txt", "/t/alpha/"):
        response = client.get(f"{path}?scenario=%80")
        assert response.status_code == 400, path
        assert response.json()["error"] == {
            "code": "invalid_text",
            "message": "The parameter scenario is not valid UTF-8 text (percent-encode the UTF-8 bytes of the text).",
            "param": "scenario",
        }


def test_rest_takes_utf8_and_whole_float_budgets(client: Client, alpha: Namespace, no_rate_limit: None) -> None:
    ok = client.get("/t/alpha/api/context?topic=caf%C3%A9+budget&budget=600.0")
    fractional = client.get("/t/alpha/api/context?budget=600.5")

    assert ok.status_code == 200
    assert ok.json()["query"] == {"topic": "café budget", "budget": 600, "category": None}
    assert fractional.status_code == 400 and fractional.json()["error"]["code"] == "invalid_budget"
