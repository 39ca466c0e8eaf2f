"""Conditional loading by paths (issue 16 §2) through the official MCP Python SDK and a2a-sdk, live.

The namespace ``rules`` (tests.mcp_bridge.live_setup.PATH_RULES) holds a ``*.sql`` rule, a
``src/api/**/*.py`` rule and one entry without globs; every channel must answer a request with
paths as GET /api/context does, byte for byte where the channel carries the JSON.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import DataPart, Message, Part, Role, Task
from mcp import Client

from tests.mcp_bridge.live import LiveServer, run_setup

MODES = ("legacy", "auto")


@pytest.fixture(scope="module")
def rules(live: LiveServer) -> str:
    return f"{live.url}/t/{run_setup('paths', live.env)['slug']}"


def run(scenario: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    return asyncio.run(scenario())


def rest(base: str, **params: Any) -> dict[str, Any]:
    response = httpx.get(f"{base}/api/context", params=params)
    assert response.status_code == 200, response.text
    document: dict[str, Any] = response.json()
    return document


@pytest.mark.parametrize("mode", MODES)
def test_search_context_takes_paths_through_the_mcp_sdk(rules: str, mode: str) -> None:
    async def scenario() -> None:
        async with Client(f"{rules}/mcp", mode=mode) as client:
            tools = await client.list_tools()
            search = next(tool for tool in tools.tools if tool.name == "search_context")
            assert search.input_schema["properties"]["paths"]["type"] == "array"

            only = await client.call_tool("search_context", {"query": "", "paths": ["src/api/users.py"]})
            assert only.is_error is False and only.structured_content is not None
            assert [e["id"] for e in only.structured_content["entries"]] == ["RU-202"]
            assert only.structured_content["entries"][0]["matchedPaths"] == ["src/api/users.py"]
            assert only.structured_content == rest(rules, paths="src/api/users.py")

            mixed = await client.call_tool(
                "search_context", {"query": "reviewed change", "paths": ["db/0001.sql", "src/api/users.py"]}
            )
            assert mixed.structured_content is not None
            found = [e["id"] for e in mixed.structured_content["entries"]]
            assert found[:2] == ["RU-202", "RU-201"] and "RU-203" in found[2:]

            refused = await client.call_tool("search_context", {"query": "", "paths": ["/etc/passwd"]})
            assert refused.is_error is True
            assert "$.paths" in refused.content[0].text  # type: ignore[union-attr]
            assert "is absolute; send paths relative to the project root" in refused.content[0].text  # type: ignore[union-attr]

    run(scenario)


def test_explain_context_does_not_offer_paths(rules: str) -> None:
    async def scenario() -> None:
        async with Client(f"{rules}/mcp", mode="auto") as client:
            tools = await client.list_tools()
            explain = next(tool for tool in tools.tools if tool.name == "explain_context")
            assert "paths" not in explain.input_schema["properties"]

    run(scenario)


def test_a2a_message_send_carries_paths_in_its_data_part(rules: str) -> None:
    async def scenario() -> Task:
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, rules).get_agent_card()
            client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
            data = DataPart(data={"topic": "", "paths": ["schema.sql"], "budget": 800})
            message = Message(role=Role.user, message_id="paths-1", parts=[Part(root=data)])
            events = [event async for event in client.send_message(message)]
            task, _ = events[0]
            assert isinstance(task, Task)
            return task

    task = run(scenario)
    assert task.artifacts is not None
    pack = task.artifacts[0].parts[0].root
    assert isinstance(pack, DataPart)
    assert [e["id"] for e in pack.data["entries"]] == ["RU-201"]
    assert pack.data["query"]["paths"] == ["schema.sql"]
    assert pack.data == rest(rules, paths="schema.sql", budget=800)
