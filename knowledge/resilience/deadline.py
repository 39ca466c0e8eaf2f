"""A client-side deadline on PostgreSQL work: past it, the connection is cut and the wait ends in an error.

libpq bounds the connect (EVERGREEN_DB_CONNECT_TIMEOUT) but not a query on an open connection, and a
server that is hung rather than gone (paused, swapping, its host frozen, or a partition that drops
nothing the kernel must acknowledge) keeps a query waiting for ever: PostgreSQL's statement_timeout
is enforced by that very server. So a web process bounds its waits itself: one watchdog thread per
process holds the deadlines of the work in progress, and when one passes it shuts down that
connection's socket, so the waiting read returns and psycopg raises OperationalError (a
DatabaseError, which the database breaker counts). The connection is then broken; Django discards
it. A deadline is disarmed under the watchdog's lock before the work returns, so a connection is only
ever cut while the work that armed it is still waiting.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.signals import connection_created

from knowledge.resilience.threads import Held, process_thread

logger = logging.getLogger(__name__)


class _Watchdog:
    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._armed: dict[int, Any] = {}  # token -> the Django connection wrapper the work uses
        self._due: list[tuple[float, int]] = []  # (deadline, token), a heap
        self._tokens = itertools.count()
        self._thread: Held = None

    def arm(self, wrapper: Any, seconds: float) -> int:
        with self._lock:
            token = next(self._tokens)
            self._armed[token] = wrapper
            heapq.heappush(self._due, (time.monotonic() + seconds, token))
            self._thread = process_thread(self._thread, self._watch, name="evergreen-db-deadline")
            self._lock.notify()
            return token

    def disarm(self, token: int) -> None:
        with self._lock:
            self._armed.pop(token, None)

    def _watch(self) -> None:
        with self._lock:
            while True:
                while self._due and self._due[0][1] not in self._armed:
                    heapq.heappop(self._due)  # disarmed in time
                if not self._due:
                    self._lock.wait()
                    continue
                deadline, token = self._due[0]
                left = deadline - time.monotonic()
                if left > 0:
                    self._lock.wait(left)
                    continue
                heapq.heappop(self._due)
                _cut(self._armed.pop(token))


def _cut(wrapper: Any) -> None:
    """Shut down the socket of the connection `wrapper` holds (its waiting read returns at once)."""
    raw = wrapper.connection
    if raw is None or getattr(raw, "closed", True):
        return
    try:
        duplicate = socket.socket(fileno=os.dup(raw.pgconn.socket))
    except (OSError, psycopg.Error):  # the connection went away meanwhile
        return
    with duplicate:
        try:
            duplicate.shutdown(socket.SHUT_RDWR)  # acts on the socket both descriptors name
        except OSError:
            return
    logger.warning("A database call passed its deadline; its connection was cut")


_WATCHDOG = _Watchdog()


def database_deadline(seconds: float | None, *, using: str = DEFAULT_DB_ALIAS) -> AbstractContextManager[None]:
    """Bound this thread's PostgreSQL work inside the block to `seconds` (None or 0: no bound)."""
    return _bounded(connections[using], seconds)


@contextmanager
def _bounded(wrapper: Any, seconds: float | None) -> Iterator[None]:
    """The deadline on one connection wrapper (Django's own, such as the `__no_db__` one that creates a
    test database, are in no alias table)."""
    if not seconds or wrapper.vendor != "postgresql":
        yield
        return
    token = _WATCHDOG.arm(wrapper, seconds)
    try:
        yield
    finally:
        _WATCHDOG.disarm(token)


def query_deadline_install(seconds: float, *, check_seconds: float) -> None:
    """Bound every query of this process's connections to `seconds` (web processes: wsgi.py).

    Django runs a connection's execute wrappers around each query it sends, whichever thread sends it.
    Its health check (`is_usable`, a `SELECT 1` on the driver's own cursor, before a request's first
    query on a reused connection) bypasses them, so it is bounded on each connection wrapper too, by
    `check_seconds`.
    """
    if not seconds:
        return

    def bounded(execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        with _bounded(context["connection"], seconds):
            return execute(sql, params, many, context)

    def bounded_check(connection: Any) -> Any:
        unbounded = connection.is_usable

        def is_usable() -> bool:
            with _bounded(connection, check_seconds):
                return bool(unbounded())

        return is_usable

    def install(sender: Any, connection: Any, **kwargs: Any) -> None:
        if connection.vendor == "postgresql" and bounded not in connection.execute_wrappers:
            connection.execute_wrappers.append(bounded)
            connection.is_usable = bounded_check(connection)

    connection_created.connect(install, weak=False, dispatch_uid="evergreen-query-deadline")
