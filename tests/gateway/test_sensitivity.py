"""Sensitivity on every surface (issue 12 §4): a cast of callers asks every route and protocol, and no answer
ever holds an entry above the caller's clearance; public files never hold a non-public entry at all."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from knowledge.models import Namespace
from knowledge.services.api_keys import api_key_create, api_key_revoke
from tests.servingfixtures import alpha_rows, beta_rows, publish

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_rate_limit")]

INTERNAL_MARK = "HANGARCODE4417"
RESTRICTED_MARK = "MOONBASESEVEN"
LEVEL = {"public": 0, "internal": 1, "restricted": 2}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def _rows() -> list[dict[str, Any]]:
    hidden = [
        {
            "id": "AL-901",
            "category": "fact",
            "title": "Zeppelin hangar access",
            "summary": "How staff open the zeppelin hangar.",
            "body": f"The zeppelin hangar opens with code {INTERNAL_MARK} at the north gate.",
            "tags": ["zeppelin"],
            "updated": "2026-08-01",
            "sensitivity": "internal",
        },
        {
            "id": "AL-902",
            "category": "fact",
            "title": "Zeppelin board meetings",
            "summary": "Where the zeppelin board meets.",
            "body": f"The zeppelin board meets at {RESTRICTED_MARK} every quarter, in secret.",
            "tags": ["zeppelin"],
            "updated": "2026-08-01",
            "sensitivity": "restricted",
        },
    ]
    rows = alpha_rows()
    rows[0] = {**rows[0], "links": ["AL-901"]}  # a public entry that links to an internal one
    return [*rows, *hidden]


@pytest.fixture
def world(ns_a: Namespace, ns_b: Namespace) -> dict[str, str | None]:
    """Alpha (public) with internal and restricted entries; beta's restricted key; the cast of callers."""
    publish(ns_a, _rows())
    publish(ns_b, beta_rows())
    keys = {
        level: api_key_create(namespace=ns_a, name=level, actor=None, clearance=level, check_permission=False)[1]
        for level in LEVEL
    }
    revoked, revoked_raw = api_key_create(
        namespace=ns_a, name="old", actor=None, clearance="restricted", check_permission=False
    )
    api_key_revoke(key=revoked, actor=None, check_permission=False)
    _, beta_key = api_key_create(namespace=ns_b, name="b", actor=None, clearance="restricted", check_permission=False)
    return {
        "anonymous": None,
        "public key": keys["public"],
        "internal key": keys["internal"],
        "restricted key": keys["restricted"],
        "another namespace's restricted key": beta_key,
        "revoked restricted key": revoked_raw,
    }


CLEARANCE = {
    "anonymous": "public",
    "public key": "public",
    "internal key": "internal",
    "restricted key": "restricted",
    "another namespace's restricted key": "public",
    "revoked restricted key": "public",
}

# Files and pages anyone may fetch: never a non-public entry, whatever the key.
PUBLIC_ROUTES = [
    "",
    "index.html.md",
    "llms.txt",
    "llms-full.txt",
    "context.json",
    "sitemap.xml",
    "ai-policy.json",
    "metrics.json",
    "metrics.html",
    "entries/",
    "entries/?q=zeppelin",
    "entries/AL-901",
    "entries/AL-901.md",
    "entries/AL-001",
]
# Read routes answered from the caller's view.
CLEARED_ROUTES = [
    "api/context?topic=zeppelin+hangar+board&budget=8000",
    "api/context?topic=zeppelin&budget=8000&budgetMode=payload",
    "api/entries/AL-901",
    "api/entries/AL-901.md",
    "api/entries/AL-902",
    "api/changes?since=0",
]


