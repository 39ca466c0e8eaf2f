"""Date-times as agents receive them: RFC 3339 in UTC with a ``Z`` (``2026-09-02T10:52:47Z``).

The domain's date-times (``generatedAt``, ``measuredAt``, ``retiredAt``) go through here (the MCP and
A2A core, which imports no domain code, writes its own the same way); fields that are dates
(``updated``, ``revision``) stay ``YYYY-MM-DD`` and are declared ``format: date``. Strict clients
(the TypeScript MCP SDK's zod ``iso.datetime``) refuse a bare date where a date-time is due.
"""

from __future__ import annotations

from datetime import UTC, datetime

RFC3339_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def rfc3339(moment: datetime) -> str:
    """An aware datetime as RFC 3339 UTC, to the second."""
    if moment.tzinfo is None:
        raise ValueError("a naive datetime has no place in an RFC 3339 timestamp")
    return moment.astimezone(UTC).strftime(RFC3339_FORMAT)
