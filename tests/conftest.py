"""Shared fixtures: two namespaces and a cast of people (an editor and a reviewer of one, an outsider)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from knowledge.management import remote_sync
from knowledge.models import Category, Namespace, Role
from knowledge.telemetry.flusher import flusher
from tests.factories import NamespaceFactory, UserFactory, membership
from tests.services import missing, services_missing


def pytest_configure(config: pytest.Config) -> None:
    """No telemetry thread in the test process: tests flush by hand, so nothing writes behind their back.

    Paused here, before collection: a test module that imports the WSGI application (which starts the
    thread in the embedded mode) must not start it either, or it would still be reconciling builds
    against the test database after pytest dropped it.
    """
    flusher.paused = True


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked `services` skip without PostgreSQL and Redis, or fail under EVERGREEN_REQUIRE_SERVICES=1."""
    if item.get_closest_marker("services"):
        reason = services_missing()
        if reason is not None:
            missing(reason)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: Any, django_db_blocker: Any) -> Any:
    """pytest-django's, plus: before the test database is dropped, close what still holds it open.

    A server or worker process a test started and lost (or a thread's connection) would otherwise make
    DROP DATABASE fail ("being accessed by other users") and leave the database behind for the next run.
    """
    yield
    from django.db import connection

    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )


@pytest.fixture(autouse=True)
def _fresh_cache() -> Any:
    """Each test starts with empty caches: no pending-build markers or cached responses leak."""
    from django.core.cache import caches

    for cache in caches.all():
        cache.clear()
    yield
    for cache in caches.all():
        cache.clear()


@pytest.fixture
def ns_a(db: Any) -> Namespace:
    return NamespaceFactory.create(slug="alpha", prefix="AL", name="Alpha")


@pytest.fixture
def ns_b(db: Any) -> Namespace:
    return NamespaceFactory.create(slug="beta", prefix="BE", name="Beta")


@pytest.fixture
def editor(ns_a: Namespace) -> Any:
    return membership(UserFactory(username="edna"), ns_a, Role.EDITOR)


@pytest.fixture
def reviewer(ns_a: Namespace) -> Any:
    return membership(UserFactory(username="rita"), ns_a, Role.REVIEWER)


@pytest.fixture
def outsider(ns_b: Namespace) -> Any:
    return membership(UserFactory(username="otto"), ns_b, Role.EDITOR, Role.REVIEWER)


@pytest.fixture
def fact(ns_a: Namespace) -> Category:
    return ns_a.categories.get(slug="fact")


@pytest.fixture
def manage_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The management API of this test's database, served in-process over WSGI for `sync_entries --server`
    (real HTTP semantics, no socket). Like Django's test client, requests keep the test's database
    connection open (its transaction holds the data)."""
    monkeypatch.setattr(remote_sync, "transport", httpx.WSGITransport(app=WSGIHandler()))
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield "http://testserver"
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)
