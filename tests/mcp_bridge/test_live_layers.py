"""The layered demo (issue 16 §1) through the official MCP Python SDK and a2a-sdk, live: every channel says
which layer each entry came from, and an override replaces its base entry everywhere."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import DataPart, Message, Part, Role, Task
from mcp import Client

from tests.mcp_bridge.live import LiveServer, run_setup


@pytest.fixture(scope="module")
def cloud(live: LiveServer) -> str:
    assert run_setup("layers", live.env)["slugs"] == ["acme", "acme-cloud", "acme-payments"]
    return f"{live.url}/t/acme-cloud"


def layers_of(pack: dict[str, Any]) -> dict[str, str]:
    return {entry["id"]: entry["layer"] for entry in pack["entries"]}


def test_mcp_search_context_names_each_entrys_layer(cloud: str) -> None:
    async def scenario() -> dict[str, Any]:
        async with Client(f"{cloud}/mcp", mode="auto") as client:
            result = await client.call_tool(
                "search_context", {"query": "support hours", "paths": ["src/api/users.py", "migrations/0002.sql"]}
            )
            assert result.is_error is False and result.structured_content is not None
            return result.structured_content

    pack = asyncio.run(scenario())
    found = layers_of(pack)
    # Path rules first, the product's own before the company's; then the override of AC-101.
    assert list(found)[:2] == ["CL-201", "AC-201"]
    assert found["CL-201"] == "acme-cloud" and found["AC-201"] == "acme"
    assert found.get("CL-101") == "acme-cloud" and "AC-101" not in found
    assert (
        pack
        == httpx.get(
            f"{cloud}/api/context",
            params={"topic": "support hours", "paths": ["src/api/users.py", "migrations/0002.sql"]},
        ).json()
    )


def test_a2a_names_each_entrys_layer_and_the_base_id_is_gone(cloud: str) -> None:
    async def scenario() -> Task:
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, cloud).get_agent_card()
            client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
            data = DataPart(data={"topic": "data retention", "budget": 800})
            events = [
                e async for e in client.send_message(Message(role=Role.user, message_id="l1", parts=[Part(root=data)]))
            ]
            task, _ = events[0]
            assert isinstance(task, Task)
            return task

    task = asyncio.run(scenario())
    assert task.artifacts is not None
    pack = task.artifacts[0].parts[0].root
    assert isinstance(pack, DataPart)
    assert layers_of(pack.data)["AC-102"] == "acme"
    gone = httpx.get(f"{cloud}/api/entries/AC-101")
    assert gone.status_code == 410 and gone.json()["replacedBy"] == "CL-101"


def test_the_private_product_answers_only_with_a_key(cloud: str, live: LiveServer) -> None:
    assert httpx.get(f"{live.url}/t/acme-payments/api/context?topic=card").status_code == 404
    assert httpx.get(f"{live.url}/t/acme/api/entries/PA-201").status_code == 404
