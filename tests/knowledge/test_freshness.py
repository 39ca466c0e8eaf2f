"""Freshness (issue 12 §6): review-by after approval, stale in every channel, out of the packs, the queue."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

from knowledge.models import Category, EntryVersion, Namespace, Role, VersionState
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.entries import entry_create
from knowledge.services.freshness import freshness_sweep
from knowledge.services.releases import release_build
from knowledge.services.versions import version_approve, version_publish, version_submit
from tests.factories import UserFactory, content, membership
from tests.servingfixtures import clean_serving_state, no_rate_limit

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("no_rate_limit")]
__all__ = ["clean_serving_state", "no_rate_limit"]

APPROVED = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def _publish(namespace: Namespace, category: Category, editor: Any, reviewer: Any, **fields: Any) -> EntryVersion:
    version = entry_create(namespace=namespace, category=category, content=content(**fields), actor=editor)
    version_submit(version=version, actor=editor)
    version_approve(version=version, actor=reviewer)
    return version_publish(version=version, actor=reviewer)


@pytest.fixture
def live(ns_a: Namespace, fact: Category, editor: Any, reviewer: Any) -> EntryVersion:
    fact.review_days = 90
    fact.save(update_fields=["review_days"])
    with time_machine.travel(APPROVED, tick=False):
        version = _publish(ns_a, fact, editor, reviewer, title="Zeppelin fuel prices", body="Fuel costs 7 per litre.")
        release_build(namespace_id=ns_a.pk, now=APPROVED)
    return version


def _entry(client: Client) -> dict[str, Any]:
    return client.get(f"/t/alpha/api/entries/{_id()}").json()


def _id() -> str:
    return str(EntryVersion.objects.get(title="Zeppelin fuel prices").entry.public_id)


def test_approval_sets_the_categorys_review_by_date(live: EntryVersion) -> None:
    live.refresh_from_db()
    assert live.review_by == date(2026, 5, 31)  # 2 March + 90 days
    assert live.reviewed_at == APPROVED


def test_the_sweep_rebuilds_once_an_entry_is_due_and_every_channel_marks_it_stale(
    client: Client, live: EntryVersion, ns_a: Namespace
) -> None:
    assert _entry(client)["stale"] is False and _entry(client)["reviewBy"] == "2026-05-31"
    assert freshness_sweep(today=date(2026, 5, 31)) == 0  # due on the 31st: not yet past it
    assert freshness_sweep(today=date(2026, 6, 1)) == 1
    later = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
    built = release_build(namespace_id=ns_a.pk, now=later)
    assert built.created and built.activated  # no content changed, yet a new release: the entry turned stale
    serving_caches_clear()
    assert freshness_sweep(today=date(2026, 6, 1)) == 0

    assert _entry(client)["stale"] is True
    pack = client.get("/t/alpha/api/context?topic=zeppelin+fuel").json()
    assert [e["stale"] for e in pack["entries"]] == [True]
    listed = client.get("/t/alpha/context.json").json()["entries"]
    assert [e["reviewBy"] for e in listed] == ["2026-05-31"]
    call = {"name": "get_entry", "arguments": {"id": _id()}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
    answer = client.post("/t/alpha/mcp", json.dumps(body), content_type="application/json", headers=MCP_HEADERS)
    assert answer.json()["result"]["structuredContent"]["stale"] is True
    assert "· stale" in client.get(f"/t/alpha/api/entries/{_id()}.md").content.decode()
    assert client.get("/t/alpha/metrics.json").json()["freshness"] == {"entries": 1, "stale": 1, "expired": 0}


def test_past_valid_until_an_entry_leaves_the_packs_but_stays_readable(
    client: Client, ns_a: Namespace, fact: Category, editor: Any, reviewer: Any
) -> None:
    with time_machine.travel(APPROVED, tick=False):
        _publish(ns_a, fact, editor, reviewer, title="Zeppelin fuel prices", body="Fuel costs 7 per litre.")
        version = EntryVersion.objects.get(title="Zeppelin fuel prices")
        EntryVersion.objects.filter(pk=version.pk).update(valid_until=date(2026, 4, 1))
        release_build(namespace_id=ns_a.pk, now=APPROVED)
    assert [e["id"] for e in client.get("/t/alpha/api/context?topic=zeppelin+fuel").json()["entries"]] == [_id()]

    assert freshness_sweep(today=date(2026, 4, 2)) == 1
    release_build(namespace_id=ns_a.pk, now=datetime(2026, 4, 2, 8, 0, tzinfo=UTC))
    serving_caches_clear()
    pack = client.get("/t/alpha/api/context?topic=zeppelin+fuel").json()
    assert _id() not in [e["id"] for e in pack["entries"]]
    entry = _entry(client)
    assert (entry["validUntil"], entry["stale"]) == ("2026-04-01", True)
    assert client.get("/t/alpha/metrics.json").json()["freshness"]["expired"] == 1


def test_the_queue_lists_due_entries_to_their_namespace_and_opens_a_rereview(
    client: Client, live: EntryVersion, editor: Any, outsider: Any, ns_b: Namespace
) -> None:
    url = reverse("admin:knowledge_dueitem_changelist")
    with time_machine.travel(datetime(2026, 6, 2, tzinfo=UTC), tick=False):
        client.force_login(outsider)
        assert _id() not in client.get(url).content.decode()
        client.force_login(editor)
        page = client.get(url).content.decode()
        assert _id() in page and "stale since 2026-05-31" in page
        client.post(url, {"action": "start_rereview", "_selected_action": [live.pk]})
    assert live.entry.versions.filter(state=VersionState.DRAFT).count() == 1
    reader = membership(UserFactory(username="reader"), ns_b, Role.EDITOR)
    client.force_login(reader)
    assert client.get(url).status_code == 200
