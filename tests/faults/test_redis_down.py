"""Redis paused (a partition: connections open, nothing answers) or killed under a running worker.

Reads keep answering: the limiter counts in the process, the response cache misses, and after one
short timeout the breaker makes every Redis call fail at once. The client's timeout (5 s, twenty
times the Redis timeout) is the failure guard of a request that waits on Redis; nothing is timed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.faults.stack import FaultStack, fault_stack
from tests.faults.test_database_down import READS, mcp_call
from tests.worker import wait_for

GUARD = httpx.Timeout(5.0)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultStack]:
    with fault_stack(Path(tmp_path_factory.mktemp("redis-down"))) as running:
        yield running


def reads_answer(http: httpx.Client, warm: dict[str, httpx.Response], topic: str) -> None:
    again = {path: http.get(path, timeout=GUARD) for path in READS}
    assert {path: r.status_code for path, r in again.items()} == dict.fromkeys(READS, 200)
    assert all(again[path].content == warm[path].content for path in READS)
    assert http.get(f"/api/context?topic={topic}", timeout=GUARD).status_code == 200  # a miss, computed
    answer = mcp_call(http, "/mcp", "search_context", {"query": topic})
    assert answer.status_code == 200 and answer.json()["result"]["isError"] is False


def cache_fails(http: httpx.Client) -> bool:
    health = http.get("/healthz", timeout=GUARD)
    assert health.status_code == 200  # still serving
    return bool(health.json()["cache"].startswith("error"))


def test_reads_answer_while_redis_is_paused(stack: FaultStack) -> None:
    with stack.http() as http:
        warm = {path: http.get(path) for path in READS}
        stack.redis.pause()
        try:
            reads_answer(http, warm, "paused%20cache")
            assert wait_for(lambda: cache_fails(http), what="/healthz to report the cache")
            assert http.get("/readyz", timeout=GUARD).status_code == 503
            reads_answer(http, warm, "still%20paused")
        finally:
            stack.redis.resume()
        wait_for(lambda: http.get("/readyz").status_code == 200, what="/readyz after Redis resumes")


def test_reads_answer_while_redis_is_killed_and_it_is_used_again_after_a_restart(stack: FaultStack) -> None:
    with stack.http() as http:
        warm = {path: http.get(path) for path in READS}
        stack.redis.kill()
        try:
            reads_answer(http, warm, "killed%20cache")
            assert wait_for(lambda: cache_fails(http), what="/healthz to report the cache")
        finally:
            stack.redis.start()
        wait_for(lambda: http.get("/readyz").status_code == 200, what="/readyz after Redis restarts")
        reads_answer(http, warm, "restarted%20cache")
