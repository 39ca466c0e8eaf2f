"""Fixtures for the read surface: published namespaces with an active release, and clean per-test caches."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import time_machine
from django.core.cache import caches

from gateway.cache import reply_cache_clear
from gateway.fastmiss import shapes
from gateway.fastpost import posts
from gateway.ratelimit import limiter
from gateway.writebehind import shared_writes_flush
from knowledge.models import Namespace, TextKind
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.demo import demo_load
from knowledge.services.imports import entries_import, entries_parse
from knowledge.services.releases import release_build
from knowledge.services.texts import text_publish_as_system
from tests.configure import configure
from tests.factories import UserFactory

BUILT_AT = datetime(2026, 9, 2, 10, 52, 47, tzinfo=UTC)


@pytest.fixture(autouse=True)
def clean_serving_state() -> Iterator[None]:
    """Each test starts with empty in-process caches, limiter windows and Django cache; nothing written
    behind (gateway.writebehind) lands in the next test's Redis."""
    shared_writes_flush()
    serving_caches_clear()
    reply_cache_clear()
    shapes.clear()
    posts.clear()
    limiter.clear()
    for cache in caches.all():
        cache.clear()
    yield
    shared_writes_flush()
    serving_caches_clear()
    reply_cache_clear()
    shapes.clear()
    posts.clear()
    limiter.clear()


@pytest.fixture
def no_rate_limit(settings: Any) -> None:
    configure(settings, rate_limit="0")


def publish(
    namespace: Namespace, rows: list[dict[str, Any]], *, now: datetime = BUILT_AT, acknowledgement: str = ""
) -> Namespace:
    """Import and publish `rows` (JSON Lines fields) and build the namespace's release.

    `acknowledgement` answers the safety scan's warnings, as `import_entries --acknowledge-warnings` does.
    """
    person: Any = UserFactory(username=f"importer-{namespace.slug}")
    checker: Any = UserFactory(username=f"checker-{namespace.slug}")
    items = entries_parse(json.dumps(row, ensure_ascii=False) for row in rows)
    with time_machine.travel(now, tick=False):  # approvals are dated: the same rows build the same bytes
        entries_import(
            namespace=namespace,
            items=items,
            actor=person,
            reviewer=checker,
            publish=True,
            source="test",
            acknowledgement=acknowledgement,
        )
    release_build(namespace_id=namespace.pk, now=now)
    namespace.refresh_from_db()
    return namespace


def bases_declare(namespace: Namespace, *bases: Namespace) -> Namespace:
    """Publish the namespace's list of bases as set-up from files does (the reviewed path is tested apart)."""
    content = {"bases": [base.slug for base in bases]}
    text_publish_as_system(namespace=namespace, kind=TextKind.BASES, content=content, note="test set-up")
    return namespace


def alpha_rows() -> list[dict[str, Any]]:
    return [
        {
            "id": "AL-001",
            "category": "fact",
            "title": "Alpha is a test namespace",
            "summary": "Alpha holds facts about the alpha product.",
            "body": "Alpha ships every Tuesday. The alpha product supports token budgets.",
            "tags": ["alpha", "product"],
            "confidence": 0.99,
            "updated": "2026-08-01",
        },
        {
            "id": "AL-002",
            "category": "fact",
            "title": "Alpha pricing",
            "summary": "Alpha costs nothing for agents.",
            "body": "Agents read alpha for free. " + "Pricing details repeat here. " * 20,
            "tags": ["pricing"],
            "confidence": 0.9,
            "updated": "2024-01-10",
        },
        {
            "id": "AL-201",
            "category": "rule",
            "title": "Token budget discipline",
            "summary": "Ask for 2000 tokens and raise the budget when truncated.",
            "body": "Raise the token budget when truncated is true. " * 6,
            "tags": ["token", "budget"],
            "confidence": 0.96,
            "updated": "2026-08-25",
            "links": ["AL-001"],
        },
    ]


def beta_rows() -> list[dict[str, Any]]:
    return [
        {
            "id": "BE-001",
            "category": "fact",
            "title": "Beta secret plans",
            "summary": "Beta plans a zeppelin launch.",
            "body": "The beta zeppelin launches from the harbour.",
            "tags": ["zeppelin"],
            "confidence": 0.95,
            "updated": "2026-07-01",
        },
        {
            "id": "BE-002",
            "category": "fact",
            "title": "Beta token budget",
            "summary": "Beta also talks about token budgets.",
            "body": "Beta token budget text.",
            "tags": ["token"],
            "confidence": 0.8,
            "updated": "2026-07-02",
        },
    ]


@pytest.fixture
def alpha(ns_a: Namespace) -> Namespace:
    return publish(ns_a, alpha_rows())


@pytest.fixture
def beta(ns_b: Namespace) -> Namespace:
    return publish(ns_b, beta_rows())


@pytest.fixture
def demo(db: Any) -> Namespace:
    """The seed's demo namespace `evergreen` (the default namespace), built at a fixed time."""
    with time_machine.travel(BUILT_AT, tick=False):  # approvals are dated: golden files stay byte-identical
        namespace = demo_load(password="demo-password").namespace
    release_build(namespace_id=namespace.pk, now=BUILT_AT)
    namespace.refresh_from_db()
    return namespace
