"""Shared fixtures: two namespaces and a cast of people (an editor and a reviewer of one, an outsider)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from knowledge.models import Category, Namespace, Role
from tests.factories import NamespaceFactory, UserFactory, membership

REQUIRE_SERVICES = os.environ.get("EVERGREEN_REQUIRE_SERVICES") == "1"


def services_available() -> str | None:
    """None when PostgreSQL and Redis are configured, else the reason they are not."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        return "needs PostgreSQL (set DATABASE_URL)"
    if not os.environ.get("REDIS_URL"):
        return "needs Redis (set REDIS_URL)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = services_available()
    if reason is None:
        return
    for item in items:
        if item.get_closest_marker("services"):
            if REQUIRE_SERVICES:
                item.add_marker(
                    pytest.mark.xfail(reason=f"EVERGREEN_REQUIRE_SERVICES=1 but {reason}", strict=True, run=False)
                )
            else:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True, scope="session")
def _telemetry_by_hand() -> Any:
    """No telemetry thread in the test process: tests flush by hand, so nothing writes behind their back."""
    from knowledge.telemetry.flusher import flusher

    flusher.paused = True
    return


@pytest.fixture(autouse=True)
def _fresh_cache() -> Any:
    """Each test starts with an empty cache: no pending-build markers or cached responses leak."""
    from django.core.cache import cache

    cache.clear()
    yield
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
