"""One agent contract: every channel answers the same question with the same JSON, and every published
schema (OpenAPI, MCP outputSchema, /schemas/knowledge.schema.json) is the contract's.

REST through HTTP, MCP through the official Python SDK, A2A through a2a-sdk, all against one live server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
import httpx2
import jsonschema
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import DataPart, Message, Part, Role, Task, TaskState
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client

from knowledge.retrieval.contract import shapes
from tests.mcp_bridge.live import LiveServer
from tests.mcp_bridge.live_setup import RESTRICTED_ID, RESTRICTED_MARK, RETIRED_ID

TOPIC = "token 预算"
VALIDATOR = jsonschema.Draft202012Validator


def run(scenario: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    return asyncio.run(scenario())


async def _a2a(live: LiveServer, data: dict[str, Any]) -> Task:
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, f"{live.url}/t/evergreen").get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        message = Message(role=Role.user, message_id="contract", parts=[Part(root=DataPart(data=data))])
        events = [event async for event in client.send_message(message)]
    assert len(events) == 1 and isinstance(events[0], tuple)
    task = events[0][0]
    assert isinstance(task, Task)
    return task


def _a2a_data(task: Task) -> dict[str, Any]:
    assert task.status.state == TaskState.completed and task.artifacts is not None
    part = task.artifacts[0].parts[0].root
    assert isinstance(part, DataPart)
    return part.data


async def _mcp(live: LiveServer, name: str, arguments: dict[str, Any]) -> Any:
    async with McpClient(f"{live.url}/t/evergreen/mcp") as client:
        return await client.call_tool(name, arguments)


def test_every_channel_answers_a_pack_with_the_same_json(live: LiveServer) -> None:
    rest = httpx.get(f"{live.url}/t/evergreen/api/context", params={"topic": TOPIC, "budget": 1200}).json()
    mcp = run(lambda: _mcp(live, "search_context", {"query": TOPIC, "budget": 1200})).structured_content
    a2a = _a2a_data(run(lambda: _a2a(live, {"topic": TOPIC, "budget": 1200})))

    assert rest == mcp == a2a
    VALIDATOR(shapes.CONTEXT.schema()).validate(rest)
    assert list(rest) == [n for n in shapes.CONTEXT.names if n != "overLimit"]  # overLimit: only with limit
    assert rest["entries"] and all(list(e) == [n for n in shapes.PACKED_ENTRY.names if n in e] for e in rest["entries"])


def test_every_channel_answers_a_limited_pack_with_the_same_json(live: LiveServer) -> None:
    """`limit` over REST too, echoed in query, and what it cut named in overLimit (not truncated)."""
    asked: dict[str, Any] = {"topic": "", "budget": 8000, "limit": 2}
    rest = httpx.get(f"{live.url}/t/evergreen/api/context", params=asked).json()
    mcp = run(lambda: _mcp(live, "search_context", {"query": "", "budget": 8000, "limit": 2})).structured_content
    a2a = _a2a_data(run(lambda: _a2a(live, asked)))

    assert rest == mcp == a2a
    VALIDATOR(shapes.CONTEXT.schema()).validate(rest)
    assert rest["query"]["limit"] == 2 and rest["entryCount"] == 2
    assert len(rest["overLimit"]) == min(rest["hitCount"] - 2, 20) and rest["truncated"] is False


def test_every_channel_answers_an_entry_with_the_same_json(live: LiveServer) -> None:
    rest = httpx.get(f"{live.url}/t/evergreen/api/entries/EG-202").json()
    mcp = run(lambda: _mcp(live, "get_entry", {"id": "EG-202"})).structured_content
    a2a = _a2a_data(run(lambda: _a2a(live, {"skill": "get_entry", "arguments": {"id": "EG-202"}})))
    batch = run(lambda: _mcp(live, "get_entry", {"ids": ["EG-202"]})).structured_content

    assert rest == mcp == a2a == batch["entries"][0]
    VALIDATOR(shapes.SERVED_ENTRY.schema()).validate(rest)
    knowledge = httpx.get(f"{live.url}/t/evergreen/context.json").json()
    listed = next(e for e in knowledge["entries"] if e["id"] == "EG-202")
    # context.json lists the same entry (optional members, such as path globs, only where the entry has them)
    assert listed == {name: rest[name] for name in shapes.ENTRY.names if name in rest}


def test_every_channel_answers_a_retired_id_with_the_same_tombstone(live: LiveServer) -> None:
    response = httpx.get(f"{live.url}/t/evergreen/api/entries/{RETIRED_ID}")
    assert response.status_code == 410
    rest = response.json()
    gone = run(lambda: _mcp(live, "get_entry", {"id": RETIRED_ID}))
    mcp = json.loads(gone.content[1].text)["tombstone"]
    batch = run(lambda: _mcp(live, "get_entry", {"ids": [RETIRED_ID]})).structured_content["gone"][0]
    task = run(lambda: _a2a(live, {"skill": "get_entry", "arguments": {"id": RETIRED_ID}}))
    assert task.status.state == TaskState.failed and task.status.message is not None
    a2a_part = task.status.message.parts[1].root
    assert isinstance(a2a_part, DataPart)
    knowledge = httpx.get(f"{live.url}/t/evergreen/context.json").json()
    listed = next(t for t in knowledge["retired"] if t["id"] == RETIRED_ID)

    assert rest == mcp == batch == a2a_part.data["tombstone"] == listed
    VALIDATOR(shapes.TOMBSTONE.schema()).validate(rest)


def test_every_channel_answers_an_unknown_id_with_the_same_nearest_ids(live: LiveServer) -> None:
    response = httpx.get(f"{live.url}/t/evergreen/api/entries/EG-999")
    assert response.status_code == 404
    rest = response.json()
    VALIDATOR(shapes.MISSING.schema()).validate(rest)
    missing = run(lambda: _mcp(live, "get_entry", {"id": "EG-999"}))
    batch = run(lambda: _mcp(live, "get_entry", {"ids": ["EG-999"]})).structured_content["missing"][0]
    assert rest["nearest"] == json.loads(missing.content[1].text)["nearest"] == batch["nearest"]


def test_every_published_schema_is_the_contracts(live: LiveServer) -> None:
    served = httpx.get(f"{live.url}/t/evergreen/schemas/knowledge.schema.json").json()
    assert served == shapes.knowledge_schema()
    jsonschema.Draft7Validator.check_schema(served)

    async def listed() -> dict[str, Any]:
        async with McpClient(f"{live.url}/t/evergreen/mcp") as client:
            return {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}

    tools = run(listed)
    assert tools["search_context"] == shapes.CONTEXT.schema()
    assert shapes.SERVED_ENTRY.schema() in tools["get_entry"]["anyOf"]

    document = httpx.get(f"{live.url}/api/schema/").json()
    context_op = document["paths"]["/api/context"]["get"]["responses"]["200"]["content"]["application/json"]
    assert context_op["schema"] == shapes.CONTEXT.schema()
    entry_op = document["paths"]["/api/entries/{entry_id}"]["get"]["responses"]
    assert entry_op["200"]["content"]["application/json"]["schema"] == shapes.SERVED_ENTRY.schema()
    assert shapes.TOMBSTONE.schema() in entry_op["410"]["content"]["application/json"]["schema"]["anyOf"]
    assert entry_op["404"]["content"]["application/json"]["schema"] == shapes.MISSING.schema()


def test_each_key_reads_what_it_clears_through_the_sdks(live: LiveServer) -> None:
    """Sensitivity through the official MCP and A2A clients: the vault's public-clearance key never sees
    its restricted entry; the restricted key does, on both protocols."""

    async def seen(key: str) -> tuple[bool, bool, bool]:
        headers = {"Authorization": f"Bearer {key}"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            McpClient(streamable_http_client(f"{live.url}/t/vault/mcp", http_client=http)) as client,
        ):
            search = await client.call_tool("search_context", {"query": "archive keeper", "budget": 8000})
            entry = await client.call_tool("get_entry", {"id": RESTRICTED_ID})
        async with httpx.AsyncClient(headers=headers) as web:
            card = await A2ACardResolver(web, f"{live.url}/t/vault").get_agent_card()
            a2a = ClientFactory(ClientConfig(httpx_client=web, streaming=False)).create(card)
            message = Message(role=Role.user, message_id="s", parts=[Part(root=DataPart(data={"topic": "keeper"}))])
            events = [event async for event in a2a.send_message(message)]
        answer = events[0][0].model_dump_json() if isinstance(events[0], tuple) else ""
        return (
            RESTRICTED_MARK in json.dumps(search.structured_content),
            entry.is_error is False,
            RESTRICTED_MARK in answer,
        )

    assert run(lambda: seen(live.vault_key)) == (False, False, False)
    assert run(lambda: seen(live.restricted_key)) == (True, True, True)
