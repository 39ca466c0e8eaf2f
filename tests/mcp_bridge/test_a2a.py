"""A2A v0.3.0: the agent card and the JSON-RPC flows, validated with the a2a-sdk's own models."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from itertools import count
from typing import Any

import pytest
from a2a.types import AgentCard, CancelTaskResponse, GetTaskResponse, JSONRPCErrorResponse, SendMessageResponse, Task

from mcp_bridge.a2a import handle_a2a_post
from mcp_bridge.a2a_card import build_agent_card
from mcp_bridge.jsonrpc import Outcome
from mcp_bridge.tools import build_tools
from tests.mcp_bridge.fakes import SECRET_BODY_MARKER, FakeBackend, FakeTaskStore, demo_info

NOW = datetime(2026, 9, 2, 10, 52, 47, tzinfo=UTC)
BUDGET_EXTENSION = "https://evergreen.example.com/a2a/extensions/token-budget/v1"
CITATION_EXTENSION = "https://evergreen.example.com/a2a/extensions/citation/v1"


def card(*, public: bool = True) -> dict[str, Any]:
    backend = FakeBackend(info=demo_info(public=public))
    info = backend.namespace()
    return build_agent_card(info, build_tools(info), backend.rules(), retention_seconds=86400)


def rpc(
    backend: FakeBackend,
    tasks: FakeTaskStore,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    extensions: str | None = None,
    version: str | None = None,
) -> Outcome:
    ids = count(1)
    body = json.dumps({"jsonrpc": "2.0", "id": "req-1", "method": method, "params": params or {}}).encode()
    return handle_a2a_post(
        body,
        backend,
        tasks,
        extensions_header=extensions,
        version=version,
        now=lambda: NOW,
        new_id=lambda: f"id-{next(ids)}",
    )


def user_message(*parts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"kind": "message", "messageId": "m-1", "role": "user", "parts": list(parts), **extra}


def send(backend: FakeBackend, tasks: FakeTaskStore, *parts: dict[str, Any], **params: Any) -> Outcome:
    return rpc(backend, tasks, "message/send", {"message": user_message(*parts), **params})


def task_of(outcome: Outcome) -> dict[str, Any]:
    assert outcome.status == 200 and outcome.body is not None
    response = SendMessageResponse.model_validate(outcome.body)
    assert not isinstance(response.root, JSONRPCErrorResponse), outcome.body
    Task.model_validate(outcome.body["result"])
    result: dict[str, Any] = outcome.body["result"]
    return result


def error_code(outcome: Outcome) -> int:
    assert outcome.status == 200 and outcome.body is not None
    JSONRPCErrorResponse.model_validate(outcome.body)
    code: int = outcome.body["error"]["code"]
    return code


@pytest.mark.parametrize("public", [True, False])
def test_the_card_is_a_valid_sdk_agent_card(public: bool) -> None:
    document = card(public=public)
    parsed = AgentCard.model_validate(document)
    assert parsed.protocol_version == "0.3.0"
    assert parsed.preferred_transport == "JSONRPC"
    assert parsed.model_dump(mode="json", by_alias=True, exclude_none=True) == document


def test_the_card_points_at_the_namespace_endpoint_and_docs() -> None:
    document = card()
    assert document["url"] == "https://evergreen.example.com/t/evergreen/a2a"
    assert document["additionalInterfaces"] == [{"url": document["url"], "transport": "JSONRPC"}]
    assert document["documentationUrl"] == "https://evergreen.example.com/t/evergreen/llms.txt"
    assert document["provider"] == {"organization": "Evergreen", "url": "https://evergreen.example.com/t/evergreen"}
    assert document["version"] == "1.2.0"
    assert document["capabilities"]["streaming"] is False
    assert document["defaultInputModes"] == ["text/plain", "application/json"]


def test_the_skills_mirror_the_mcp_tools() -> None:
    tools = build_tools(demo_info())
    skills = card()["skills"]
    assert [(s["id"], s["name"]) for s in skills] == [(t.name, t.title) for t in tools]
    assert all(skill["description"].startswith(tool.description) for skill, tool in zip(skills, tools, strict=True))
    assert all(skill["tags"] for skill in skills)
    assert SECRET_BODY_MARKER not in json.dumps(skills)


def test_skill_descriptions_speak_a2a_not_mcp() -> None:
    skills = {skill["id"]: skill["description"] for skill in card()["skills"]}
    assert not any("isError" in text for text in skills.values())
    assert "JSON-RPC error -32602" in skills["search_context"] and "unknown category" in skills["search_context"]
    assert "task ends as failed" in skills["get_entry"] and "tombstone" in skills["get_entry"]
    assert "task ends as failed" in skills["submit_feedback"] and "too many submissions" in skills["submit_feedback"]
    assert "failed" not in skills["get_metrics"] and "-32602" not in skills["get_metrics"]


def test_a_failed_skill_call_is_a_failed_task_as_its_description_says(
    backend: FakeBackend, tasks: FakeTaskStore
) -> None:
    gone = send(backend, tasks, {"data": {"skill": "get_entry", "arguments": {"id": "EG-003"}}})
    assert task_of(gone)["status"]["state"] == "failed"
    invalid = send(backend, tasks, {"data": {"topic": "token", "category": "poetry"}})
    assert error_code(invalid) == -32602


def test_the_card_declares_token_budget_and_citation_extensions() -> None:
    extensions = {ext["uri"]: ext for ext in card()["capabilities"]["extensions"]}
    assert set(extensions) == {BUDGET_EXTENSION, CITATION_EXTENSION}
    budget = extensions[BUDGET_EXTENSION]["params"]
    assert {key: budget[key] for key in ("field", "unit", "default", "minimum", "maximum", "clamped")} == {
        "field": "budget",
        "unit": "tokens",
        "default": 2000,
        "minimum": 200,
        "maximum": 8000,
        "clamped": True,
    }
    assert extensions[CITATION_EXTENSION]["params"]["marker"] == "[EG-xxx]"
    assert extensions[CITATION_EXTENSION]["params"]["rules"] == list(FakeBackend().rules())
    assert not any(ext["required"] for ext in extensions.values())


def test_a_public_card_says_no_credentials_are_needed() -> None:
    document = card()
    assert (document["securitySchemes"], document["security"]) == ({}, [{}])
    assert "no credentials" in document["description"]


def test_a_private_card_asks_for_the_api_key_as_a_bearer_token() -> None:
    document = card(public=False)
    assert document["securitySchemes"] == {
        "apiKey": {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "API key",
            "description": "Private namespace: send the namespace API key as Authorization: Bearer <key>.",
        }
    }
    assert document["security"] == [{"apiKey": []}]


def test_the_card_states_the_task_retention() -> None:
    assert "Tasks are kept for 24 hours." in card()["description"]


def test_a_text_part_is_the_topic_and_the_task_completes(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    task = task_of(send(backend, tasks, {"kind": "text", "text": "token"}))
    assert task["status"] == {"state": "completed", "timestamp": "2026-09-02T10:52:47Z"}
    artifact = task["artifacts"][0]
    data, text = artifact["parts"]
    assert artifact["name"] == "search_context"
    assert data["kind"] == "data"
    assert data["data"] == backend.context(topic="token", budget=None, category=None, limit=None)
    assert text["kind"] == "text"
    assert "[EG-202] 来源：Evergreen EG-202 — Token 预算纪律" in text["text"].splitlines()
    assert task["history"][0]["taskId"] == task["id"]
    assert tasks.load(task["id"]) == task


def test_a_data_part_carries_topic_budget_and_category(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    data = {"kind": "data", "data": {"topic": "", "budget": 500, "category": "rule"}}
    pack = task_of(send(backend, tasks, data))["artifacts"][0]["parts"][0]["data"]
    assert pack["query"] == {"topic": "", "budget": 500, "category": "rule"}


def test_a_data_topic_wins_over_the_text(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    outcome = send(backend, tasks, {"kind": "text", "text": "ignored"}, {"kind": "data", "data": {"topic": "token"}})
    assert task_of(outcome)["artifacts"][0]["parts"][0]["data"]["query"]["topic"] == "token"


def test_parts_without_a_kind_are_recognised(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    task = task_of(send(backend, tasks, {"text": "token"}, {"data": {"budget": 800}}))
    assert task["artifacts"][0]["parts"][0]["data"]["query"] == {"topic": "token", "budget": 800, "category": None}


def test_a_skill_call_runs_the_matching_tool(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    part = {"kind": "data", "data": {"skill": "get_entry", "arguments": {"id": "EG-202"}}}
    task = task_of(send(backend, tasks, part))
    assert task["artifacts"][0]["name"] == "get_entry"
    assert task["artifacts"][0]["parts"][0]["data"]["id"] == "EG-202"


def test_a_retired_entry_fails_the_task_with_its_tombstone(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    part = {"kind": "data", "data": {"skill": "get_entry", "arguments": {"id": "EG-009"}}}
    task = task_of(send(backend, tasks, part))
    assert task["status"]["state"] == "failed"
    text, data = task["status"]["message"]["parts"]
    assert text["text"].startswith("EG-009 is gone")
    assert data["data"]["tombstone"]["replacedBy"] == "EG-101"
    assert "artifacts" not in task


def test_feedback_over_the_limit_fails_the_task(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    backend.feedback_allowance = 0
    part = {"kind": "data", "data": {"skill": "submit_feedback", "arguments": {"kind": "other", "message": "hi"}}}
    assert task_of(send(backend, tasks, part))["status"]["state"] == "failed"


@pytest.mark.parametrize(
    "data",
    [
        {"budget": "lots"},
        {"category": "poetry"},
        {"skill": "get_entry"},
        {"skill": "get_entry", "arguments": {"id": 7}},
        {"skill": "nope"},
        {"skill": 3},
        {"skill": "get_entry", "arguments": "EG-202"},
        {"colour": "blue"},
    ],
)
def test_bad_data_parts_are_invalid_params(backend: FakeBackend, tasks: FakeTaskStore, data: dict[str, Any]) -> None:
    assert error_code(send(backend, tasks, {"kind": "data", "data": data})) == -32602
    assert tasks.tasks == {}


def test_a_control_character_topic_is_invalid_params(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    assert error_code(send(backend, tasks, {"kind": "text", "text": "bad\x00"})) == -32602


def test_a_file_part_is_an_unsupported_content_type(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    part = {"kind": "file", "file": {"uri": "https://example.com/a.pdf", "mimeType": "application/pdf"}}
    assert error_code(send(backend, tasks, part)) == -32005


@pytest.mark.parametrize("part", [{"kind": "video"}, {"kind": "text", "text": 3}, {"kind": "data", "data": [1]}, 7])
def test_an_unrecognised_part_is_invalid_params(backend: FakeBackend, tasks: FakeTaskStore, part: object) -> None:
    assert error_code(send(backend, tasks, part)) == -32602  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "message",
    [
        None,
        {"messageId": "m", "role": "agent", "parts": [{"kind": "text", "text": "x"}]},
        {"messageId": "m", "role": "user", "parts": []},
        {"role": "user", "parts": [{"kind": "text", "text": "x"}]},
        {"messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "x"}], "kind": "task"},
    ],
)
def test_a_malformed_message_is_invalid_params(backend: FakeBackend, tasks: FakeTaskStore, message: object) -> None:
    assert error_code(rpc(backend, tasks, "message/send", {"message": message})) == -32602


def test_accepted_output_modes_we_cannot_produce_are_refused(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    outcome = send(backend, tasks, {"text": "x"}, configuration={"acceptedOutputModes": ["image/png"]})
    assert error_code(outcome) == -32005
    ok = send(backend, tasks, {"text": "x"}, configuration={"acceptedOutputModes": ["Application/JSON"]})
    assert task_of(ok)["status"]["state"] == "completed"


def test_push_notification_config_is_not_supported(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    config = {"pushNotificationConfig": {"url": "https://example.com/hook"}}
    assert error_code(send(backend, tasks, {"text": "x"}, configuration=config)) == -32003


@pytest.mark.parametrize(
    ("method", "code"),
    [
        ("message/stream", -32004),
        ("tasks/resubscribe", -32004),
        ("tasks/pushNotificationConfig/set", -32003),
        ("tasks/pushNotificationConfig/get", -32003),
        ("tasks/pushNotificationConfig/list", -32003),
        ("tasks/pushNotificationConfig/delete", -32003),
        ("agent/getAuthenticatedExtendedCard", -32007),
        ("tasks/list", -32601),
        ("tools/call", -32601),
    ],
)
def test_unsupported_methods_answer_the_spec_codes(
    backend: FakeBackend, tasks: FakeTaskStore, method: str, code: int
) -> None:
    assert error_code(rpc(backend, tasks, method, {"id": "x"})) == code


def test_tasks_get_returns_the_stored_task(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    created = task_of(send(backend, tasks, {"text": "token"}))
    outcome = rpc(backend, tasks, "tasks/get", {"id": created["id"]})
    GetTaskResponse.model_validate(outcome.body)
    assert outcome.body is not None and outcome.body["result"] == created


def test_history_length_trims_the_history(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    created = task_of(send(backend, tasks, {"text": "token"}, configuration={"historyLength": 0}))
    assert created["history"] == []
    outcome = rpc(backend, tasks, "tasks/get", {"id": created["id"], "historyLength": 1})
    assert outcome.body is not None and len(outcome.body["result"]["history"]) == 1


@pytest.mark.parametrize("method", ["tasks/get", "tasks/cancel"])
def test_an_unknown_task_is_not_found(backend: FakeBackend, tasks: FakeTaskStore, method: str) -> None:
    assert error_code(rpc(backend, tasks, method, {"id": "nope"})) == -32001


@pytest.mark.parametrize(
    "params", [{}, {"id": 7}, {"id": "x", "historyLength": -1}, {"id": "x", "historyLength": True}]
)
def test_bad_task_params_are_invalid_params(backend: FakeBackend, tasks: FakeTaskStore, params: dict[str, Any]) -> None:
    assert error_code(rpc(backend, tasks, "tasks/get", params)) == -32602


def test_cancelling_a_finished_task_is_not_cancelable(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    created = task_of(send(backend, tasks, {"text": "token"}))
    outcome = rpc(backend, tasks, "tasks/cancel", {"id": created["id"]})
    CancelTaskResponse.model_validate(outcome.body)
    assert error_code(outcome) == -32002
    assert tasks.load(created["id"]) == created


def test_cancelling_an_unfinished_task_cancels_it(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    tasks.save({"kind": "task", "id": "t", "contextId": "c", "status": {"state": "working"}})
    outcome = rpc(backend, tasks, "tasks/cancel", {"id": "t"})
    assert outcome.body is not None and outcome.body["result"]["status"]["state"] == "canceled"
    Task.model_validate(outcome.body["result"])


def test_a_message_to_a_finished_task_is_unsupported(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    created = task_of(send(backend, tasks, {"text": "token"}))
    outcome = rpc(backend, tasks, "message/send", {"message": user_message({"text": "more"}, taskId=created["id"])})
    assert error_code(outcome) == -32004


def test_a_message_to_an_unknown_task_is_not_found(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    outcome = rpc(backend, tasks, "message/send", {"message": user_message({"text": "x"}, taskId="nope")})
    assert error_code(outcome) == -32001


def test_a_given_context_id_is_kept(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    outcome = rpc(backend, tasks, "message/send", {"message": user_message({"text": "x"}, contextId="ctx-9")})
    assert task_of(outcome)["contextId"] == "ctx-9"


def test_extension_uris_live_on_the_deployment_that_serves_the_card() -> None:
    uris = [extension["uri"] for extension in card()["capabilities"]["extensions"]]
    assert uris == [BUDGET_EXTENSION, CITATION_EXTENSION]
    assert all("/t/" not in uri for uri in uris)  # one URI for every namespace of the deployment


@pytest.mark.parametrize("version", ["1.0", "1.0.1", "0.2", "2"])
def test_a_request_for_another_a2a_version_is_told_which_one_is_served(
    backend: FakeBackend, tasks: FakeTaskStore, version: str
) -> None:
    outcome = rpc(backend, tasks, "SendMessage", {"message": user_message({"text": "x"})}, version=version)
    assert error_code(outcome) == -32009
    assert outcome.body is not None
    error = outcome.body["error"]
    assert f"A2A version {version} is not supported" in error["message"] and "A2A 0.3" in error["message"]
    assert error["data"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    assert error["data"][0]["metadata"] == {"requestedVersion": version, "supportedVersions": "0.3"}
    assert tasks.tasks == {}


@pytest.mark.parametrize("version", [None, "", "0.3", "0.3.0"])
def test_version_0_3_or_none_is_served(backend: FakeBackend, tasks: FakeTaskStore, version: str | None) -> None:
    assert task_of(rpc(backend, tasks, "message/send", {"message": user_message({"text": "x"})}, version=version))


def test_a_1_0_method_without_a_version_header_gets_its_0_3_name(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    outcome = rpc(backend, tasks, "SendMessage", {"message": user_message({"text": "x"})})
    assert error_code(outcome) == -32601
    assert outcome.body is not None
    assert "SendMessage is an A2A 1.0 method" in outcome.body["error"]["message"]
    assert "message/send" in outcome.body["error"]["message"]


def test_supported_extensions_are_echoed(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    outcome = rpc(backend, tasks, "tasks/get", {"id": "x"}, extensions=f"{CITATION_EXTENSION}, https://other/ext")
    assert outcome.headers == (("X-A2A-Extensions", CITATION_EXTENSION),)
    assert rpc(backend, tasks, "tasks/get", {"id": "x"}).headers == ()


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{", -32700),
        (b"[]", -32600),
        (b'{"jsonrpc": "2.0", "id": 1}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": [1]}', -32600),
    ],
)
def test_framing_errors_answer_in_a_200(backend: FakeBackend, tasks: FakeTaskStore, body: bytes, code: int) -> None:
    outcome = handle_a2a_post(body, backend, tasks)
    assert error_code(outcome) == code


def test_a_backend_crash_is_an_internal_error(backend: FakeBackend, tasks: FakeTaskStore) -> None:
    backend.fail_with = RuntimeError("db down")
    outcome = send(backend, tasks, {"text": "x"})
    assert error_code(outcome) == -32603
    assert outcome.body is not None and outcome.body["id"] == "req-1" and "db down" not in json.dumps(outcome.body)
