"""Prometheus instruments, and the in-process tallies that the hot path updates instead of them.

Updating a prometheus_client value in multiprocess mode (PROMETHEUS_MULTIPROC_DIR, one file per
gunicorn worker) takes a lock and an mmap write, 3-6 µs for a counter and a histogram together;
a replayed answer costs about 100 µs in all. So requests are tallied in plain dicts under one
lock (well under a microsecond) and the flusher thread adds the tallies to the instruments once a
second. Rare events (refusals) update instruments directly.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from typing import Any

from prometheus_client import Counter, Histogram

from knowledge.telemetry.flusher import flusher

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

REQUESTS = Counter(
    "evergreen_requests", "HTTP requests answered, by route, channel and status.", ["route", "channel", "status"]
)
LATENCY = Histogram(
    "evergreen_request_duration_seconds",
    "Time from receiving a request to handing its answer to the WSGI server.",
    ["route", "channel"],
    buckets=LATENCY_BUCKETS,
)
FROM_MEMORY = Counter(
    "evergreen_served_from_memory",
    "Answers replayed from process memory before Django (gateway.replay); a subset of evergreen_requests.",
    ["route"],
)
CACHE = Counter(
    "evergreen_response_cache",
    "Reply-cache lookups on the Django path: local (process) or miss; shared (the cache Redis) for /api/changes "
    "pages only, since /api/context packs are kept per process.",
    ["result"],
)
RATE_LIMIT_REFUSALS = Counter(
    "evergreen_rate_limit_refusals", "Requests refused by a rate limit, by limiter (read, feedback).", ["limiter"]
)
REQUEST_LOG = Counter(
    "evergreen_request_log_records",
    "Request-log records by fate, each counted once: queued (reached the Redis list, or the database without "
    "Redis), sampled_out, dropped (reason: buffer_full, queue_full, redis_down).",
    ["outcome", "reason"],
)
# REQUEST_LOG's label values: `reason` is "" unless the outcome is DROPPED.
QUEUED, SAMPLED_OUT, DROPPED = "queued", "sampled_out", "dropped"
BUFFER_FULL, QUEUE_FULL, REDIS_DOWN = "buffer_full", "queue_full", "redis_down"
CITATIONS = Counter("evergreen_citations_checked", "Citations checked by /api/verify and MCP, by verdict.", ["verdict"])


def histogram_add(child: Any, counts: list[int], total: float) -> None:
    """Add pre-bucketed observations to a Histogram child (what `observe` would do, once per bucket).

    prometheus_client has no batch observe; its children keep one value per bucket (`_buckets`, not
    cumulative) and `_sum`. tests/telemetry checks the exposition equals what `observe` produces.
    """
    child._sum.inc(total)
    for index, count in enumerate(counts):
        if count:
            child._buckets[index].inc(count)


class Tallies:
    """Per-process request counts, latency buckets and simple counters since the last flush."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[tuple[str, str, str, bool], list[Any]] = {}
        self._counts: dict[tuple[Counter, tuple[str, ...]], int] = {}
        self._bounds = LATENCY_BUCKETS

    def request(self, route: str, channel: str, status: int, seconds: float, *, from_memory: bool = False) -> None:
        key = (route, channel, str(status), from_memory)
        bucket = bisect_left(self._bounds, seconds)  # the first bound >= seconds, as `observe` picks
        with self._lock:
            slot = self._requests.get(key)
            if slot is None:
                slot = self._requests[key] = [0, 0.0, [0] * (len(self._bounds) + 1)]
            slot[0] += 1
            slot[1] += seconds
            slot[2][bucket] += 1
        flusher.ensure_started()

    def count(self, counter: Counter, *labels: str, amount: int = 1) -> None:
        with self._lock:
            key = (counter, labels)
            self._counts[key] = self._counts.get(key, 0) + amount
        flusher.ensure_started()

    def flush(self) -> None:
        with self._lock:
            requests, self._requests = self._requests, {}
            counts, self._counts = self._counts, {}
        for (route, channel, status, from_memory), (count, total, buckets) in requests.items():
            REQUESTS.labels(route, channel, status).inc(count)
            histogram_add(LATENCY.labels(route, channel), buckets, total)
            if from_memory:
                FROM_MEMORY.labels(route).inc(count)
        for (counter, labels), amount in counts.items():
            counter.labels(*labels).inc(amount)


tallies = Tallies()
flusher.register(tallies.flush)
