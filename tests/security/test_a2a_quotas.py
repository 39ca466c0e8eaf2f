"""Issue 9: A2A tasks store only what tasks/get needs, within per-client and per-namespace quotas."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from knowledge.models import A2ATask, Feedback, Namespace
from knowledge.security_events import A2A_QUOTA, security_client_hash
from knowledge.services.a2a_tasks import TaskLimits, a2a_tasks_prune
from knowledge.tasks import a2a_tasks_prune_task
from mcp_bridge.task_store import DatabaseTaskStore
from tests.security.events import security_records
from tests.servingfixtures import alpha, beta, clean_serving_state, no_rate_limit

__all__ = ["alpha", "beta", "clean_serving_state", "no_rate_limit"]

pytestmark = pytest.mark.django_db

START = datetime(2026, 9, 2, 10, 0, tzinfo=UTC)
PADDING = "p" * 30_000


def limits(settings: Any, **values: int) -> None:
    settings.EVERGREEN = replace(settings.EVERGREEN, **values)


def send(client: Client, path: str = "/t/alpha/a2a", *, address: str = "198.51.100.1", **message: Any) -> Any:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {
                "kind": "message",
                "role": "user",
                "messageId": "m-1",
                "parts": [{"kind": "text", "text": "token budget"}],
                **message,
            }
        },
    }
    return client.post(path, json.dumps(body), content_type="application/json", REMOTE_ADDR=address)


def test_a_task_keeps_the_understood_request_not_what_was_sent_along(
    client: Client, alpha: Namespace, no_rate_limit: None
) -> None:
    parts = [
        {"kind": "text", "text": "token budget", "metadata": {"padding": PADDING}},
        {"kind": "data", "data": {"budget": 800}},
    ]
    answer = send(client, parts=parts, metadata={"padding": PADDING}, extensions=[PADDING[:1000]]).json()["result"]

    stored = A2ATask.objects.get(task_id=answer["id"])
    assert stored.size < 20_000
    assert PADDING[:1000] not in json.dumps(stored.task)
    assert stored.task["history"] == [
        {
            "kind": "message",
            "role": "user",
            "messageId": "m-1",
            "parts": [
                {"kind": "text", "text": "token budget"},
                {
                    "kind": "data",
                    "data": {"skill": "search_context", "arguments": {"budget": 800, "query": "token budget"}},
                },
            ],
            "taskId": answer["id"],
            "contextId": answer["contextId"],
        }
    ]
    assert stored.task["artifacts"] == answer["artifacts"]
    assert stored.client == security_client_hash("198.51.100.1")


def test_tasks_get_returns_what_message_send_returned(client: Client, alpha: Namespace, no_rate_limit: None) -> None:
    sent = send(client).json()["result"]
    body = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": sent["id"]}}

    fetched = client.post("/t/alpha/a2a", json.dumps(body), content_type="application/json").json()["result"]

    assert fetched == sent


@pytest.mark.parametrize("field", ["messageId", "contextId", "taskId"])
def test_ids_longer_than_128_characters_are_refused(
    client: Client, alpha: Namespace, no_rate_limit: None, field: str
) -> None:
    error = send(client, **{field: "i" * 129}).json()["error"]

    assert error["code"] == -32602
    assert "at most 128 characters" in error["message"]
    assert not A2ATask.objects.exists()


def test_a_client_over_its_quota_is_refused_until_its_tasks_expire(
    client: Client, alpha: Namespace, no_rate_limit: None, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    limits(settings, a2a_task_quota_client_bytes=1)
    assert "result" in send(client).json()

    refused = send(client).json()
    other_client = send(client, address="198.51.100.2").json()

    assert refused["error"]["code"] == -32000
    assert refused["error"]["data"]["code"] == "a2a_task_quota"
    assert refused["error"]["data"]["scope"] == "client"
    assert 0 < refused["error"]["data"]["retryAfter"] <= 86400
    assert "by this client" in refused["error"]["message"]
    assert "result" in other_client
    assert A2ATask.objects.count() == 2
    (event,) = security_records(caplog, A2A_QUOTA)
    assert event["reason"] == "client_quota" and event["namespace"] == "alpha"
    assert event["client"] == security_client_hash("198.51.100.1")


def test_a_namespace_over_its_quota_refuses_every_client_but_not_other_namespaces(
    client: Client, alpha: Namespace, beta: Namespace, no_rate_limit: None, settings: Any
) -> None:
    limits(settings, a2a_task_quota_namespace_bytes=1)
    send(client, address="198.51.100.1")

    refused = send(client, address="198.51.100.9").json()
    elsewhere = send(client, "/t/beta/a2a", address="198.51.100.9").json()

    assert refused["error"]["data"]["scope"] == "namespace"
    assert "result" in elsewhere


def test_a_refused_feedback_task_stores_no_feedback(
    client: Client, alpha: Namespace, no_rate_limit: None, settings: Any
) -> None:
    limits(settings, a2a_task_quota_client_bytes=1)
    send(client)
    feedback = {"skill": "submit_feedback", "arguments": {"kind": "other", "message": "stale"}}

    refused = send(client, parts=[{"kind": "data", "data": feedback}]).json()

    assert refused["error"]["data"]["code"] == "a2a_task_quota"
    assert not Feedback.objects.exists()


def test_expired_tasks_free_the_quota_and_are_pruned(ns_a: Namespace, ns_b: Namespace) -> None:
    clock = [START]
    small = TaskLimits(retention_seconds=60, client_bytes=1, namespace_bytes=10**6)
    store = DatabaseTaskStore(namespace_id=ns_a.pk, client="198.51.100.1", limits=small, now=lambda: clock[0])
    other = DatabaseTaskStore(namespace_id=ns_b.pk, client="198.51.100.1", limits=small, now=lambda: clock[0])
    store.save({"id": "t1", "status": {"state": "completed"}})
    other.save({"id": "t2", "status": {"state": "completed"}})

    with pytest.raises(Exception, match="Retry after 60 seconds"):
        store.admit()
    clock[0] = START + timedelta(seconds=61)
    store.admit()
    assert a2a_tasks_prune(limits=small, now=clock[0]) == 2
    assert not A2ATask.objects.exists()


def test_the_hourly_prune_task_deletes_only_expired_tasks(ns_a: Namespace, settings: Any) -> None:
    limits(settings, a2a_task_retention_seconds=60)
    A2ATask.objects.create(namespace=ns_a, task_id="old", task={}, saved_at=datetime(2020, 1, 1, tzinfo=UTC))
    A2ATask.objects.create(namespace=ns_a, task_id="new", task={}, saved_at=datetime.now(UTC))

    assert a2a_tasks_prune_task() == 1
    assert a2a_tasks_prune_task() == 0
    assert list(A2ATask.objects.values_list("task_id", flat=True)) == ["new"]
