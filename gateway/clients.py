"""Who is asking: the connecting address, or the one the configured trusted proxies vouch for."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.http import HttpRequest

from evergreen_site.settings.env import IPNetwork


def client_address(request: HttpRequest) -> str:
    return client_address_of(request.META)


def _trusted(address: str, proxies: tuple[IPNetwork, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in proxies)


def client_address_of(meta: Mapping[str, Any]) -> str:
    """The client address for rate limits, from a WSGI environ (request.META is one).

    X-Forwarded-For is believed only as far as trusted proxies (EVERGREEN_TRUSTED_PROXIES, addresses
    or networks) wrote it: starting from the connecting address, each hop that is a trusted proxy
    hands over to the address it appended, and the first address that is not a trusted proxy is
    the client. A client that connects directly is never a trusted proxy, so whatever it puts in
    X-Forwarded-For is ignored; what a client puts in front of a proxy's entry is never reached.
    """
    remote = str(meta.get("REMOTE_ADDR", "") or "unknown")
    proxies: tuple[IPNetwork, ...] = settings.EVERGREEN.trusted_proxies
    if not proxies or not _trusted(remote, proxies):
        return remote
    forwarded = [part.strip() for part in str(meta.get("HTTP_X_FORWARDED_FOR", "")).split(",") if part.strip()]
    client = remote
    for hop in reversed(forwarded):
        client = hop
        if not _trusted(hop, proxies):
            break
    return client
