"""Every request-log record is counted once, by its fate: queued, or dropped with the reason (never both)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from knowledge.requestlog.buffer import buffer
from knowledge.requestlog.records import Observed
from knowledge.resilience.redis_guard import redis_breakers_reset
from knowledge.services.request_log import QUEUE_KEY
from knowledge.telemetry.metrics import REQUEST_LOG, tallies
from tests.configure import configure

ANSWER = Observed(namespace_id=1, release_id=1, channel="rest", route="context", status=200, etag='"e"')
DOCS = Path(__file__).resolve().parents[2] / "docs"


def fates() -> dict[tuple[str, ...], float]:
    """Every record counted so far, by (outcome, reason), this process's tallies included."""
    tallies.flush()
    return {
        tuple(sample.labels.values()): sample.value
        for metric in REQUEST_LOG.collect()
        for sample in metric.samples
        if sample.name.endswith("_total")
    }


def growth(before: dict[tuple[str, ...], float]) -> dict[tuple[str, ...], float]:
    return {labels: value - before.get(labels, 0) for labels, value in fates().items() if value != before.get(labels)}


def buffered(count: int) -> None:
    for _ in range(count):
        assert buffer.append((ANSWER, time.time(), 10, "", "rid"), limit=10_000)


@pytest.fixture
def empty_buffer(settings: Any) -> Iterator[None]:
    configure(settings, request_log=True, request_log_sample=1.0)
    buffer.clear()
    yield
    buffer.clear()
    redis_breakers_reset()


def test_records_lost_to_a_dead_redis_are_counted_dropped_and_not_queued(empty_buffer: None, settings: Any) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    redis_breakers_reset()
    before = fates()
    buffered(7)
    buffer.flush()
    assert growth(before) == {("dropped", "redis_down"): 7}


@pytest.mark.services
def test_batches_beyond_the_queue_cap_are_counted_dropped_and_the_list_stays_capped(
    empty_buffer: None, settings: Any
) -> None:
    configure(settings, request_log_queue_max=2)
    shared = redis.Redis.from_url(settings.REDIS_URL)
    shared.delete(QUEUE_KEY)
    try:
        before = fates()
        for size in (3, 4, 5):  # one flush ships one batch
            buffered(size)
            buffer.flush()
        assert shared.llen(QUEUE_KEY) == 2
        assert growth(before) == {("queued", ""): 3 + 4, ("dropped", "queue_full"): 5}
    finally:
        shared.delete(QUEUE_KEY)


def test_a_full_buffer_counts_its_drops_with_their_reason(empty_buffer: None, settings: Any) -> None:
    from knowledge.requestlog.buffer import request_observed

    configure(settings, request_log_buffer_max=0)
    before = fates()
    request_observed(ANSWER, enabled=True, latency_seconds=0.001, client="", request_id="r")
    assert growth(before) == {("dropped", "buffer_full"): 1}


def test_the_backlog_alert_can_fire_below_the_cap_and_drops_alert_too(settings: Any) -> None:
    rules = {
        rule["alert"]: rule["expr"]
        for rule in yaml.safe_load((DOCS / "prometheus/alerts.yml").read_text())["groups"][0]["rules"]
    }
    backlog = rules["EvergreenRequestLogBacklog"]
    threshold = float(backlog.rsplit(">", 1)[1])
    assert 'queue="request-log"' in backlog and threshold < settings.EVERGREEN.request_log_queue_max
    assert 'evergreen_request_log_records_total{outcome="dropped"}' in rules["EvergreenRequestLogDropping"]
