"""What this process knows about PostgreSQL: whether it answered lately, and a bounded probe for /healthz.

The breaker is fed by the serving lookups (knowledge.resilience.stale): a failed lookup opens it, and
while it is open lookups of names never seen fail at once (503) instead of waiting on a dead server,
and answers served from memory say how stale they are.
"""

from __future__ import annotations

import time
from functools import cache

import psycopg
from django.conf import settings
from django.db import DatabaseError, connection

from knowledge.resilience.breaker import CircuitBreaker

PROBE_TIMEOUT_SECONDS = 2


class DatabaseUnavailableError(DatabaseError):
    """Raised without trying while PostgreSQL's breaker is open."""


@cache
def database_breaker() -> CircuitBreaker:
    return CircuitBreaker(name="the database", cooldown=settings.EVERGREEN.dependency_retry_seconds)


def database_staleness(now: float | None = None) -> float | None:
    """Seconds since the database last answered a serving lookup, while it is failing; None when it answers."""
    since = database_breaker().state().failing_since
    if since is None:
        return None
    return max(0.0, (time.monotonic() if now is None else now) - since)


def database_probe() -> str:
    """ "ok", or why not: a fresh connection with a short connect timeout and statement timeout.

    Not the request's pooled connection: a query on a connection to a hung server would wait for TCP
    to give up (minutes); a new connection gives up after PROBE_TIMEOUT_SECONDS.
    """
    params = connection.get_connection_params()
    if connection.vendor != "postgresql":
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        except DatabaseError as error:
            return f"error: {type(error).__name__}"
        return "ok"
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("prepare_threshold", None)
    params["connect_timeout"] = PROBE_TIMEOUT_SECONDS
    params["options"] = f"-c statement_timeout={PROBE_TIMEOUT_SECONDS * 1000}"
    try:
        with psycopg.connect(**params, autocommit=True) as probe:
            probe.execute("SELECT 1")
    except psycopg.Error as error:
        return f"error: {type(error).__name__}"
    return "ok"
