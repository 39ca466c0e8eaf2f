"""The per-process request-log buffer: appends on the hot path, batches shipped by the flusher thread.

`request_observed` is all a request pays: a sampling draw, a tuple and a deque append. Once a second
the flusher thread (knowledge.telemetry.flusher) drains the buffer, hashes client addresses with the
security log's key (the raw address never leaves the process), and hands the batch to
knowledge.services.request_log, which queues it in Redis for a Celery task to write (or writes it
directly in the embedded mode). A full buffer drops records and counts them; it never blocks.
"""

from __future__ import annotations

import random
import threading
import time
from collections import deque
from typing import Any

from django.conf import settings

from knowledge.requestlog.records import Observed
from knowledge.security_events import security_client_hash
from knowledge.telemetry.flusher import flusher
from knowledge.telemetry.metrics import BUFFER_FULL, DROPPED, REQUEST_LOG, SAMPLED_OUT, tallies

Pending = tuple[Observed, float, int, str, str]  # observed, at (epoch s), latency (µs), client, request id
CLIENT_HASHES_MAX = 10_000
BATCH = 1000  # records per batch shipped (one Redis list element)


class RequestBuffer:
    def __init__(self) -> None:
        self._items: deque[Pending] = deque()
        self._lock = threading.Lock()
        self._hashes: dict[str, str] = {}

    def append(self, item: Pending, *, limit: int) -> bool:
        if len(self._items) >= limit:
            return False
        self._items.append(item)
        return True

    def drain(self) -> list[Pending]:
        with self._lock:
            items, self._items = self._items, deque()
        return list(items)

    def client_hash(self, address: str) -> str:
        found = self._hashes.get(address)
        if found is None:
            if len(self._hashes) >= CLIENT_HASHES_MAX:
                self._hashes.clear()
            found = self._hashes[address] = security_client_hash(address)
        return found

    def rows(self, items: list[Pending]) -> list[dict[str, Any]]:
        rows = []
        for observed, at, latency_us, client, request_id in items:
            rows.append(
                {
                    "observed": observed.encoded(),
                    "at": at,
                    "latency_us": latency_us,
                    "client": self.client_hash(client) if client else "",
                    "request_id": request_id,
                }
            )
        return rows

    def flush(self) -> None:
        items = self.drain()
        if not items:
            return
        from knowledge.services.request_log import request_log_ship  # noqa: PLC0415  # it imports this module

        for start in range(0, len(items), BATCH):
            request_log_ship(self.rows(items[start : start + BATCH]))  # it counts each record's fate

    def clear(self) -> None:
        self.drain()
        self._hashes.clear()


buffer = RequestBuffer()
flusher.register(buffer.flush)


def request_observed(
    observed: Observed, *, enabled: bool, latency_seconds: float, client: str, request_id: str | None
) -> None:
    """Log one answer (hot path). `enabled` is the namespace's switch; the global switch and sampling are read here."""
    config = settings.EVERGREEN
    if not (enabled and config.request_log):
        return
    if config.request_log_sample < 1.0 and random.random() >= config.request_log_sample:  # noqa: S311 - sampling
        tallies.count(REQUEST_LOG, SAMPLED_OUT, "")
        return
    item = (observed, time.time(), int(latency_seconds * 1_000_000), client, request_id or "")
    if not buffer.append(item, limit=config.request_log_buffer_max):
        tallies.count(REQUEST_LOG, DROPPED, BUFFER_FULL)
        return
    flusher.ensure_started()
