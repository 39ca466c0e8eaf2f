"""Who is asking: the connecting address, or the one a configured number of trusted proxies vouch for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.http import HttpRequest


def trusted_proxies() -> int:
    return settings.EVERGREEN.trusted_proxies


def client_address(request: HttpRequest) -> str:
    return client_address_of(request.META)


def client_address_of(meta: Mapping[str, Any]) -> str:
    """The client address for rate limits, from a WSGI environ (request.META is one).

    With EVERGREEN_TRUSTED_PROXIES=n, each of the n proxies appends the address it saw to
    X-Forwarded-For, so the client is the n-th address from the right; anything left of it was sent by
    the client and is ignored. With 0 (the default) the header is ignored entirely, so sending
    X-Forwarded-For never dodges the limit.
    """
    remote = str(meta.get("REMOTE_ADDR", "") or "unknown")
    hops = trusted_proxies()
    if hops <= 0:
        return remote
    forwarded = [part.strip() for part in str(meta.get("HTTP_X_FORWARDED_FOR", "")).split(",") if part.strip()]
    if not forwarded:
        return remote
    return forwarded[-hops] if len(forwarded) >= hops else forwarded[0]
