"""The official MCP Python SDK against a live Evergreen server process, in both protocol eras (issue 4's proof)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from tests.mcp_bridge.live import LiveServer
from tests.mcp_bridge.live_setup import REPLACEMENT_ID, RETIRED_ID, VAULT_ENTRIES

TOOLS = [
    "search_context",
    "get_entry",
    "get_prompt_pack",
    "get_metrics",
    "submit_feedback",
    "verify_citations",
    "explain_context",
]
MODES = {"legacy": "2025-11-25", "auto": "2026-07-28"}


def run(scenario: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    return asyncio.run(scenario())


def evergreen(live: LiveServer) -> str:
    return f"{live.url}/t/evergreen/mcp"


async def call_every_read_tool(client: Client, live: LiveServer) -> None:
    search = await client.call_tool("search_context", {"query": "token 预算"})
    assert search.is_error is False
    pack = search.structured_content
    assert pack is not None
    assert "[/ENTRY]" in search.content[0].text  # type: ignore[union-attr]  # entries as quoted data
    rest = httpx.get(f"{live.url}/t/evergreen/api/context", params={"topic": "token 预算"}).json()
    assert pack == rest  # the same selectors, engine and cached bytes as GET /api/context
    assert pack["matched"] is True and pack["entries"][0]["id"] == "EG-202"

    capped = await client.call_tool("search_context", {"query": "token", "budget": 100000, "limit": 2})
    assert capped.structured_content is not None
    assert capped.structured_content["budget"] == 8000 and capped.structured_content["entryCount"] <= 2

    entry = await client.call_tool("get_entry", {"id": "eg-202"})
    assert entry.is_error is False and entry.structured_content is not None
    assert entry.structured_content["id"] == "EG-202" and entry.structured_content["body"]

    gone = await client.call_tool("get_entry", {"id": RETIRED_ID})
    assert gone.is_error is True
    details = json.loads(gone.content[1].text)  # type: ignore[union-attr]
    assert details["error"] == "gone" and details["tombstone"]["replacedBy"] == REPLACEMENT_ID
    assert f"replaced by {REPLACEMENT_ID}" in gone.content[0].text  # type: ignore[union-attr]

    missing = await client.call_tool("get_entry", {"id": "EG-999"})
    assert missing.is_error is True
    assert json.loads(missing.content[1].text)["nearest"] == ["EG-501", "EG-403", "EG-402"]  # type: ignore[union-attr]

    pack_tool = await client.call_tool("get_prompt_pack", {"scenario": "coding"})
    assert pack_tool.structured_content is not None and pack_tool.structured_content["scenario"] == "coding"

    metrics = await client.call_tool("get_metrics", {})
    assert metrics.structured_content is not None and "budgetScan" in metrics.structured_content

    checked = await client.call_tool("verify_citations", {"answer": "Cite entries [EG-202] and [EG-999]."})
    assert checked.structured_content is not None
    assert [c["valid"] for c in checked.structured_content["citations"]] == [True, False]

    explained = await client.call_tool("explain_context", {"query": "token 预算", "ids": ["EG-999"]})
    assert explained.structured_content is not None
    assert explained.structured_content["explain"]["entries"][0]["outcome"] == "not_found"

    # Schema violations are tool errors the model can correct (tools.mdx §Error Handling), not -32602.
    invalid = await client.call_tool("search_context", {"query": "token", "budget": "lots"})
    assert invalid.is_error is True and "$.budget" in invalid.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", list(MODES))
def test_the_sdk_lists_and_calls_every_tool(live: LiveServer, mode: str) -> None:
    async def scenario() -> None:
        async with Client(evergreen(live), mode=mode) as client:
            assert client.protocol_version == MODES[mode]
            assert client.instructions is not None and "search_context" in client.instructions
            tools = await client.list_tools()
            assert [tool.name for tool in tools.tools] == TOOLS
            await call_every_read_tool(client, live)

    run(scenario)


@pytest.mark.parametrize("mode", list(MODES))
def test_the_sdk_lists_and_reads_resources(live: LiveServer, mode: str) -> None:
    async def scenario() -> None:
        async with Client(evergreen(live), mode=mode) as client:
            listed = await client.list_resources()
            uris = [resource.uri for resource in listed.resources]
            assert len(uris) == 14 and listed.next_cursor is None  # 15 demo entries, one retired
            assert "evergreen://evergreen/EG-202" in uris and f"evergreen://evergreen/{RETIRED_ID}" not in uris
            read = await client.read_resource("evergreen://evergreen/EG-202")
            assert read.contents[0].text.startswith("# EG-202")  # type: ignore[union-attr]
            with pytest.raises(MCPError) as gone:
                await client.read_resource(f"evergreen://evergreen/{RETIRED_ID}")
            # -32002 was retired by 2026-07-28 (basic/index.mdx §Error Codes) in favour of -32602.
            assert gone.value.code == (-32602 if mode == "auto" else -32002)

    run(scenario)


@pytest.mark.parametrize("mode", list(MODES))
def test_the_sdk_lists_and_gets_prompts(live: LiveServer, mode: str) -> None:
    async def scenario() -> None:
        async with Client(evergreen(live), mode=mode) as client:
            prompts = await client.list_prompts()
            assert [prompt.name for prompt in prompts.prompts] == ["chat", "coding", "research", "support"]
            coding = await client.get_prompt("coding")
            assert "coding" in coding.messages[0].content.text  # type: ignore[union-attr]
            with pytest.raises(MCPError) as unknown:
                await client.get_prompt("poetry")
            assert unknown.value.code == -32602

    run(scenario)


def test_the_bare_host_serves_the_default_namespace(live: LiveServer) -> None:
    async def scenario() -> None:
        async with Client(f"{live.url}/mcp") as client:
            assert client.protocol_version == "2026-07-28"
            entry = await client.call_tool("get_entry", {"id": "EG-001"})
            assert entry.is_error is False

    run(scenario)


@pytest.mark.parametrize("mode", list(MODES))
def test_feedback_lands_in_the_review_queue_and_changes_nothing_published(live: LiveServer, mode: str) -> None:
    before = live.inspect()
    message = f"EG-202 says 2000 tokens; our team uses 3000 ({mode}). <script>alert(1)</script>"

    async def scenario() -> Any:
        async with Client(evergreen(live), mode=mode) as client:
            return await client.call_tool(
                "submit_feedback",
                {"entryId": "EG-202", "query": "token budget", "kind": "outdated", "message": message},
            )

    receipt = run(scenario)
    after = live.inspect()

    assert receipt.is_error is False
    assert receipt.structured_content["status"] == "queued_for_review"
    stored = [row for row in after["feedback"] if row["message"] == message]
    assert stored == [
        {
            "namespace__slug": "evergreen",
            "entry_public_id": "EG-202",
            "query": "token budget",
            "kind": "outdated",
            "message": message,  # untrusted text, stored as sent
            "status": "open",
        }
    ]
    assert after["published"] == before["published"]  # same active releases, versions and content serials


def test_a_private_namespace_needs_its_key(live: LiveServer) -> None:
    url = f"{live.url}/t/vault/mcp"

    async def with_key() -> None:
        headers = {"Authorization": f"Bearer {live.vault_key}"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http), mode="auto") as client,
        ):
            assert client.protocol_version == "2026-07-28"
            first = await client.list_resources()
            assert len(first.resources) == 50 and first.next_cursor is not None
            rest = await client.list_resources(cursor=first.next_cursor)
            assert len(rest.resources) == VAULT_ENTRIES - 50 and rest.next_cursor is None
            uris = [r.uri for r in first.resources + rest.resources]
            assert uris == [f"evergreen://vault/VA-{n:03d}" for n in range(1, VAULT_ENTRIES + 1)]
            search = await client.call_tool("search_context", {"query": "archive", "limit": 3})
            assert search.structured_content is not None
            assert {e["id"][:3] for e in search.structured_content["entries"]} == {"VA-"}
            assert "[VA-xxx]" in (client.instructions or "")
            # The vault's MCP never answers with the public namespace's entries.
            foreign = await client.call_tool("get_entry", {"id": "EG-202"})
            assert foreign.is_error is True

    async def without_key() -> None:
        async with Client(url, mode="legacy"):
            pass

    run(with_key)
    with pytest.raises(Exception) as refused:  # noqa: PT011 - the SDK wraps it in an ExceptionGroup or MCPError
        run(without_key)
    assert "No such namespace" in repr(refused.value)


@pytest.mark.parametrize("mode", list(MODES))
def test_the_sdk_sees_one_stable_code_on_every_error(live: LiveServer, mode: str) -> None:
    async def scenario() -> None:
        async with Client(evergreen(live), mode=mode) as client:
            with pytest.raises(MCPError) as unknown_tool:
                await client.call_tool("no_such_tool", {})
            with pytest.raises(MCPError) as unknown_prompt:
                await client.get_prompt("nope")
            with pytest.raises(MCPError) as gone:
                await client.read_resource(f"evergreen://evergreen/{RETIRED_ID}")
            with pytest.raises(MCPError) as missing:
                await client.read_resource("evergreen://evergreen/EG-999")
            nul = await client.call_tool("search_context", {"query": "a\x00b"})

        assert unknown_tool.value.data == {"code": "unknown_tool", "name": "no_such_tool"}
        assert unknown_prompt.value.data == {"code": "unknown_prompt", "name": "nope"}
        assert gone.value.data["code"] == "gone" and gone.value.data["tombstone"]["replacedBy"] == REPLACEMENT_ID
        assert missing.value.data == {"code": "not_found", "uri": "evergreen://evergreen/EG-999"}
        # An unusable argument value is an input validation error the model sees (SEP-1303), like any other.
        assert nul.is_error is True
        assert json.loads(nul.content[1].text)["code"] == "invalid_text"  # type: ignore[union-attr]

    run(scenario)
