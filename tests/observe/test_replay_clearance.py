"""Replay renders a logged request from the view it was served with: a key's clearance is logged with it."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.core.management import call_command
from django.test import Client

from knowledge.models import Namespace, RequestLog
from knowledge.requestlog.buffer import buffer
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.api_keys import api_key_create
from knowledge.services.request_log import QUEUE_KEY, request_log_drain, request_log_ship
from tests.observe.logged import logging_on, written
from tests.servingfixtures import BUILT_AT, alpha_rows, publish

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_rate_limit")]
__all__ = ["logging_on"]

INTERNAL_MARK = "HANGARCODE4417"
RESTRICTED_MARK = "MOONBASESEVEN"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def _hidden(*, changed: bool = False) -> list[dict[str, Any]]:
    base = {"category": "fact", "tags": ["zeppelin"], "updated": "2026-08-01"}
    return [
        {
            **base,
            "id": "AL-901",
            "title": "Zeppelin hangar access",
            "summary": "How staff open the zeppelin hangar.",
            "body": f"The zeppelin hangar opens with code {INTERNAL_MARK}." + (" Also on Sundays." if changed else ""),
            "sensitivity": "internal",
        },
        {
            **base,
            "id": "AL-902",
            "title": "Zeppelin board meetings",
            "summary": "Where the zeppelin board meets.",
            "body": f"The zeppelin board meets at {RESTRICTED_MARK}.",
            "sensitivity": "restricted",
        },
    ]


@pytest.fixture
def restricted_key(ns_a: Namespace) -> str:
    """Alpha (public) with an internal and a restricted entry; a restricted key's raw value."""
    publish(ns_a, [*alpha_rows(), *_hidden()])
    return api_key_create(namespace=ns_a, name="r", actor=None, clearance="restricted", check_permission=False)[1]


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _replay(row_id: int, *options: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("replay_request", str(row_id), *options, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_a_restricted_keys_context_request_replays_byte_for_byte(
    client: Client, restricted_key: str, logging_on: None
) -> None:
    answer = client.get("/t/alpha/api/context?topic=zeppelin+hangar+board&budget=8000", headers=_auth(restricted_key))
    assert RESTRICTED_MARK in answer.content.decode()
    (row,) = written()

    _, err = _replay(row.pk)

    assert row.clearance == "restricted"
    assert "byte for byte the same" in err


def test_a_restricted_entry_replays_and_diffs_in_the_view_it_was_served_with(
    client: Client, restricted_key: str, ns_a: Namespace, logging_on: None
) -> None:
    client.get("/t/alpha/api/entries/AL-902", headers=_auth(restricted_key))
    client.get("/t/alpha/api/entries/AL-902.md", headers=_auth(restricted_key))  # not logged: no replay
    (row,) = written()
    publish(ns_a, [*alpha_rows(), *_hidden(changed=True)], now=BUILT_AT + timedelta(days=1))
    serving_caches_clear()

    out, err = _replay(row.pk, "--diff")

    assert "byte for byte the same" in err
    diff = json.loads(out)
    assert diff["servingReleaseId"] == 2 and diff["removed"] == [] and diff["added"] == []


def test_an_earlier_internal_version_read_with_a_key_replays(
    client: Client, restricted_key: str, ns_a: Namespace, logging_on: None
) -> None:
    publish(ns_a, [*alpha_rows(), *_hidden(changed=True)], now=BUILT_AT + timedelta(days=1))
    serving_caches_clear()
    answer = client.get("/t/alpha/api/entries/AL-901?version=1", headers=_auth(restricted_key))
    assert answer.status_code == 200
    (row,) = written()

    _, err = _replay(row.pk)

    assert "byte for byte the same" in err


def test_an_mcp_search_with_a_key_replays(client: Client, restricted_key: str, logging_on: None) -> None:
    call = {"name": "search_context", "arguments": {"query": "zeppelin board", "budget": 8000}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
    headers = {**MCP_HEADERS, **_auth(restricted_key)}
    client.post("/t/alpha/mcp", json.dumps(body), content_type="application/json", headers=headers)
    (row,) = written()

    _, err = _replay(row.pk)

    assert row.clearance == "restricted" and "byte for byte the same" in err


def test_a_request_without_a_key_logs_no_clearance_and_replays_as_public(
    client: Client, restricted_key: str, logging_on: None
) -> None:
    client.get("/t/alpha/api/context?topic=zeppelin+hangar+board&budget=8000")
    (row,) = written()

    _, err = _replay(row.pk)

    assert row.clearance == "" and "byte for byte the same" in err


def test_the_admin_replays_a_keys_request_in_its_view(
    client: Client, restricted_key: str, reviewer: Any, logging_on: None
) -> None:
    client.get("/t/alpha/api/entries/AL-902", headers=_auth(restricted_key))
    (row,) = written()
    client.force_login(reviewer)

    page = client.get(f"/admin/knowledge/requestlog/{row.pk}/replay/").content.decode()

    assert 'id="replay-identical"' in page


def test_the_clearance_survives_the_trip_through_redis_and_is_sent_only_above_public(
    client: Client, restricted_key: str, logging_on: None, settings: Any
) -> None:
    shared = redis.Redis.from_url(settings.REDIS_URL)
    shared.delete(QUEUE_KEY)
    client.get("/t/alpha/api/entries/AL-902", headers=_auth(restricted_key))
    client.get("/t/alpha/api/entries/AL-001")
    rows = buffer.rows(buffer.drain())
    assert [json.loads(row["observed"]).get("clearance") for row in rows] == ["restricted", None]

    request_log_ship(rows)  # what the flusher thread does, then the Celery task
    assert request_log_drain() == 2

    assert list(RequestLog.objects.order_by("at", "id").values_list("clearance", flat=True)) == ["restricted", ""]
