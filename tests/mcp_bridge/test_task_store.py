"""The A2A task store: per namespace, kept for the retention period after the last save, pruned on writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from knowledge.models import A2ATask, Namespace
from mcp_bridge.task_store import DatabaseTaskStore, task_retention_seconds
from tests.configure import configure

pytestmark = pytest.mark.django_db

START = datetime(2026, 9, 2, 10, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def task(task_id: str, state: str = "completed") -> dict[str, object]:
    return {"kind": "task", "id": task_id, "contextId": "c1", "status": {"state": state}}


def test_a_task_is_kept_for_the_retention_period_then_not_found(ns_a: Namespace) -> None:
    clock = Clock()
    store = DatabaseTaskStore(namespace_id=ns_a.pk, retention_seconds=3600, now=clock)
    store.save(task("t1"))

    clock.now = START + timedelta(seconds=3599)
    assert store.load("t1") == task("t1")
    clock.now = START + timedelta(seconds=3601)
    assert store.load("t1") is None


def test_saving_replaces_the_task_and_restarts_its_retention(ns_a: Namespace) -> None:
    clock = Clock()
    store = DatabaseTaskStore(namespace_id=ns_a.pk, retention_seconds=60, now=clock)
    store.save(task("t1", "working"))
    clock.now = START + timedelta(seconds=50)
    store.save(task("t1", "canceled"))
    clock.now = START + timedelta(seconds=100)

    assert store.load("t1") == task("t1", "canceled")
    assert A2ATask.objects.count() == 1


def test_writes_prune_expired_tasks_of_the_namespace(ns_a: Namespace, ns_b: Namespace) -> None:
    clock = Clock()
    alpha = DatabaseTaskStore(namespace_id=ns_a.pk, retention_seconds=60, now=clock)
    beta = DatabaseTaskStore(namespace_id=ns_b.pk, retention_seconds=60, now=clock)
    alpha.save(task("old"))
    beta.save(task("old"))
    clock.now = START + timedelta(minutes=5)
    alpha.save(task("new"))

    assert sorted(A2ATask.objects.values_list("namespace__slug", "task_id")) == [("alpha", "new"), ("beta", "old")]


def test_it_hides_other_namespaces_tasks(ns_a: Namespace, ns_b: Namespace) -> None:
    DatabaseTaskStore(namespace_id=ns_a.pk, retention_seconds=60).save(task("shared-id"))

    assert DatabaseTaskStore(namespace_id=ns_b.pk, retention_seconds=60).load("shared-id") is None


def test_the_retention_defaults_to_a_day_and_is_configurable(settings: Any) -> None:
    assert task_retention_seconds() == 86400
    configure(settings, a2a_task_retention_seconds=600)
    assert task_retention_seconds() == 600
