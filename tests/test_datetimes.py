"""Every date-time Evergreen emits, on every channel, is full RFC 3339; every date is declared and looks like one.

Walks the JSON of each read route, of MCP results in both eras and of an A2A task: a key naming a
moment (``…At``, ``timestamp``, ``lastModified``) holds ``YYYY-MM-DDTHH:MM:SS[.f](Z|±hh:mm)``; a key
naming a day (``updated``, ``revision``) holds ``YYYY-MM-DD``; and no other string looks like a
truncated date-time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from knowledge.models import Entry, Namespace
from knowledge.retrieval.timestamps import rfc3339
from knowledge.services.entries import entry_retire
from knowledge.services.releases import release_build
from mcp_bridge.mcp_methods import start_of_day
from tests.mcp_bridge.http_calls import legacy, modern, post
from tests.servingfixtures import BUILT_AT, clean_serving_state, demo

__all__ = ["clean_serving_state", "demo"]

pytestmark = pytest.mark.django_db

DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DATE_TIME_KEYS = frozenset({"timestamp", "lastModified"})
DATE_KEYS = frozenset({"updated", "revision"})
DATE_LIKE = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]")


def moments(node: Any, path: str = "$") -> Iterator[tuple[str, str, str]]:
    """(path, key, value) of every string under a key, recursively."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str):
                yield f"{path}.{key}", key, value
            else:
                yield from moments(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from moments(value, f"{path}[{index}]")


def problems(document: Any) -> list[str]:
    found = []
    for path, key, value in moments(document):
        if key in DATE_TIME_KEYS or key.endswith("At"):
            if not DATE_TIME.match(value):
                found.append(f"{path}={value!r} is not an RFC 3339 date-time")
        elif key in DATE_KEYS:
            if not DATE.match(value):
                found.append(f"{path}={value!r} is not a date")
        elif DATE_LIKE.match(value) and not DATE_TIME.match(value):
            found.append(f"{path}={value!r} looks like a truncated date-time")
    return found


@pytest.fixture
def with_tombstone(demo: Namespace) -> Namespace:
    entry = Entry.objects.get(namespace=demo, public_id="EG-003")
    entry_retire(entry=entry, actor=None, reason="Merged.", replaced_by="EG-101", check_permission=False)
    release_build(namespace_id=demo.pk, now=BUILT_AT)
    demo.refresh_from_db()
    return demo


def documents(client: Client) -> dict[str, Any]:
    """The JSON of every read route and protocol answer that can carry a date or a date-time."""
    found: dict[str, Any] = {
        path: client.get(path).json()
        for path in (
            "/context.json",
            "/api/context?topic=token",
            "/api/context",
            "/api/entries/EG-202",
            "/api/entries/EG-003",
            "/api/metrics",
            "/metrics.json",
            "/ai-policy.json",
            "/.well-known/agent-card.json",
        )
    }
    for era, call in (("modern", modern), ("legacy", legacy)):
        found[f"mcp {era} resources/list"] = call(client, "/mcp", "resources/list").json()
        found[f"mcp {era} gone"] = call(
            client, "/mcp", "tools/call", {"name": "get_entry", "arguments": {"ids": ["EG-003", "EG-202"]}}
        ).json()
    found["a2a task"] = post(
        client,
        "/a2a",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "message/send",
            "params": {"message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{"text": "token"}]}},
        },
    ).json()
    return found


def test_every_channel_emits_rfc3339_date_times_and_plain_dates(client: Client, with_tombstone: Namespace) -> None:
    found = documents(client)

    assert {name: problems(document) for name, document in found.items()} == {name: [] for name in found}
    # The walk saw the moments it is about, so an empty problem list means something.
    seen = {key for document in found.values() for _, key, _ in moments(document)}
    assert {"generatedAt", "retiredAt", "lastModified", "timestamp", "updated", "revision"} <= seen


def test_the_tombstone_carries_the_moment_of_retirement(client: Client, with_tombstone: Namespace) -> None:
    retired = Entry.objects.get(namespace=with_tombstone, public_id="EG-003").retired_at
    assert retired is not None

    tombstone = client.get("/api/entries/EG-003").json()

    assert tombstone["retiredAt"] == rfc3339(retired)
    assert json.dumps(client.get("/context.json").json()["retired"][0]["retiredAt"]) == json.dumps(rfc3339(retired))


def test_a_resource_is_last_modified_at_the_start_of_its_updated_day(client: Client, demo: Namespace) -> None:
    resources = modern(client, "/mcp", "resources/list").json()["result"]["resources"]
    entry = client.get("/api/entries/EG-001").json()

    first = next(resource for resource in resources if resource["name"] == "EG-001")
    assert first["annotations"]["lastModified"] == start_of_day(entry["updated"]) == f"{entry['updated']}T00:00:00Z"


def test_the_audit_catches_a_bare_date_where_a_moment_is_due() -> None:
    assert problems({"resources": [{"annotations": {"lastModified": "2026-08-28"}}]}) == [
        "$.resources[0].annotations.lastModified='2026-08-28' is not an RFC 3339 date-time"
    ]
    assert problems({"retiredAt": "2026-11-30"}) and problems({"note": "2026-11-30T10:00"})
