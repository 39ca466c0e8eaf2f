"""The official a2a-sdk (0.3 line) client against a live Evergreen server process: card, message/send, tasks/*."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientHTTPError, A2AClientJSONRPCError
from a2a.types import (
    AgentCard,
    DataPart,
    FilePart,
    FileWithUri,
    Message,
    Part,
    Role,
    Task,
    TaskIdParams,
    TaskQueryParams,
    TaskState,
    TextPart,
)

from tests.mcp_bridge.live import LiveServer


def run(scenario: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    return asyncio.run(scenario())


def message(*parts: TextPart | DataPart | FilePart, message_id: str = "m1") -> Message:
    return Message(role=Role.user, message_id=message_id, parts=[Part(root=part) for part in parts])


async def send(client: Client, msg: Message) -> Task:
    events = [event async for event in client.send_message(msg)]
    assert len(events) == 1
    task, update = events[0]
    assert isinstance(task, Task) and update is None
    return task


async def connect(http: httpx.AsyncClient, base: str) -> tuple[AgentCard, Client]:
    card = await A2ACardResolver(http, base).get_agent_card()
    return card, ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)


def test_the_card_is_a_valid_v030_agent_card_with_discovery_headers(live: LiveServer) -> None:
    response = httpx.get(f"{live.url}/t/evergreen/.well-known/agent-card.json")

    card = AgentCard.model_validate(response.json())
    assert card.protocol_version == "0.3.0" and card.preferred_transport == "JSONRPC"
    assert card.url == f"{live.url}/t/evergreen/a2a"
    assert [skill.id for skill in card.skills] == [
        "search_context",
        "get_entry",
        "get_prompt_pack",
        "get_metrics",
        "submit_feedback",
        "verify_citations",
        "explain_context",
    ]
    assert card.capabilities.extensions is not None
    assert [e.uri.rsplit("/", 2)[-2] for e in card.capabilities.extensions] == ["token-budget", "citation"]
    assert card.security == [{}]
    assert response.headers["Link"].startswith('</t/evergreen/llms.txt>; rel="describedby"')
    assert response.headers["Cache-Control"] == "public, max-age=900"
    again = httpx.get(response.url, headers={"If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304


def test_message_send_with_text_and_data_parts_then_get_and_cancel(live: LiveServer) -> None:
    async def scenario() -> None:
        async with httpx.AsyncClient() as http:
            _, client = await connect(http, f"{live.url}/t/evergreen")
            task = await send(client, message(TextPart(text="token"), DataPart(data={"budget": 800})))
            assert task.status.state == TaskState.completed
            assert task.artifacts is not None
            data, text = (part.root for part in task.artifacts[0].parts)
            assert isinstance(data, DataPart) and isinstance(text, TextPart)
            assert data.data["query"] == {"topic": "token", "budget": 800, "category": None}
            assert data.data["usedTokens"] <= 800
            assert all(f"[{e['id']}]" in text.text for e in data.data["entries"])

            # Two gunicorn workers: the task is found whichever one answers.
            for _ in range(4):
                fetched = await client.get_task(TaskQueryParams(id=task.id))
                assert fetched.id == task.id and fetched.status.state == TaskState.completed

            with pytest.raises(A2AClientJSONRPCError) as finished:
                await client.cancel_task(TaskIdParams(id=task.id))
            assert finished.value.error.code == -32002  # TaskNotCancelableError, v0.3.0 §8.2

            with pytest.raises(A2AClientJSONRPCError) as unknown:
                await client.get_task(TaskQueryParams(id="no-such-task"))
            assert unknown.value.error.code == -32001  # TaskNotFoundError

    run(scenario)


def test_a_data_part_alone_carries_topic_budget_and_category(live: LiveServer) -> None:
    async def scenario() -> Task:
        async with httpx.AsyncClient() as http:
            _, client = await connect(http, f"{live.url}/t/evergreen")
            return await send(client, message(DataPart(data={"topic": "引用", "budget": 1200, "category": "rule"})))

    task = run(scenario)
    assert task.artifacts is not None
    pack = task.artifacts[0].parts[0].root
    assert isinstance(pack, DataPart)
    assert pack.data["query"] == {"topic": "引用", "budget": 1200, "category": "rule"}
    assert {entry["category"] for entry in pack.data["entries"]} == {"rule"}


def test_a_retired_entry_fails_the_task_with_its_tombstone(live: LiveServer) -> None:
    async def scenario() -> Task:
        async with httpx.AsyncClient() as http:
            _, client = await connect(http, f"{live.url}/t/evergreen")
            return await send(client, message(DataPart(data={"skill": "get_entry", "arguments": {"id": "EG-003"}})))

    task = run(scenario)
    assert task.status.state == TaskState.failed
    assert task.status.message is not None
    details = task.status.message.parts[1].root
    assert isinstance(details, DataPart) and details.data["tombstone"]["replacedBy"] == "EG-101"


def test_a_file_part_is_refused_with_content_type_not_supported(live: LiveServer) -> None:
    async def scenario() -> None:
        async with httpx.AsyncClient() as http:
            _, client = await connect(http, f"{live.url}/t/evergreen")
            file = FilePart(file=FileWithUri(uri="https://example.com/a.pdf", mime_type="application/pdf"))
            with pytest.raises(A2AClientJSONRPCError) as refused:
                await send(client, message(TextPart(text="token"), file))
            assert refused.value.error.code == -32005  # ContentTypeNotSupportedError, v0.3.0 §8.2

    run(scenario)


def test_a_private_namespace_card_needs_the_key_and_declares_bearer(live: LiveServer) -> None:
    async def scenario() -> None:
        async with httpx.AsyncClient() as anonymous:
            with pytest.raises(A2AClientHTTPError) as hidden:
                await A2ACardResolver(anonymous, f"{live.url}/t/vault").get_agent_card()
            assert hidden.value.status_code == 404  # exactly like a namespace that does not exist
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {live.vault_key}"}) as http:
            card, client = await connect(http, f"{live.url}/t/vault")
            assert card.security == [{"apiKey": []}]
            assert card.security_schemes is not None
            assert card.security_schemes["apiKey"].root.scheme == "bearer"  # type: ignore[union-attr]
            task = await send(client, message(TextPart(text="archive")))
            assert task.artifacts is not None
            pack = task.artifacts[0].parts[0].root
            assert isinstance(pack, DataPart)
            assert pack.data["entries"] and all(e["id"].startswith("VA-") for e in pack.data["entries"])

    run(scenario)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ({"skill": "nope"}, "unknown_skill"),
        ({"bogus": 1}, "unknown_data_keys"),
        ({"skill": "get_entry", "arguments": "EG-202"}, "invalid_data_part"),
        ({"skill": "get_entry", "arguments": {}}, "invalid_arguments"),
    ],
)
def test_the_sdk_sees_one_stable_code_on_every_refusal(live: LiveServer, data: dict[str, Any], code: str) -> None:
    async def scenario() -> None:
        async with httpx.AsyncClient() as http:
            _, client = await connect(http, f"{live.url}/t/evergreen")
            with pytest.raises(A2AClientJSONRPCError) as refused:
                await send(client, message(DataPart(data=data)))
            assert refused.value.error.code == -32602
            assert isinstance(refused.value.error.data, dict) and refused.value.error.data["code"] == code

    run(scenario)
