"""Every MCP and A2A error names one stable machine-readable code, ``data.code``, through the real endpoints."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from knowledge.models import Entry, Namespace
from knowledge.services.entries import entry_retire
from knowledge.services.releases import release_build
from tests.mcp_bridge.conftest import legacy_request
from tests.mcp_bridge.http_calls import details, legacy, modern, post, tool
from tests.servingfixtures import clean_serving_state, demo, no_rate_limit

__all__ = ["clean_serving_state", "demo", "no_rate_limit"]

pytestmark = pytest.mark.django_db

MCP = "/t/evergreen/mcp"
A2A = "/t/evergreen/a2a"


def a2a_send(client: Client, *parts: dict[str, Any]) -> dict[str, Any]:
    message = {"role": "user", "messageId": "m1", "kind": "message", "parts": list(parts)}
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    response = post(client, A2A, body)
    assert response.status_code == 200
    answer: dict[str, Any] = response.json()
    return answer


def a2a_error(client: Client, data: dict[str, Any]) -> dict[str, Any]:
    answer = a2a_send(client, {"kind": "data", "data": data})
    assert "error" in answer, answer
    error: dict[str, Any] = answer["error"]
    return error


def mcp_error(response: Any) -> dict[str, Any]:
    error: dict[str, Any] = response.json()["error"]
    return error


def test_an_unknown_skill_has_a_code(client: Client, demo: Namespace, no_rate_limit: None) -> None:
    error = a2a_error(client, {"skill": "nope"})

    assert (error["code"], error["message"]) == (-32602, "Unknown skill: nope")
    assert error["data"] == {"code": "unknown_skill", "skill": "nope", "param": "params.message.parts[0].data.skill"}


def test_unsupported_data_keys_have_a_code(client: Client, demo: Namespace, no_rate_limit: None) -> None:
    error = a2a_error(client, {"topic": "x", "bogus": 1})

    assert error["message"] == "Unsupported data part keys: bogus"
    assert error["data"] == {"code": "unknown_data_keys", "keys": ["bogus"], "param": "params.message.parts[0].data"}


@pytest.mark.parametrize(
    ("data", "key", "expected"),
    [
        ({"skill": "get_entry", "arguments": "EG-202"}, "arguments", "object"),
        ({"skill": 5}, "skill", "string"),
    ],
)
def test_a_data_key_of_the_wrong_type_says_which_key_and_type(
    client: Client, demo: Namespace, no_rate_limit: None, data: dict[str, Any], key: str, expected: str
) -> None:
    error = a2a_error(client, data)

    assert error["code"] == -32602
    assert "Unsupported" not in error["message"] and "Unknown skill" not in error["message"]
    assert f"data.{key} must be {'an' if expected == 'object' else 'a'} {expected}" in error["message"]
    assert error["data"] == {
        "code": "invalid_data_part",
        "param": f"params.message.parts[0].data.{key}",
        "expected": expected,
    }


def test_a2a_invalid_arguments_carry_code_and_the_old_error_alias(
    client: Client, demo: Namespace, no_rate_limit: None
) -> None:
    error = a2a_error(client, {"skill": "get_entry", "arguments": {}})

    assert error["data"]["code"] == error["data"]["error"] == "invalid_arguments"
    assert error["data"]["param"] == "$.id" and "$.id" in error["message"]


def test_a_failed_a2a_task_carries_the_code(client: Client, demo: Namespace, no_rate_limit: None) -> None:
    task = a2a_send(client, {"kind": "data", "data": {"skill": "get_entry", "arguments": {"id": "EG-999"}}})["result"]

    assert task["status"]["state"] == "failed"
    failure = task["status"]["message"]["parts"][1]["data"]
    assert failure["code"] == failure["error"] == "not_found"


def test_a2a_text_refusals_use_the_same_key(client: Client, demo: Namespace, no_rate_limit: None) -> None:
    error = a2a_send(client, {"kind": "text", "text": "a\x00b"})["error"]

    assert error["data"] == {"code": "invalid_text", "param": "params.message.parts[0].text"}


def test_a2a_protocol_errors_have_codes(client: Client, demo: Namespace, no_rate_limit: None) -> None:
    unknown_method = post(client, A2A, {"jsonrpc": "2.0", "id": 1, "method": "nope/nope", "params": {}}).json()
    unknown_task = post(client, A2A, {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "x"}}).json()
    unparseable = post(client, A2A, b'{"jsonrpc": "2.0", "id": 1,').json()

    assert unknown_method["error"]["data"] == {"code": "method_not_found"}
    assert unknown_task["error"]["data"] == {"code": "task_not_found", "id": "x"}
    assert unparseable["error"]["data"] == {"code": "parse_error"}


@pytest.mark.parametrize("call", [modern, legacy])
def test_an_unknown_tool_has_a_code(client: Client, demo: Namespace, no_rate_limit: None, call: Any) -> None:
    error = mcp_error(call(client, MCP, "tools/call", {"name": "no_such_tool", "arguments": {}}))

    assert (error["code"], error["message"]) == (-32602, "Unknown tool: no_such_tool")
    assert error["data"] == {"code": "unknown_tool", "name": "no_such_tool"}


@pytest.mark.parametrize("call", [modern, legacy])
def test_an_unknown_prompt_has_a_code(client: Client, demo: Namespace, no_rate_limit: None, call: Any) -> None:
    error = mcp_error(call(client, MCP, "prompts/get", {"name": "nope"}))

    assert (error["code"], error["message"]) == (-32602, "Unknown prompt: nope")
    assert error["data"] == {"code": "unknown_prompt", "name": "nope"}


@pytest.mark.parametrize(("call", "number"), [(modern, -32602), (legacy, -32002)])
def test_a_retired_resource_is_gone_and_an_unknown_one_not_found(
    client: Client, demo: Namespace, no_rate_limit: None, call: Any, number: int
) -> None:
    entry_retire(
        entry=Entry.objects.get(namespace=demo, public_id="EG-003"),
        actor=None,
        reason="Merged.",
        replaced_by="EG-101",
        check_permission=False,
    )
    release_build(namespace_id=demo.pk)
    retired = mcp_error(call(client, MCP, "resources/read", {"uri": "evergreen://evergreen/EG-003"}))
    unknown = mcp_error(call(client, MCP, "resources/read", {"uri": "evergreen://evergreen/EG-999"}))

    assert retired["code"] == unknown["code"] == number
    assert retired["data"]["code"] == "gone" and retired["data"]["tombstone"]["replacedBy"] == "EG-101"
    assert unknown["data"] == {"code": "not_found", "uri": "evergreen://evergreen/EG-999"}


@pytest.mark.parametrize("call", [modern, legacy])
def test_a_nul_in_a_tool_argument_is_a_tool_error_like_any_bad_argument(
    client: Client, demo: Namespace, no_rate_limit: None, call: Any
) -> None:
    response = call(client, MCP, "tools/call", {"name": "search_context", "arguments": {"query": "a\x00b"}})

    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True and "$.query" in result["content"][0]["text"]
    assert details(result) == {"code": "invalid_text", "error": "invalid_text", "param": "$.query"}


def test_a_nul_outside_the_arguments_stays_a_protocol_error(
    client: Client, demo: Namespace, no_rate_limit: None
) -> None:
    response = legacy(client, MCP, "tools/call", {"name": "search\x00context", "arguments": {}})

    assert mcp_error(response)["data"] == {"code": "invalid_text", "param": "params.name"}


def test_a_nul_in_a_notification_is_still_refused(client: Client, demo: Namespace) -> None:
    notification = legacy_request("tools/call", {"name": "search_context", "arguments": {"query": "\x00"}})
    del notification["id"]

    response = post(client, MCP, notification)

    assert response.status_code == 400 and mcp_error(response)["data"]["code"] == "invalid_text"


def test_get_entry_names_the_argument_the_same_way_in_param_and_message(
    client: Client, demo: Namespace, no_rate_limit: None
) -> None:
    result = tool(client, MCP, "get_entry", {})

    assert details(result) == {"code": "invalid_arguments", "error": "invalid_arguments", "param": "$.id"}
    assert "$.id" in result["content"][0]["text"]


def test_tool_failures_carry_code_and_the_error_alias(client: Client, demo: Namespace, no_rate_limit: None) -> None:
    missing = details(tool(client, MCP, "get_entry", {"id": "EG-999"}))
    schema = details(tool(client, MCP, "search_context", {"query": "x", "budget": "lots"}))

    assert missing["code"] == missing["error"] == "not_found"
    assert schema == {"code": "invalid_arguments", "error": "invalid_arguments", "param": "$.budget"}


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("nope/nope", {}, "method_not_found"),
        ("tools/list", {"cursor": "bogus"}, "invalid_cursor"),
        ("tools/call", {"arguments": {}}, "invalid_params"),
    ],
)
def test_mcp_protocol_errors_have_codes(
    client: Client, demo: Namespace, no_rate_limit: None, method: str, params: dict[str, Any], code: str
) -> None:
    for call in (modern, legacy):
        assert mcp_error(call(client, MCP, method, params))["data"]["code"] == code, call


def test_mcp_framing_errors_have_codes(client: Client, demo: Namespace) -> None:
    unparseable = post(client, MCP, b'{"jsonrpc": "2.0", "id": 1,')
    batch = post(client, MCP, [legacy_request("ping")])
    not_json = client.generic("POST", MCP, json.dumps(legacy_request("ping")), headers={"Accept": "text/html"})

    assert mcp_error(unparseable)["data"] == {"code": "parse_error"}
    assert mcp_error(batch)["data"] == {"code": "invalid_request"}
    assert mcp_error(not_json)["data"] == {"code": "not_acceptable"}
