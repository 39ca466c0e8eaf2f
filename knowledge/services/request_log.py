"""Writing the request log: batches queued in Redis by web processes, written to the database by Celery.

Web processes never write log rows themselves when Redis is configured: their flusher thread pushes
one JSON batch per second to a Redis list (capped: a batch that finds the list full is dropped), and the Celery task
request_log_drain_task (beat, every few seconds) pops batches, writes them in bulk and updates the
knowledge-gap report. Without Redis (the embedded mode) the flusher thread writes directly.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import orjson
import redis
from django.conf import settings
from django.utils import timezone

from knowledge.models import Namespace, RequestLog
from knowledge.resilience.redis_guard import redis_client
from knowledge.services.gaps import gaps_record
from knowledge.telemetry.metrics import DROPPED, QUEUE_FULL, QUEUED, REDIS_DOWN, REQUEST_LOG, tallies

logger = logging.getLogger(__name__)

QUEUE_KEY: Final = "evergreen:request-log"
# Push unless the list already holds ARGV[2] batches, in one step (LTRIM after RPUSH dropped old batches
# nobody could count, since their sizes are not known without reading them).
_PUSH_BELOW_CAP: Final = """
if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[1])
return 1
"""
WRITE_BATCH: Final = 1000
PRUNE_BATCH: Final = 5000


def _redis() -> redis.Redis:
    return redis_client(settings.REDIS_URL)


def request_log_ship(rows: list[dict[str, Any]]) -> None:
    """Hand a batch on (the flusher thread calls this): to Redis, or straight to the database without it.

    Each record is counted here, once: `queued` when it reached the list (or the database), `dropped`
    with the reason when the list was full or Redis did not answer.
    """
    if not settings.REDIS_URL:
        request_log_write(rows)
        tallies.count(REQUEST_LOG, QUEUED, "", amount=len(rows))
        return
    payload = orjson.dumps([{**row, "observed": orjson.Fragment(row["observed"])} for row in rows])
    try:
        pushed = _redis().eval(_PUSH_BELOW_CAP, 1, QUEUE_KEY, payload, settings.EVERGREEN.request_log_queue_max)
    except redis.RedisError as error:  # the breaker logs the outage once; count what it costs
        logger.debug("Request log: %d records lost, Redis does not answer: %s", len(rows), error)
        tallies.count(REQUEST_LOG, DROPPED, REDIS_DOWN, amount=len(rows))
        return
    if pushed:
        tallies.count(REQUEST_LOG, QUEUED, "", amount=len(rows))
    else:
        logger.debug("Request log: %d records lost, %s is full", len(rows), QUEUE_KEY)
        tallies.count(REQUEST_LOG, DROPPED, QUEUE_FULL, amount=len(rows))


def _row(item: dict[str, Any], logging_on: set[int]) -> RequestLog | None:
    observed = item["observed"]
    if isinstance(observed, bytes | str):
        observed = orjson.loads(observed)
    if observed["namespace_id"] not in logging_on:
        return None  # the namespace turned its log off since the request
    return RequestLog(
        at=datetime.fromtimestamp(float(item["at"]), UTC),
        latency_us=int(item["latency_us"]),
        client=str(item.get("client", ""))[:16],
        request_id=str(item.get("request_id", ""))[:64],
        **observed,
    )


def request_log_write(rows: list[dict[str, Any]]) -> int:
    """Write rows (as request_log_ship gets them) and count their gaps; returns how many were written."""
    logging_on = set(Namespace.objects.filter(log_requests=True).values_list("pk", flat=True))
    records = [record for item in rows if (record := _row(item, logging_on)) is not None]
    RequestLog.objects.bulk_create(records, batch_size=WRITE_BATCH)
    gaps_record(records=records)
    return len(records)


def request_log_drain(*, max_batches: int = 200) -> int:
    """Write the batches waiting in Redis (up to `max_batches`); returns how many rows were written."""
    if not settings.REDIS_URL:
        return 0
    client = _redis()
    written = 0
    for _ in range(max_batches):
        raw = client.lpop(QUEUE_KEY)
        if raw is None:
            break
        try:
            written += request_log_write(orjson.loads(raw))  # type: ignore[arg-type]
        except Exception:
            client.lpush(QUEUE_KEY, raw)  # type: ignore[arg-type]  # back at the head for the next run
            raise
    return written


def request_logs_prune(*, now: datetime | None = None) -> int:
    """Delete rows older than EVERGREEN_REQUEST_LOG_RETENTION_DAYS; returns how many."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.EVERGREEN.request_log_retention_days)
    deleted = 0
    while True:
        ids = list(RequestLog.objects.filter(at__lt=cutoff).values_list("pk", flat=True)[:PRUNE_BATCH])
        if not ids:
            return deleted
        deleted += RequestLog.objects.filter(pk__in=ids).delete()[0]