def _headers(key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


def _seen(text: str) -> int:
    """The highest level whose text the answer holds (-1: none)."""
    if RESTRICTED_MARK in text:
        return LEVEL["restricted"]
    return LEVEL["internal"] if INTERNAL_MARK in text else -1


def _mcp(client: Client, key: str | None, method: str, params: dict[str, Any]) -> str:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = client.post(
        "/t/alpha/mcp", json.dumps(body), content_type="application/json", headers={**MCP_HEADERS, **_headers(key)}
    )
    assert response.status_code == 200, response.content
    return response.content.decode()


def _a2a(client: Client, key: str | None, data: dict[str, Any]) -> str:
    message = {"role": "user", "messageId": "m1", "parts": [{"kind": "data", "data": data}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    response = client.post("/t/alpha/a2a", json.dumps(body), content_type="application/json", headers=_headers(key))
    assert response.status_code == 200, response.content
    return response.content.decode()


@pytest.mark.parametrize("caller", list(CLEARANCE))
def test_public_files_and_pages_never_hold_a_non_public_entry(client: Client, world: Any, caller: str) -> None:
    for route in PUBLIC_ROUTES:
        response = client.get(f"/t/alpha/{route}", headers=_headers(world[caller]))
        assert response.status_code in {200, 404}, route
        assert _seen(response.content.decode()) == -1, (caller, route)
    # The page of a hidden entry answers like an ID that never existed.
    assert client.get("/t/alpha/entries/AL-901", headers=_headers(world[caller])).status_code == 404


@pytest.mark.parametrize("caller", list(CLEARANCE))
def test_read_routes_answer_only_what_the_key_clears(client: Client, world: Any, caller: str) -> None:
    cleared = LEVEL[CLEARANCE[caller]]
    for route in CLEARED_ROUTES:
        response = client.get(f"/t/alpha/{route}", headers=_headers(world[caller]))
        assert _seen(response.content.decode()) <= cleared, (caller, route)
    internal = client.get("/t/alpha/api/entries/AL-901", headers=_headers(world[caller]))
    restricted = client.get("/t/alpha/api/entries/AL-902", headers=_headers(world[caller]))
    assert internal.status_code == (200 if cleared >= 1 else 404)
    assert restricted.status_code == (200 if cleared >= 2 else 404)
    pack = client.get("/t/alpha/api/context?topic=zeppelin&budget=8000", headers=_headers(world[caller])).json()
    assert {e["sensitivity"] for e in pack["entries"]} <= {s for s, n in LEVEL.items() if n <= cleared}
    assert _seen(json.dumps(pack)) == (cleared if cleared else -1)
    if cleared:  # a wider view is never stored where another caller could get it
        assert internal["Cache-Control"].startswith("private")


@pytest.mark.parametrize("caller", list(CLEARANCE))
def test_mcp_and_a2a_answer_only_what_the_key_clears(client: Client, world: Any, caller: str) -> None:
    key, cleared = world[caller], LEVEL[CLEARANCE[caller]]
    answers = [
        _mcp(client, key, "tools/call", {"name": "search_context", "arguments": {"query": "zeppelin", "budget": 8000}}),
        _mcp(client, key, "tools/call", {"name": "get_entry", "arguments": {"ids": ["AL-901", "AL-902"]}}),
        _mcp(client, key, "tools/call", {"name": "explain_context", "arguments": {"query": "zeppelin board"}}),
        _mcp(client, key, "resources/list", {}),
        _mcp(client, key, "resources/read", {"uri": "evergreen://alpha/AL-902"}),
        _a2a(client, key, {"topic": "zeppelin", "budget": 8000}),
        _a2a(client, key, {"skill": "get_entry", "arguments": {"id": "AL-902"}}),
    ]
    assert max(_seen(answer) for answer in answers) == (cleared if cleared else -1), caller
    listed = _mcp(client, key, "resources/list", {})
    assert ("evergreen://alpha/AL-902" in listed) == (cleared == 2)


def test_a_private_namespace_serves_each_key_its_own_view(client: Client, ns_a: Namespace) -> None:
    ns_a.is_public = False
    ns_a.save(update_fields=["is_public"])
    publish(ns_a, _rows())
    keys = {
        level: api_key_create(namespace=ns_a, name=level, actor=None, clearance=level, check_permission=False)[1]
        for level in LEVEL
    }
    assert client.get("/t/alpha/api/entries/AL-001").status_code == 404
    for level, key in keys.items():
        body = client.get("/t/alpha/api/context?topic=zeppelin&budget=8000", headers=_headers(key)).content.decode()
        assert _seen(body) == (LEVEL[level] if LEVEL[level] else -1)
        assert _seen(client.get("/t/alpha/llms-full.txt", headers=_headers(key)).content.decode()) == -1
