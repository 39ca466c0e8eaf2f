"""The bench's Redis database: emptied between runs, but only when it is the bench's own.

A database is the bench's when it is empty or holds the claim key an earlier bench run wrote; any other
database (a developer's, CI's, another engineer's) is refused with a message naming the setting to change.
"""

from __future__ import annotations

from typing import Final

CLAIM_KEY: Final = "evergreen-bench:claimed"
NOT_OURS: Final = (
    "Redis {url} holds {keys} keys and no {claim} key: it is not the bench's own database, so the bench will not "
    "empty it. Set EVERGREEN_BENCH_REDIS_URL to an unused database (e.g. redis://127.0.0.1:6379/12)."
)


class SharedRedisError(RuntimeError):
    """The configured bench Redis database belongs to someone else."""


def redis_flush_owned(url: str) -> None:
    """Empty the bench's Redis database and claim it again; refuse a database in use by others."""
    import redis

    client = redis.Redis.from_url(url)
    keys = client.dbsize()
    if keys and not client.exists(CLAIM_KEY):
        raise SharedRedisError(NOT_OURS.format(url=url, keys=keys, claim=CLAIM_KEY))
    client.flushdb()
    client.set(CLAIM_KEY, "1")
