"""Redis connections that never make a request wait long: short timeouts, no retries, a breaker per server.

A hung Redis (SIGSTOP, a network partition) accepts TCP connections and then says nothing; redis-py's
defaults wait for ever. Every Redis client of the web processes (the response cache, the rate limiter,
the request-log shipper, the health check) connects through these classes instead:

- connect and socket timeouts of ``EVERGREEN_REDIS_TIMEOUT`` seconds (default 0.25), no retries;
- one circuit breaker per server and process: the first timeout or refused connection opens it, and
  for ``EVERGREEN_DEPENDENCY_RETRY_SECONDS`` (default 5) every command fails at once with
  RedisUnavailableError (a redis.ConnectionError) instead of waiting; then one command probes.

So a request waits on a dead Redis at most once per cool-down per process, for one timeout; callers
treat the error as a miss and fall back to what the process holds (see README, "When a dependency fails").
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import redis
from django.conf import settings
from redis.connection import Connection, SSLConnection, UnixDomainSocketConnection

from knowledge.resilience.breaker import BreakerState, CircuitBreaker

logger = logging.getLogger(__name__)

UNAVAILABLE = "Redis at {server} failed recently ({error}); not trying again for a few seconds."

_breakers: dict[str, CircuitBreaker] = {}
_clients: dict[str, redis.Redis] = {}
_lock = threading.Lock()


class RedisUnavailableError(redis.ConnectionError):
    """Raised without trying while the server's breaker is open."""


def redis_breaker(server: str) -> CircuitBreaker:
    """This process's breaker of a Redis server ("host:port" or a socket path)."""
    with _lock:
        breaker = _breakers.get(server)
        if breaker is None:
            breaker = _breakers[server] = CircuitBreaker(
                name=f"Redis at {server}", cooldown=settings.EVERGREEN.dependency_retry_seconds
            )
        return breaker


def redis_states() -> dict[str, BreakerState]:
    """Every Redis server this process has talked to, and how that went (for /healthz)."""
    with _lock:
        return {server: breaker.state() for server, breaker in _breakers.items()}


def redis_breakers_reset() -> None:
    """Forget every breaker (tests that start and stop their own Redis)."""
    with _lock:
        _breakers.clear()


class _Guarded:
    """Mixin for redis-py's connection classes: check the breaker before talking, report how it went.

    `_evergreen_admitted` marks a command cycle that passed the breaker, so the handshake a connect
    sends inside that cycle (HELLO, SELECT) is not refused by the breaker it is probing.
    """

    _evergreen_admitted = False

    def _evergreen_server(self) -> str:
        path = getattr(self, "path", "")
        return str(path) if path else f"{getattr(self, 'host', '?')}:{getattr(self, 'port', '?')}"

    def _evergreen_admit(self) -> CircuitBreaker:
        breaker = redis_breaker(self._evergreen_server())
        if not self._evergreen_admitted:
            if not breaker.allow():
                state = breaker.state()
                raise RedisUnavailableError(UNAVAILABLE.format(server=self._evergreen_server(), error=state.error))
            self._evergreen_admitted = True
        return breaker

    def _evergreen_failed(self, breaker: CircuitBreaker, error: Exception) -> None:
        self._evergreen_admitted = False
        if breaker.failure(error):
            logger.warning("%s does not answer (%s); failing fast for %g s", breaker.name, error, breaker.cooldown)

    def _evergreen_answered(self, breaker: CircuitBreaker) -> None:
        self._evergreen_admitted = False
        if breaker.state().failing_since is not None:
            logger.warning("%s answers again", breaker.name)
        breaker.success()

    def connect_check_health(self, *args: Any, **kwargs: Any) -> Any:
        breaker = self._evergreen_admit()
        try:
            return super().connect_check_health(*args, **kwargs)  # type: ignore[misc]
        except (redis.ConnectionError, redis.TimeoutError) as error:
            self._evergreen_failed(breaker, error)
            raise

    def send_packed_command(self, *args: Any, **kwargs: Any) -> Any:
        breaker = self._evergreen_admit()
        try:
            return super().send_packed_command(*args, **kwargs)  # type: ignore[misc]
        except (redis.ConnectionError, redis.TimeoutError) as error:
            self._evergreen_failed(breaker, error)
            raise
        except BaseException:
            self._evergreen_admitted = False
            raise

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        breaker = redis_breaker(self._evergreen_server())
        try:
            response = super().read_response(*args, **kwargs)  # type: ignore[misc]
        except (redis.ConnectionError, redis.TimeoutError) as error:
            self._evergreen_failed(breaker, error)
            raise
        except redis.ResponseError:
            self._evergreen_answered(breaker)  # an error reply is still an answer
            raise
        self._evergreen_answered(breaker)
        return response


class GuardedConnection(_Guarded, Connection):
    pass


class GuardedSSLConnection(_Guarded, SSLConnection):
    pass


class GuardedUnixConnection(_Guarded, UnixDomainSocketConnection):
    pass


def guarded_options(url: str) -> dict[str, Any]:
    """Connection-pool options for `url`: the guarded connection class of its scheme and the short timeouts."""
    scheme = url.partition("://")[0]
    classes = {"rediss": GuardedSSLConnection, "unix": GuardedUnixConnection}
    timeout = settings.EVERGREEN.redis_timeout_seconds
    return {
        "connection_class": classes.get(scheme, GuardedConnection),
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
    }


def redis_client(url: str) -> redis.Redis:
    """A guarded client of `url`, one per process (redis-py's pool reconnects after a fork)."""
    with _lock:
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = redis.Redis(
                connection_pool=redis.ConnectionPool.from_url(url, **guarded_options(url))
            )
        return client
