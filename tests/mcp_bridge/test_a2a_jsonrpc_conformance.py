"""A2A JSON-RPC conformance found by QA with the official SDKs: notifications, request ids, one skill call
per message (JSON-RPC 2.0 §4, §4.1, §5.1; A2A v0.3.0 §6.11)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from a2a.types import JSONRPCErrorResponse, SendMessageResponse

from mcp_bridge.a2a import handle_a2a_post
from mcp_bridge.jsonrpc import Outcome
from tests.mcp_bridge.fakes import FakeBackend, FakeTaskStore

FEEDBACK_CALL = {"skill": "submit_feedback", "arguments": {"kind": "other", "message": "x"}}


def message_send(*data: dict[str, Any]) -> dict[str, Any]:
    parts = [{"kind": "data", "data": item} for item in data]
    message = {"kind": "message", "role": "user", "messageId": "n1", "parts": parts}
    return {"jsonrpc": "2.0", "method": "message/send", "params": {"message": message}}


def answer(backend: FakeBackend, tasks: FakeTaskStore, request: dict[str, Any]) -> Outcome:
    return handle_a2a_post(json.dumps(request).encode(), backend, tasks)


def test_a_notification_runs_nothing_and_gets_no_reply(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    outcome = answer(backend, tasks, message_send(FEEDBACK_CALL))

    assert outcome == Outcome(202)
    assert backend.feedback == [] and backend.calls == []
    assert tasks.tasks == {}


def test_a_notification_is_not_answered_even_when_its_params_are_bad(
    backend: FakeBackend, tasks: FakeTaskStore
) -> None:
    outcome = handle_a2a_post(
        b'{"jsonrpc": "2.0", "method": "message/send", "params": {"message": "\\ud800"}}', backend, tasks
    )

    assert outcome == Outcome(202)


def test_an_invalid_request_without_id_is_still_answered_with_id_null(
    backend: FakeBackend, tasks: FakeTaskStore
) -> None:
    outcome = answer(backend, tasks, {"jsonrpc": "2.0", "method": 1, "params": "bar"})  # JSON-RPC 2.0 §7

    assert outcome.status == 200 and outcome.body is not None
    assert outcome.body["id"] is None and outcome.body["error"]["code"] == -32600


@pytest.mark.parametrize("bad_id", [[1, 2], {"a": 1}, True, False, 2.5])
def test_an_id_that_is_not_a_string_integer_or_null_is_invalid_request(
    backend: FakeBackend, tasks: FakeTaskStore, bad_id: object
) -> None:
    outcome = answer(backend, tasks, {**message_send(FEEDBACK_CALL), "id": bad_id})

    assert outcome.status == 200 and outcome.body is not None
    JSONRPCErrorResponse.model_validate(outcome.body)
    assert outcome.body["id"] is None
    assert outcome.body["error"]["code"] == -32600
    assert outcome.body["error"]["message"] == "Request id must be a string, an integer or null"
    assert backend.feedback == [] and tasks.tasks == {}


@pytest.mark.parametrize("good_id", ["r-1", 7, 3.0, None])
def test_a_string_integer_or_null_id_runs_and_is_echoed(
    backend: FakeBackend, tasks: FakeTaskStore, good_id: object
) -> None:
    outcome = answer(backend, tasks, {**message_send(FEEDBACK_CALL), "id": good_id})

    assert outcome.status == 200 and outcome.body is not None
    SendMessageResponse.model_validate(outcome.body)
    assert outcome.body["id"] == good_id and not isinstance(outcome.body["id"], float)  # 3.0 is answered as 3
    assert outcome.body["result"]["status"]["state"] == "completed"
    assert len(backend.feedback) == 1


def test_two_data_parts_are_invalid_params_and_run_nothing(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    get_entry = {"skill": "get_entry", "arguments": {"id": "EG-001"}}
    request = {**message_send(get_entry, {"skill": "get_metrics", "arguments": {}}), "id": 1}

    outcome = answer(backend, tasks, request)

    assert outcome.status == 200 and outcome.body is not None
    error = outcome.body["error"]
    assert error["code"] == -32602
    assert error["message"].startswith("One skill call per message: send at most one data part (this message has 2)")
    assert error["data"] == {"code": "too_many_data_parts", "param": "params.message.parts"}
    assert backend.calls == [] and tasks.tasks == {}


def test_one_data_part_with_text_parts_is_still_one_call(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    request = message_send({"budget": 500})
    request["id"] = 1
    request["params"]["message"]["parts"].insert(0, {"kind": "text", "text": "token"})

    outcome = answer(backend, tasks, request)

    assert outcome.body is not None
    assert outcome.body["result"]["artifacts"][0]["parts"][0]["data"]["query"]["topic"] == "token"
