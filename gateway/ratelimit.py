"""A true sliding-window rate limit shared by every worker, asked of Redis in batches (gateway.leases).

Each (scope, client) pair owns a window in Redis (Redis server time, so machines with skewed clocks
agree). A process leases a few slots of it at a time with one atomic script and admits the next
requests of that client from the lease in memory, so most requests cost a dictionary lookup rather
than a Redis round trip; near the limit every request asks Redis again. At most `limit` requests are
admitted in any window of `window` seconds, across all processes and machines that share the Redis;
gateway.leases states the (small, client-friendly) tolerance.

When Redis fails the API keeps serving: the connection's breaker (knowledge.resilience.redis_guard)
stops trying Redis for EVERGREEN_DEPENDENCY_RETRY_SECONDS after one short timeout, and meanwhile the
same limit is enforced in each process on its own (so N processes admit at most N x limit). Without
REDIS_URL (the embedded mode) that per-process limiter is the only one.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import redis
from django.conf import settings

from evergreen_site.settings.env import Rate, RateSpecError, parse_rate
from gateway.leases import LEASE_SECONDS, LEASED_WINDOW_LUA, Lease, LeaseBook, lease_args
from knowledge.resilience.redis_guard import redis_client

logger = logging.getLogger(__name__)

KEY_PREFIX = "evergreen:rl2"  # leases (gateway.leases); "evergreen:rl" held the one-script-per-request window
LOCAL_KEYS_MAX = 100_000


@dataclass(frozen=True, slots=True)
class RateDecision:
    admitted: bool
    limit: int
    window: int
    remaining: int
    reset: int  # whole seconds until a slot frees up

    def headers(self) -> dict[str, str]:
        """draft-ietf-httpapi-ratelimit-headers-10: RateLimit-Policy and RateLimit, plus Retry-After on 429."""
        headers = {
            "RateLimit-Policy": f'"default";q={self.limit};w={self.window}',
            "RateLimit": f'"default";r={self.remaining};t={self.reset}',
        }
        if not self.admitted:
            headers["Retry-After"] = str(self.reset)
        return headers


def rate_for(namespace_setting: str) -> Rate:
    """The namespace's own rate when it sets a valid one, else EVERGREEN_RATE_LIMIT."""
    if namespace_setting.strip():
        try:
            return parse_rate(namespace_setting)
        except RateSpecError:
            logger.warning("Ignoring invalid namespace rate limit %r; using EVERGREEN_RATE_LIMIT", namespace_setting)
    return settings.EVERGREEN.rate_limit


class LocalWindow:
    """The same sliding window in this process only: the embedded mode and the Redis-down fallback."""

    def __init__(self, max_keys: int = LOCAL_KEYS_MAX) -> None:
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()
        self._max_keys = max_keys

    def _prune(self, now: float) -> None:
        """Forget clients with no request in the last hour, so many clients cannot grow memory for ever."""
        self._hits = {k: v for k, v in self._hits.items() if v and v[-1] > now - 3600}

    def hit(self, key: str, rate: Rate) -> RateDecision:
        now = time.monotonic()
        with self._lock:
            if key not in self._hits and len(self._hits) >= self._max_keys:
                self._prune(now)
            times = self._hits.setdefault(key, deque())
            while times and times[0] <= now - rate.window:
                times.popleft()
            admitted = len(times) < rate.limit
            if admitted:
                times.append(now)
            reset = times[0] + rate.window - now if times else rate.window
        return RateDecision(admitted, rate.limit, rate.window, rate.limit - len(times), max(1, math.ceil(reset)))

    def clear(self) -> None:
        with self._lock:
            self._hits.clear()


class SlidingWindowLimiter:
    """The shared window through leases; the local window when there is no Redis or it fails."""

    def __init__(self, *, lease_for: float = LEASE_SECONDS) -> None:
        self.local = LocalWindow()
        self.leases = LeaseBook()
        self.lease_for = lease_for
        self._scripts: dict[str, Any] = {}

    def _redis_script(self) -> Any:
        url = getattr(settings, "REDIS_URL", "")
        if not url:
            return None
        script = self._scripts.get(url)
        if script is None:
            script = self._scripts[url] = redis_client(url).register_script(LEASED_WINDOW_LUA)
        return script

    def _lease_seconds(self, rate: Rate) -> float:
        """How long a lease may be spent: `lease_for`, but never more than a tenth of the window."""
        return min(self.lease_for, rate.window / 10)

    def hit(self, *, scope: str, client: str, rate: Rate) -> RateDecision | None:
        """Count one request of `client` in `scope`; None when the rate is off."""
        if not rate.enabled:
            return None
        key = f"{KEY_PREFIX}:{rate.limit}/{rate.window}:{scope}:{client}"
        script = self._redis_script()
        if script is None:
            return self.local.hit(key, rate)
        lease = self.leases.spend(key)
        if lease is not None:
            return RateDecision(True, rate.limit, rate.window, lease.remaining(), lease.reset(time.monotonic()))
        wanted, member_id, returned, used = self.leases.ask(key)
        asked = time.monotonic()  # a lease lapses here no later than Redis counts it
        try:
            granted, left, reset_ms = script(
                keys=[key, f"{key}:held"],
                args=lease_args(rate, self._lease_seconds(rate), wanted, member_id, returned, used),
            )
        except redis.RedisError as error:  # a Redis failure never fails the request
            logger.debug("Rate limiter: Redis unavailable (%s); limiting in this process", error)
            return self.local.hit(key, rate)
        granted, left = int(granted), max(0, int(left))
        reset_at = asked + int(reset_ms) / 1000
        if granted == 0:
            self.leases.refused(key)
            return RateDecision(False, rate.limit, rate.window, 0, max(1, math.ceil(reset_at - asked)))
        lease = Lease(f"{member_id}:{granted}", granted, 1, asked + self._lease_seconds(rate), left, reset_at)
        self.leases.granted(key, lease)
        return RateDecision(True, rate.limit, rate.window, lease.remaining(), lease.reset(asked))

    def clear(self) -> None:
        """Forget this process's windows and leases (tests)."""
        self.local.clear()
        self.leases.clear()


limiter = SlidingWindowLimiter()


def rate_limit_hit(*, scope: str, client: str, rate: Rate) -> RateDecision | None:
    """Count a request against the shared limiter (see the module docstring for Redis being down)."""
    return limiter.hit(scope=scope, client=client, rate=rate)
