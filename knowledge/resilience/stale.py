"""Answers read from the database, kept in the process, revalidated in the background, served stale on failure.

The gateway resolves every request to a namespace (and checks its API key) through this cache. An
answer is served for `fresh_seconds()` after it was read (a publish or a revoked key shows within that
time), and no longer while the database answers: a request that finds it older reads it again itself.
So that busy names never wait for that, a request in the second half of an answer's freshness queues a
read ahead of time, which one background thread per process runs. (The next request after freshness
ran out used to get the held answer and queue the read: after a quiet spell, the first request with a
key revoked seconds or an hour before was still admitted.) When the database fails, the last answer
keeps being served for up to EVERGREEN_STALE_IF_ERROR_SECONDS after it was read, and the database
breaker records the outage (the answers say how stale they are). Names never seen need the database:
with its breaker open they fail at once with DatabaseUnavailableError, else they are read in the
request, as is an answer older than that bound. Every read is bounded by
EVERGREEN_DB_READ_TIMEOUT_SECONDS (knowledge.resilience.deadline), so a hung database costs a request
one such wait per breaker cool-down, not a worker.

`revalidate_in_background=False` (the test settings) reads nothing ahead: a test's transaction is
invisible to another thread's connection.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection

from knowledge.resilience.database import DatabaseUnavailableError, database_breaker
from knowledge.resilience.deadline import database_deadline
from knowledge.resilience.threads import Held, process_thread

logger = logging.getLogger(__name__)

Load = Callable[[], Any]
UNAVAILABLE = "The database does not answer; this name was never read while it did."


@dataclass(frozen=True, slots=True)
class _Held:
    value: Any
    ahead_from: float  # from here a request queues the next read (in the background)
    fresh_until: float
    stale_until: float
    load: Load  # how it was read, to read it again (reload)


class StaleCache:
    def __init__(
        self, *, fresh_seconds: Callable[[], float], size: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.fresh_seconds = fresh_seconds  # read at each store (tests shorten it)
        self._size = size
        self._clock = clock
        self._items: dict[Hashable, _Held] = {}
        self._lock = threading.Lock()
        self._queued: dict[Hashable, Load] = {}
        self._wake = threading.Condition(self._lock)
        self._worker: Held = None

    def get(self, key: Hashable, load: Load) -> Any:
        now = self._clock()
        held = self._items.get(key)
        if held is not None and now < held.fresh_until:
            if now >= held.ahead_from and settings.EVERGREEN.revalidate_in_background:
                self._queue(key, load)
            return held.value
        if held is not None and now < held.stale_until:
            if not database_breaker().allow():
                return held.value
            try:
                return self._load(key, load)
            except DatabaseError:
                return held.value
        if not database_breaker().allow():
            raise DatabaseUnavailableError(UNAVAILABLE)
        return self._load(key, load)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._queued.clear()

    def reload(self, matches: Callable[[Any], bool]) -> list[Any]:
        """Read again, now and in this thread, every held answer `matches` accepts (one a notice says has
        changed); their new values. An answer that fails to read keeps its old value."""
        with self._lock:
            found = [(key, held.load) for key, held in self._items.items() if matches(held.value)]
        values = []
        for key, load in found:
            try:
                values.append(self._load(key, load))
            except DatabaseError:
                continue
        return values

    def _load(self, key: Hashable, load: Load) -> Any:
        breaker = database_breaker()
        try:
            with database_deadline(settings.EVERGREEN.database_read_timeout_seconds):
                value = load()
        except DatabaseError as error:
            if breaker.failure(error):
                logger.warning("The database does not answer (%s); serving what this process holds", error)
            if not connection.in_atomic_block:
                connection.close_if_unusable_or_obsolete()  # a cut or dropped connection: the next read reconnects
            raise
        if breaker.state().failing_since is not None:
            logger.warning("The database answers again")
        breaker.success()
        self._store(key, value, load)
        return value

    def _store(self, key: Hashable, value: Any, load: Load) -> None:
        now, fresh = self._clock(), self.fresh_seconds()
        held = _Held(value, now + fresh / 2, now + fresh, now + settings.EVERGREEN.stale_if_error_seconds, load)
        with self._lock:
            if key not in self._items and len(self._items) >= self._size:
                self._items = {k: v for k, v in self._items.items() if v.stale_until > now}
                if len(self._items) >= self._size:
                    self._items.clear()
            self._items[key] = held

    def _queue(self, key: Hashable, load: Load) -> None:
        with self._lock:
            if key in self._queued:
                return
            self._queued[key] = load
            self._worker = process_thread(self._worker, self._revalidate, name="evergreen-revalidate")
            self._wake.notify()

    def _revalidate(self) -> None:
        """The background thread: revalidate queued answers one by one, with its own database connection."""
        while True:
            with self._lock:
                while not self._queued:
                    self._wake.wait()
                key, load = next(iter(self._queued.items()))
            close_old_connections()  # drop a connection the last failure left broken
            try:
                self._load(key, load)
            except DatabaseError:
                time.sleep(1.0)  # the breaker has the outage; do not spin on it
            except Exception:
                logger.exception("Revalidating %r failed", key)
            finally:
                with self._lock:
                    self._queued.pop(key, None)
