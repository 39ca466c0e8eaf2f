"""Writes to the shared reply cache from a background thread, so a cache miss never waits on Redis for them.

With sync gunicorn workers, every round trip a request waits on is time the worker serves no one;
on a busy machine a round trip can cost a millisecond of waiting, more than ranking and packing the
answer. A miss's writes (the answer for other workers, the pack's record for /api/verify) are only
for later requests, so the request hands them to this process's writer thread and goes on; the
thread wakes, lets LINGER_SECONDS of further writes gather, and writes everything pending in one
command. Waking and writing once per miss cost a worker about a quarter of a miss's CPU (the
thread switch, the script call, the socket), so a burst of misses shares one round trip; what is
written is at most that much later in Redis (an agent checks a pack's citations later than that).
The process keeps its own copy of both (gateway.cache, gateway.packs), so the same worker never
misses what it wrote; another worker may compute an answer again if it asks within that round trip
and linger, which costs nothing but CPU.

At most PENDING_MAX writes wait; beyond that they are dropped and counted (a cache may forget). In the
embedded mode (no Redis) writes are made at once: the local-memory cache never blocks.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

import redis
from django.core.cache import caches

from knowledge.resilience.cache import GuardedRedisCache
from knowledge.telemetry.metrics import CACHE, tallies

logger = logging.getLogger(__name__)

PENDING_MAX = 10_000
BATCH = 200  # writes per command
LINGER_SECONDS = 0.05  # how long a woken writer waits for more writes before writing (unless a batch is full)

SharedWrite = tuple[str, Any, int]  # (key, value, timeout in seconds) of the shared reply cache


def shared_set_each(items: Sequence[SharedWrite]) -> None:
    """Write (key, value, timeout) items to the shared reply cache now: one command on Redis."""
    replies = caches["replies"]
    try:
        if isinstance(replies, GuardedRedisCache):
            replies.set_each(items)
        else:
            for key, value, timeout in items:
                replies.set(key, value, timeout=timeout)
    except Exception as error:  # noqa: BLE001 - a cache outage must not fail anything: the answer is in process
        level = logging.DEBUG if isinstance(error, redis.RedisError) else logging.WARNING
        logger.log(level, "Shared reply cache: %s", error)  # Redis outages: logged once by its breaker


class SharedWriter:
    def __init__(self, pending_max: int = PENDING_MAX) -> None:
        self._pending: deque[SharedWrite] = deque()
        self._pending_max = pending_max
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def write(self, items: Sequence[SharedWrite]) -> None:
        """Queue the writes (or make them now without Redis); never waits on Redis."""
        if not isinstance(caches["replies"], GuardedRedisCache):
            shared_set_each(items)
            return
        if len(self._pending) + len(items) > self._pending_max:
            tallies.count(CACHE, "write_dropped", amount=len(items))
            return
        self._pending.extend(items)
        if self._thread is None:
            self._start()
        if not self._wake.is_set():
            self._wake.set()

    def flush(self) -> None:
        """Write everything pending, here (the thread, tests, process exit)."""
        while self._pending:
            batch: list[SharedWrite] = []
            while self._pending and len(batch) < BATCH:
                batch.append(self._pending.popleft())
            shared_set_each(batch)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                thread = threading.Thread(target=self._run, name="evergreen-reply-writer", daemon=True)
                thread.start()
                self._thread = thread

    def _run(self) -> None:
        while True:
            self._wake.wait()
            if len(self._pending) < BATCH:
                time.sleep(LINGER_SECONDS)
            self._wake.clear()
            try:
                self.flush()
            except Exception:  # the writer must survive anything; the answers are in process anyway
                logger.exception("Shared reply cache writer failed")

    def after_fork(self) -> None:
        """A forked child has no thread and inherits nothing to write."""
        self._pending = deque()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._thread = None


writer = SharedWriter()
os.register_at_fork(after_in_child=writer.after_fork)
atexit.register(writer.flush)


def shared_write(items: Sequence[SharedWrite]) -> None:
    writer.write(items)


def shared_writes_flush() -> None:
    """Make every pending write now (tests that read the shared cache right after a miss)."""
    writer.flush()
