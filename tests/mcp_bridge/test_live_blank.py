"""Entries with an empty body are valid content (the import takes them): MCP serves them like REST does.

The bench's synthetic namespaces hold such entries (Cranfield has 22); ``search_context`` used to
answer JSON-RPC -32603 for any pack holding one, since its output schema asked for a non-empty body.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from mcp import Client

from tests.mcp_bridge.live import LiveServer, run_setup

MODES = ("legacy", "auto")


@pytest.fixture(scope="module")
def blank(live: LiveServer) -> str:
    return f"{live.url}/t/{run_setup('blank', live.env)['slug']}"


@pytest.mark.parametrize("mode", MODES)
def test_search_context_serves_entries_with_an_empty_body(blank: str, mode: str) -> None:
    async def scenario() -> dict[str, Any]:
        async with Client(f"{blank}/mcp", mode=mode) as client:
            found = await client.call_tool("search_context", {"query": "boundary layer transition"})
            assert found.is_error is False, found.content
            assert found.structured_content is not None
            return found.structured_content

    pack = asyncio.run(scenario())
    bodies = {entry["id"]: entry["body"] for entry in pack["entries"]}
    assert bodies["BL-001"] == ""
    rest = httpx.get(f"{blank}/api/context", params={"topic": "boundary layer transition"}).json()
    assert pack == rest


def test_get_entry_serves_an_entry_with_an_empty_body(blank: str) -> None:
    async def scenario() -> dict[str, Any]:
        async with Client(f"{blank}/mcp", mode="auto") as client:
            entry = await client.call_tool("get_entry", {"id": "BL-001"})
            assert entry.is_error is False, entry.content
            assert entry.structured_content is not None
            return entry.structured_content

    assert asyncio.run(scenario())["body"] == ""
