"""A true sliding-window rate limit shared by every worker: one atomic Redis script per request.

Each (scope, client) pair owns a sorted set of request times (Redis server time, so machines with
skewed clocks agree). The script drops times older than the window, counts the rest and admits the
request only below the limit: at most `limit` requests are admitted in any window of `window`
seconds, across all processes and machines that share the Redis.

When Redis fails the API keeps serving: the connection's breaker (knowledge.resilience.redis_guard)
stops trying Redis for EVERGREEN_DEPENDENCY_RETRY_SECONDS after one short timeout, and meanwhile the
same limit is enforced in each process on its own (so N processes admit at most N x limit). Without
REDIS_URL (the embedded mode) that per-process limiter is the only one.
"""

from __future__ import annotations

import itertools
import logging
import math
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import redis
from django.conf import settings

from evergreen_site.settings.env import Rate, RateSpecError, parse_rate
from knowledge.resilience.redis_guard import redis_client

logger = logging.getLogger(__name__)

KEY_PREFIX = "evergreen:rl"
LOCAL_KEYS_MAX = 100_000

# KEYS[1]: the window's sorted set. ARGV: limit, window in ms, a unique member for this request.
# Returns {admitted (1|0), remaining, ms until the oldest counted request leaves the window}.
SLIDING_WINDOW_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local admitted = 0
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  admitted = 1
  count = count + 1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local reset = window
if oldest[2] then reset = tonumber(oldest[2]) + window - now end
return {admitted, limit - count, reset}
"""


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
    def __init__(self) -> None:
        self.local = LocalWindow()
        self._scripts: dict[str, Any] = {}
        self._members = itertools.count()

    def _redis_script(self) -> Any:
        url = getattr(settings, "REDIS_URL", "")
        if not url:
            return None
        script = self._scripts.get(url)
        if script is None:
            script = self._scripts[url] = redis_client(url).register_script(SLIDING_WINDOW_LUA)
        return script

    def hit(self, *, scope: str, client: str, rate: Rate) -> RateDecision | None:
        """Count one request of `client` in `scope`; None when the rate is off."""
        if not rate.enabled:
            return None
        key = f"{KEY_PREFIX}:{rate.limit}/{rate.window}:{scope}:{client}"
        script = self._redis_script()
        if script is not None:
            member = f"{time.time_ns()}:{os.getpid()}:{threading.get_ident()}:{next(self._members)}"
            try:
                admitted, remaining, reset_ms = script(keys=[key], args=[rate.limit, rate.window * 1000, member])
            except redis.RedisError as error:  # a Redis failure never fails the request
                logger.debug("Rate limiter: Redis unavailable (%s); limiting in this process", error)
            else:
                reset = max(1, math.ceil(int(reset_ms) / 1000))
                return RateDecision(bool(admitted), rate.limit, rate.window, max(0, int(remaining)), reset)
        return self.local.hit(key, rate)


limiter = SlidingWindowLimiter()


def rate_limit_hit(*, scope: str, client: str, rate: Rate) -> RateDecision | None:
    """Count a request against the shared limiter (see the module docstring for Redis being down)."""
    return limiter.hit(scope=scope, client=client, rate=rate)
