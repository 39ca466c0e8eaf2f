"""Typed readers of environment variables: each names the variable and the accepted form when a value is bad.

Settings read the environment once, here, at start-up; a typo such as ``EVERGREEN_RATE_LIMIT=120/minn``
or ``EVERGREEN_TRUSTED_PROXIES=proxy`` stops the process with ``ImproperlyConfigured`` instead of
silently falling back to a default or failing at the first request.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
RATE_UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600}
_RATE = re.compile(r"^\s*(\d+)\s*(?:/\s*(\d*)\s*([a-z]+))?\s*$")
_ORIGIN = re.compile(r"^https?://[^/\s]+$")


class RateSpecError(ValueError):
    """A rate setting that is not "<count>/<unit>" or "0"."""


@dataclass(frozen=True, slots=True)
class Rate:
    limit: int
    window: int  # seconds

    @property
    def enabled(self) -> bool:
        return self.limit > 0


def parse_rate(spec: str) -> Rate:
    """ "120/min", "10/s", "1000/h", "30/10s"; "0" or "off" turns the limit off."""
    spec = (spec or "").strip().lower()
    if spec in {"0", "off", "none"}:
        return Rate(0, 60)
    match = _RATE.match(spec)
    if match is None or match[3] is None or match[3] not in RATE_UNITS:
        raise RateSpecError(f"rate limit {spec!r} is not like 120/min")
    window = int(match[2] or 1) * RATE_UNITS[match[3]]
    return Rate(int(match[1]), window)


class Env:
    """One environment (``os.environ`` unless given) read with types; blank counts as unset."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = os.environ if environ is None else environ

    def raw(self, name: str) -> str | None:
        value = self._environ.get(name)
        return None if value is None or not value.strip() else value.strip()

    def _bad(self, name: str, value: str, expected: str) -> ImproperlyConfigured:
        return ImproperlyConfigured(f"{name}={value!r} is not valid: expected {expected}.")

    def text(self, name: str, default: str = "") -> str:
        value = self.raw(name)
        return default if value is None else value

    def flag(self, name: str, default: bool) -> bool:
        value = self.raw(name)
        if value is None:
            return default
        if value.lower() in TRUE_WORDS:
            return True
        if value.lower() in FALSE_WORDS:
            return False
        raise self._bad(name, value, "1/0, true/false, yes/no or on/off")

    def whole(self, name: str, default: int, *, minimum: int = 0) -> int:
        value = self.raw(name)
        if value is None:
            return default
        try:
            number = int(value)
        except ValueError:
            number = minimum - 1
        if number < minimum:
            raise self._bad(name, value, f"a whole number of at least {minimum}")
        return number

    def number(self, name: str, default: float, *, minimum: float = 0.0, maximum: float = math.inf) -> float:
        value = self.raw(name)
        if value is None:
            return default
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not minimum <= number <= maximum or number == math.inf:
            bounds = f"between {minimum:g} and {maximum:g}" if maximum < math.inf else f"of at least {minimum:g}"
            raise self._bad(name, value, f"a finite number {bounds}")
        return number

    def items(self, name: str, default: str = "") -> list[str]:
        return [item.strip() for item in self.text(name, default).split(",") if item.strip()]

    def rate(self, name: str, default: str) -> Rate:
        value = self.text(name, default)
        try:
            return parse_rate(value)
        except RateSpecError:
            raise self._bad(
                name, value, 'a rate such as "120/min", "10/s", "1000/h", "30/10s", or "0" for off'
            ) from None

    def choice(self, name: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.text(name, default).upper()
        if value not in choices:
            raise self._bad(name, value, "one of " + ", ".join(choices))
        return value

    def url(self, name: str, default: str, *, schemes: tuple[str, ...]) -> str:
        value = self.text(name, default)
        if value and (urlsplit(value).scheme not in schemes or not urlsplit(value).netloc + urlsplit(value).path):
            raise self._bad(name, value, "a URL starting with " + " or ".join(f"{s}://" for s in schemes))
        return value

    def origins(self, name: str) -> list[str]:
        """Browser origins: ``scheme://host[:port]``, where the port may be ``*``."""
        origins = self.items(name)
        for origin in origins:
            if not _ORIGIN.match(origin):
                raise self._bad(name, origin, "comma-separated origins such as https://app.example.com")
        return origins

    def networks(self, name: str) -> tuple[IPNetwork, ...]:
        """Comma-separated addresses or networks (``10.0.0.0/8,127.0.0.1,::1``); "0" or blank: none."""
        value = self.text(name)
        if value in {"", "0"}:
            return ()
        networks: list[IPNetwork] = []
        for item in self.items(name):
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise self._bad(
                    name, item, "proxy addresses or networks such as 10.0.0.0/8,127.0.0.1 (not a count of proxies)"
                ) from None
        return tuple(networks)

    def directory(self, name: str, default: Path) -> Path:
        """A directory that may not exist yet (commands that need it say so when it is missing)."""
        value = self.raw(name)
        return default if value is None else Path(value).expanduser().resolve()
