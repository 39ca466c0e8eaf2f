"""Namespace and key answers: fresh for a while, then revalidated; served stale while the database fails."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import DatabaseError, OperationalError

from knowledge.resilience.database import DatabaseUnavailableError, database_breaker, database_staleness
from knowledge.resilience.stale import StaleCache
from tests.configure import configure
from tests.worker import wait_for


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Database:
    """A loader that answers, or fails as a stopped PostgreSQL does; counts the reads."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.down = False
        self.reads = 0

    def __call__(self) -> Any:
        self.reads += 1
        if self.down:
            raise OperationalError("connection refused")
        return self.value


@pytest.fixture
def clock(settings: Any) -> Iterator[Clock]:
    """One fake clock for the cache and this process's database breaker (a new one for each test)."""
    configure(settings, stale_if_error_seconds=60.0, dependency_retry_seconds=5.0)
    database_breaker.cache_clear()
    ticking = Clock()
    database_breaker()._clock = ticking
    yield ticking
    database_breaker.cache_clear()


def test_an_answer_is_read_once_while_fresh_and_again_after(clock: Clock) -> None:
    cache = StaleCache(fresh_seconds=lambda: 1.0, size=10, clock=clock)
    database = Database("alpha")

    assert [cache.get("k", database), cache.get("k", database)] == ["alpha", "alpha"]
    assert database.reads == 1
    clock.now += 1
    database.value = "alpha v2"
    assert cache.get("k", database) == "alpha v2"


def test_while_the_database_fails_the_last_answer_is_served_up_to_the_bound(clock: Clock) -> None:
    cache = StaleCache(fresh_seconds=lambda: 1.0, size=10, clock=clock)
    database = Database("alpha")
    cache.get("k", database)
    database.down = True
    clock.now += 2

    assert cache.get("k", database) == "alpha"
    assert database_breaker().state().state == "open"
    assert database_staleness(clock.now) == 0
    clock.now += 57  # 59 s after the last good read
    assert cache.get("k", database) == "alpha"
    clock.now += 1  # 60 s: too stale to trust, so the request needs the database
    with pytest.raises(DatabaseError):
        cache.get("k", database)
    assert database_staleness(clock.now) == 58


def test_a_name_never_read_fails_at_once_while_the_breaker_is_open(clock: Clock) -> None:
    cache = StaleCache(fresh_seconds=lambda: 1.0, size=10, clock=clock)
    database = Database("alpha")
    database.down = True
    with pytest.raises(OperationalError):
        cache.get("first", database)
    reads = database.reads

    with pytest.raises(DatabaseUnavailableError):
        cache.get("second", database)
    assert database.reads == reads  # not even tried

    database.down = False
    clock.now += 5  # the cool-down: one probe
    assert cache.get("second", database) == "alpha"
    assert database_breaker().state().state == "closed"
    assert database_staleness() is None


def test_in_the_background_a_busy_name_is_read_again_ahead_of_time(settings: Any, clock: Clock) -> None:
    configure(settings, revalidate_in_background=True)
    cache = StaleCache(fresh_seconds=lambda: 1.0, size=10, clock=clock)
    database = Database("alpha")
    assert cache.get("k", database) == "alpha"
    seen: list[str] = []

    def load() -> str:
        seen.append(threading.current_thread().name)
        return "alpha v2"

    clock.now += 0.6  # the second half of its freshness: the held answer, and a read queued
    assert cache.get("k", load) == "alpha"
    wait_for(lambda: cache.get("k", load) == "alpha v2", what="the background read")
    assert set(seen) == {"evergreen-revalidate"}


def test_past_its_freshness_an_answer_is_read_again_in_the_request(settings: Any, clock: Clock) -> None:
    """A key revoked while nobody used it is refused on the first request after (QA, 2026-12-07: the held
    answer admitted it once more, up to EVERGREEN_STALE_IF_ERROR_SECONDS after it was read)."""
    configure(settings, revalidate_in_background=True)
    cache = StaleCache(fresh_seconds=lambda: 1.0, size=10, clock=clock)
    database = Database("key valid")
    assert cache.get("k", database) == "key valid"
    database.value = "key revoked"
    clock.now += 10
    assert cache.get("k", database) == "key revoked"
    database.down = True
    clock.now += 10  # and while the database fails, the last answer still serves
    assert cache.get("k", database) == "key revoked"


def test_unknown_names_do_not_grow_it_without_bound(clock: Clock) -> None:
    cache = StaleCache(fresh_seconds=lambda: 1.0, size=5)
    for n in range(20):
        cache.get(("slug", f"nope-{n}"), lambda: None)
    assert len(cache._items) <= 5
