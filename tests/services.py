"""What the suite needs from the machine, and what a missing piece means: a skip, or a failure in CI.

`EVERGREEN_REQUIRE_SERVICES=1` (set by `.ci/run`) turns every "this test needs X" into a failure, so a
run without PostgreSQL, Redis, Chromium or Node.js cannot pass by skipping what it could not run.
"""

from __future__ import annotations

import os
from functools import cache
from typing import NoReturn

import pytest

REQUIRED = os.environ.get("EVERGREEN_REQUIRE_SERVICES") == "1"


def missing(reason: str) -> NoReturn:
    """Skip the test for `reason`, or fail it when the run requires every service."""
    if REQUIRED:
        pytest.fail(f"EVERGREEN_REQUIRE_SERVICES=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@cache
def services_missing() -> str | None:
    """None when PostgreSQL is configured and Redis answers, else what is missing."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        return "needs PostgreSQL (set DATABASE_URL)"
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        return "needs Redis (set REDIS_URL)"
    import redis

    try:
        redis.Redis.from_url(redis_url, socket_timeout=5, socket_connect_timeout=5).ping()
    except redis.RedisError as error:
        return f"needs Redis, and {redis_url} does not answer ({error})"
    return None
