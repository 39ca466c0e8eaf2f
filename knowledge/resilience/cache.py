"""Django's Redis cache backend on guarded connections (knowledge.resilience.redis_guard).

Settings name it as the default cache when REDIS_URL is set. Errors still reach the caller, at once
while the breaker is open: each caller decides what a miss means (the response cache answers from
its in-process copy or builds the answer; the health check reports it).

Two costs of Django's backend are removed, since the reply cache sits on the cache-miss path: it
built a new redis-py client (and its table of about 170 response callbacks) on every call, which
cost more CPU than the round trip itself; here each connection pool keeps one client. And
`set_each` writes several keys with their own timeouts in one command (a script: a pipeline costs
the client about as much as two commands).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient

from knowledge.resilience.redis_guard import guarded_options

# KEYS: the keys; ARGV: value, timeout in seconds, for each key in turn.
SET_EACH_LUA = """
for i, key in ipairs(KEYS) do
  redis.call('SET', key, ARGV[2 * i - 1], 'EX', ARGV[2 * i])
end
return #KEYS
"""


class ReusedClientRedisCacheClient(RedisCacheClient):
    """One redis-py client per connection pool, made once (redis-py clients are thread-safe)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)  # type: ignore[attr-defined]
        client = self._clients.get(index)
        if client is None:
            pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
            client = self._clients[index] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class GuardedRedisCache(RedisCache):
    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        first = server[0] if isinstance(server, list) else server.split(",")[0]
        options = {**guarded_options(first), **params.get("OPTIONS", {})}
        super().__init__(server, {**params, "OPTIONS": options})
        self._class = ReusedClientRedisCacheClient
        self._set_each_script: dict[int, Any] = {}

    def set_each(self, items: Sequence[tuple[str, Any, int]]) -> None:
        """Set each (key, value, timeout in seconds) with one command: a short script, cheaper than a pipeline."""
        cache: Any = self._cache  # type: ignore[attr-defined]
        client = cache.get_client(None, write=True)
        script = self._set_each_script.get(id(client))
        if script is None:
            script = self._set_each_script[id(client)] = client.register_script(SET_EACH_LUA)
        keys = [self.make_and_validate_key(key) for key, _, _ in items]
        args: list[Any] = []
        for _, value, timeout in items:
            args += [cache._serializer.dumps(value), self.get_backend_timeout(timeout)]
        script(keys=keys, args=args, client=client)
