"""The request log: what each /api/context, entry, MCP and A2A request asked and got, privately and off the hot path."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from gateway.replay import ReplayApp, ReplayMemory
from knowledge.models import Namespace, RequestLog
from knowledge.requestlog.buffer import buffer
from knowledge.security_events import security_client_hash
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.request_log import request_logs_prune
from tests.configure import configure
from tests.gateway.replaying import CountingDjango, call, django_app
from tests.mcp_bridge.http_calls import post, tool
from tests.observe.logged import logging_on, written

pytestmark = pytest.mark.django_db
__all__ = ["django_app", "logging_on"]


def test_a_context_request_records_what_it_asked_and_got(client: Any, alpha: Namespace, logging_on: None) -> None:
    response = client.get("/t/alpha/api/context?topic=token%20budget&budget=800&category=rule")
    pack = response.json()
    (row,) = written()

    assert (row.namespace_id, row.release_id, row.channel, row.route) == (
        alpha.pk,
        alpha.active_release_id,
        "rest",
        "context",
    )
    assert (row.topic, row.budget, row.category, row.matched) == ("token budget", 800, "rule", pack["matched"])
    assert row.returned == [e["id"] for e in pack["entries"]]
    assert row.omitted == [e["id"] for e in pack["omitted"]]
    assert row.used_tokens == pack["usedTokens"] and row.hit_count == pack["hitCount"]
    assert row.etag == response["ETag"] and row.request_id == response["X-Request-ID"]
    assert row.client == security_client_hash("127.0.0.1")  # never the address itself
    assert "127.0.0.1" not in json.dumps(
        list(RequestLog.objects.values("client", "request_id", "params", "topic")), default=str
    )


def test_answers_replayed_from_memory_are_logged_too(
    alpha: Namespace, django_app: CountingDjango, no_rate_limit: None, logging_on: None
) -> None:
    app = ReplayApp(django_app, remembered=ReplayMemory())
    answers = [call(app, "/t/alpha/api/context?topic=alpha") for _ in range(3)]
    rows = written()
    assert django_app.calls == 1
    assert len(rows) == 3
    assert {row.etag for row in rows} == {answers[0][1]["ETag"]}
    assert [row.request_id for row in rows] == [a[1]["X-Request-ID"] for a in answers]
    assert all(row.client == security_client_hash("203.0.113.9") for row in rows)


def test_mcp_and_a2a_requests_are_logged_with_their_channel(client: Any, alpha: Namespace, logging_on: None) -> None:
    tool(client, "/t/alpha/mcp", "search_context", {"query": "pricing", "budget": 300})
    tool(client, "/t/alpha/mcp", "get_entry", {"id": "AL-001"})
    message = {
        "kind": "message",
        "messageId": "m-1",
        "role": "user",
        "parts": [{"kind": "data", "data": {"skill": "search_context", "arguments": {"query": "alpha"}}}],
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    assert post(client, "/t/alpha/a2a", body, headers={"A2A-Version": "0.3"}).status_code == 200
    rows = written()
    assert [(r.channel, r.route, r.topic) for r in rows] == [
        ("mcp", "context", "pricing"),
        ("mcp", "entry", ""),
        ("a2a", "context", "alpha"),
    ]
    assert rows[0].budget == 300 and rows[1].returned == ["AL-001"] and rows[1].params == {"id": "AL-001"}


def test_entry_reads_are_logged_with_their_status(client: Any, alpha: Namespace, logging_on: None) -> None:
    client.get("/t/alpha/api/entries/AL-001")
    client.get("/t/alpha/api/entries/AL-999")
    rows = written()
    assert [(r.route, r.status, r.returned, r.params) for r in rows] == [
        ("entry", 200, ["AL-001"], {"id": "AL-001"}),
        ("entry", 404, [], {"id": "AL-999"}),
    ]


def test_a_namespace_that_turns_its_log_off_records_nothing(
    client: Any, alpha: Namespace, beta: Namespace, logging_on: None
) -> None:
    Namespace.objects.filter(pk=alpha.pk).update(log_requests=False)
    serving_caches_clear()
    client.get("/t/alpha/api/context?topic=alpha")
    client.get("/t/beta/api/context?topic=zeppelin")
    assert [row.namespace_id for row in written()] == [beta.pk]


def test_records_buffered_before_a_namespace_turned_its_log_off_are_not_written(
    client: Any, alpha: Namespace, logging_on: None
) -> None:
    client.get("/t/alpha/api/context?topic=alpha")
    Namespace.objects.filter(pk=alpha.pk).update(log_requests=False)
    assert written() == []


def test_sampling_and_the_global_switch_decide_what_is_recorded(
    client: Any, alpha: Namespace, logging_on: None, settings: Any
) -> None:
    configure(settings, request_log=True, request_log_sample=0.0)
    client.get("/t/alpha/api/context?topic=alpha")
    configure(settings, request_log=False, request_log_sample=1.0)
    client.get("/t/alpha/api/context?topic=alpha")
    assert written() == []
    configure(settings, request_log=True, request_log_sample=1.0)
    client.get("/t/alpha/api/context?topic=alpha")
    assert len(written()) == 1


def test_a_full_buffer_drops_records_instead_of_waiting(
    client: Any, alpha: Namespace, logging_on: None, settings: Any
) -> None:
    configure(settings, request_log=True, request_log_buffer_max=2)
    for _ in range(4):
        assert client.get("/t/alpha/api/context?topic=alpha").status_code == 200
    assert len(written()) == 2


def test_rows_past_their_retention_are_deleted(client: Any, alpha: Namespace, logging_on: None, settings: Any) -> None:
    client.get("/t/alpha/api/context?topic=old")
    client.get("/t/alpha/api/context?topic=new")
    written()
    RequestLog.objects.filter(topic="old").update(at=timezone.now() - timedelta(days=31))
    configure(settings, request_log=True, request_log_retention_days=30)
    assert request_logs_prune() == 1
    assert list(RequestLog.objects.values_list("topic", flat=True)) == ["new"]


def test_the_buffer_is_only_a_deque_append_on_the_request(client: Any, alpha: Namespace, logging_on: None) -> None:
    client.get("/t/alpha/api/context?topic=alpha")
    assert not RequestLog.objects.exists()  # nothing written on the request itself
    assert len(buffer.drain()) == 1
