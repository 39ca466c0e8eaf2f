"""Request IDs: accepted from a trusted-looking X-Request-ID header or made here, and kept for log records.

An ID made here is a per-process random prefix and a counter (cheaper than a UUID on the hot path,
and unique across processes: the prefix is drawn again in every forked worker).
"""

from __future__ import annotations

import itertools
import os
import re
import secrets
from contextvars import ContextVar

HEADER = "X-Request-ID"
ENVIRON_KEY = "HTTP_X_REQUEST_ID"
# Where the accepted ID is kept on the request itself: Django logs 4xx and 5xx answers ("django.request")
# after every middleware has returned, when the context variable below is already reset.
META_KEY = "evergreen.request_id"
_SAFE = re.compile(r"[A-Za-z0-9._:-]{1,64}")

current: ContextVar[str | None] = ContextVar("evergreen_request_id", default=None)


class _Maker:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.prefix = secrets.token_hex(5)
        self.counter = itertools.count(1)

    def make(self) -> str:
        return f"{self.prefix}{next(self.counter):06x}"


_maker = _Maker()
os.register_at_fork(after_in_child=_maker.reset)


def request_id_new() -> str:
    return _maker.make()


def request_id_accept(value: str | None) -> str:
    """The caller's (a proxy's) ID when it is short and plain, else a new one: never raw header bytes in logs."""
    if value and _SAFE.fullmatch(value):
        return value
    return _maker.make()


def request_id_current() -> str | None:
    return current.get()
