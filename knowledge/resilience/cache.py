"""Django's Redis cache backend on guarded connections (knowledge.resilience.redis_guard).

Settings name it as the default cache when REDIS_URL is set. Errors still reach the caller, at once
while the breaker is open: each caller decides what a miss means (the response cache answers from
its in-process copy or builds the answer; the health check reports it).
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache

from knowledge.resilience.redis_guard import guarded_options


class GuardedRedisCache(RedisCache):
    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        first = server[0] if isinstance(server, list) else server.split(",")[0]
        options = {**guarded_options(first), **params.get("OPTIONS", {})}
        super().__init__(server, {**params, "OPTIONS": options})
