"""Security events (refusals, denials, bad keys, failed logins) as one JSON line each on ``evergreen.security``.

Callers anywhere (gateway, api, mcp_bridge, the admin) call ``security_event(kind, request=…, reason=…)``.
A record never holds a client address or an API key in clear: both are keyed hashes (HMAC-SHA256 with a
server secret, the first 16 hex digits), so an operator can correlate one client's events and match a
suspected key (``security_client_hash``) without the log becoming a store of addresses or secrets.

Repeats of the same event (kind, reason, client, namespace) within ``SECURITY_LOG_REPEAT_SECONDS`` are
counted instead of written, and the next record written for it says how many were folded into it, so a
client hammering a limit cannot turn every refused request into a log line.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Final

from django.conf import settings
from django.http import HttpRequest

from knowledge.telemetry.ids import request_id_current

logger = logging.getLogger("evergreen.security")

# The kinds callers use; a new kind is one more constant here and a line in the README.
ACCESS_DENIED: Final = "access_denied"  # a private namespace without a key, or another tenant's
BAD_KEY: Final = "bad_key"  # an Authorization header whose key is unknown, revoked or another namespace's
RATE_LIMITED: Final = "rate_limited"  # a 429 from the read limiter or a refused feedback submission
ORIGIN_REFUSED: Final = "origin_refused"  # MCP/A2A Origin not trusted (403)
BODY_TOO_LARGE: Final = "body_too_large"  # MCP/A2A body over the cap (413)
PERMISSION_DENIED: Final = "permission_denied"  # a 403 from the admin or any other page
LOGIN_FAILED: Final = "login_failed"  # django.contrib.auth's user_login_failed
A2A_QUOTA: Final = "a2a_quota"  # an A2A task refused because a storage quota is full

KINDS: Final = frozenset(
    {
        ACCESS_DENIED,
        BAD_KEY,
        RATE_LIMITED,
        ORIGIN_REFUSED,
        BODY_TOO_LARGE,
        PERMISSION_DENIED,
        LOGIN_FAILED,
        A2A_QUOTA,
    }
)

HASH_HEX_DIGITS: Final = 16
TEXT_MAX: Final = 200  # route, namespace and string fields are attacker-controlled: bounded
REPEAT_KEYS_MAX: Final = 10_000
CLIENT_ATTRIBUTE: Final = "evergreen_client"  # set by gateway.security's middleware: the limiter's view
LOGGED_ATTRIBUTE: Final = "evergreen_security_logged"  # so the middleware does not log a 403 twice


@lru_cache(maxsize=4)
def _derived_key(secret: str) -> bytes:
    """A key of its own for the log, so its hashes say nothing about anything else signed with the secret."""
    return hashlib.sha256(b"evergreen.security-log:" + secret.encode("utf-8", "surrogatepass")).digest()


def _secret() -> str:
    return settings.EVERGREEN.security_log_key or settings.SECRET_KEY


def security_client_hash(value: str) -> str:
    """The keyed hash the log writes for a client address or an API key (to look one up in the log)."""
    digest = hmac.new(_derived_key(_secret()), value.encode("utf-8", "surrogatepass"), hashlib.sha256)
    return digest.hexdigest()[:HASH_HEX_DIGITS]


def _bounded(value: Any) -> Any:
    if isinstance(value, str):
        return value[:TEXT_MAX]
    if isinstance(value, bool | int | float) or value is None:
        return value
    return str(value)[:TEXT_MAX]


def _presented_key(request: HttpRequest) -> str | None:
    scheme, _, token = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def _client_of(request: HttpRequest | None, client: str | None) -> str | None:
    if client is not None:
        return client
    if request is None:
        return None
    resolved = getattr(request, CLIENT_ATTRIBUTE, None)
    return str(resolved) if resolved else str(request.META.get("REMOTE_ADDR") or "unknown")


class _Repeats:
    """Per-process counts of events folded into the next record of the same key."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, ...], tuple[float, int]] = {}
        self._lock = threading.Lock()

    def admit(self, key: tuple[str, ...], *, window: float, now: float) -> int | None:
        """None to fold this event away, else how many were folded since the last record written."""
        if window <= 0:
            return 0
        with self._lock:
            last = self._seen.get(key)
            if last is not None and now - last[0] < window:
                self._seen[key] = (last[0], last[1] + 1)
                return None
            if len(self._seen) >= REPEAT_KEYS_MAX:
                self._seen.clear()
            self._seen[key] = (now, 0)
            return last[1] if last is not None else 0

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()


repeats = _Repeats()


def _repeat_seconds() -> float:
    return settings.EVERGREEN.security_log_repeat_seconds


def security_event(
    kind: str,
    *,
    request: HttpRequest | None = None,
    namespace: str | None = None,
    reason: str | None = None,
    client: str | None = None,
    **fields: Any,
) -> None:
    """Write one security event. ``reason`` is a short stable code (``no_key``, ``unknown_key``, ``over_limit``…).

    ``client`` is the address as the caller resolved it (else the request's, as the gateway resolves
    it); extra ``fields`` are written as given, bounded, and must not hold secrets or addresses. Never
    raises: a security log that fails must not turn a refusal into a server error.
    """
    if not logger.isEnabledFor(logging.WARNING):
        return
    try:
        _write(kind, request=request, namespace=namespace, reason=reason, client=client, fields=fields)
    except Exception:  # the event is lost, the request is not
        logger.exception("Could not write a security event of kind %s", kind)


def _write(
    kind: str,
    *,
    request: HttpRequest | None,
    namespace: str | None,
    reason: str | None,
    client: str | None,
    fields: dict[str, Any],
) -> None:
    if request is not None:
        setattr(request, LOGGED_ATTRIBUTE, True)
    address = _client_of(request, client)
    client_hash = security_client_hash(address) if address is not None else None
    key = _presented_key(request) if request is not None else None
    record: dict[str, Any] = {
        "event": "security",
        "kind": kind,
        "reason": reason,
        "client": client_hash,
        "key": security_client_hash(key) if key else None,
        "namespace": _bounded(namespace),
        "method": request.method if request is not None else None,
        "host": _bounded(request.META.get("HTTP_HOST", "")) if request is not None else None,
        "route": _bounded(request.path) if request is not None else None,
        "request_id": request_id_current(),
    }
    record.update({name: _bounded(value) for name, value in fields.items() if name not in record})
    folded = repeats.admit(
        (kind, reason or "", client_hash or "", str(record["namespace"] or "")),
        window=_repeat_seconds(),
        now=time.monotonic(),
    )
    if folded is None:
        return
    if folded:
        record["repeated"] = folded
    record["at"] = datetime.now(UTC).isoformat(timespec="milliseconds")
    # ensure_ascii: an attacker's lone surrogate or control character stays an escape, never raw bytes.
    logger.warning(json.dumps(record, ensure_ascii=True, separators=(",", ":")), extra={"security": record})


def security_event_logged(request: HttpRequest) -> bool:
    """Whether an event was already written for this request (the 403 middleware logs the rest)."""
    return bool(getattr(request, LOGGED_ATTRIBUTE, False))


def login_failed_receiver(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any
) -> None:
    """``user_login_failed``: the username as a keyed hash too (people type passwords into it)."""
    username = credentials.get("username")
    security_event(
        LOGIN_FAILED,
        request=request,
        reason="bad_credentials",
        user=security_client_hash(str(username)) if username else None,
    )
