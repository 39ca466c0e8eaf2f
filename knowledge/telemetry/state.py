"""Metrics read from PostgreSQL and Redis when Prometheus scrapes: builds, webhook deliveries and attempts, queues.

Builds and deliveries run in Celery workers, often in other containers, whose files a web worker
cannot read; their rows and the broker's queues are the shared truth, so any web worker's /metrics
reports them. Each part is skipped (and logged) when its store does not answer.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

from knowledge.models import BuildStatus, DeliveryStatus, Namespace, ReleaseBuild, WebhookDelivery, WebhookEndpoint
from knowledge.resilience.redis_guard import redis_client
from knowledge.services.request_log import QUEUE_KEY

logger = logging.getLogger(__name__)

BUILD_BUCKETS = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)


def _builds() -> Iterator[Metric]:
    by_status = GaugeMetricFamily(
        "evergreen_release_builds",
        "Release builds by current status, counted from their rows: queued, running and held go down as builds "
        "move on; failed = a build that raised.",
        labels=["status"],
    )
    counts = dict(ReleaseBuild.objects.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    for status in BuildStatus.values:
        by_status.add_metric([status], counts.get(status, 0))
    yield by_status
    duration = ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())
    finished = ReleaseBuild.objects.filter(finished_at__isnull=False).exclude(status=BuildStatus.ABANDONED)
    aggregates: dict[str, Any] = finished.annotate(took=duration).aggregate(
        total=Count("id"),
        seconds=Sum("took"),
        **{f"le{i}": Count("id", filter=Q(took__lte=timedelta(seconds=b))) for i, b in enumerate(BUILD_BUCKETS)},
    )
    buckets = [(str(b), aggregates[f"le{i}"]) for i, b in enumerate(BUILD_BUCKETS)] + [("+Inf", aggregates["total"])]
    seconds = aggregates["seconds"]
    yield HistogramMetricFamily(
        "evergreen_release_build_duration_seconds",
        "How long finished release builds took (failed ones included).",
        buckets=buckets,
        sum_value=seconds.total_seconds() if seconds else 0.0,
    )


# Successful attempts: a delivery's log has an entry per attempt, error "" for the one that delivered. A
# delivery tried once and delivered had exactly that one; only retried ones (or ones an admin sent again)
# need their log read. The log keeps the last 50 attempts, far above EVERGREEN_WEBHOOK_MAX_ATTEMPTS.
_SUCCESSES = {
    "postgresql": "SELECT coalesce(sum(CASE WHEN d.attempts = 1 THEN 1 ELSE (SELECT count(*)"
    " FROM jsonb_array_elements(d.log) e WHERE e->>'error' = '') END), 0) FROM {table} d"
    " WHERE d.delivered_at IS NOT NULL",
    "sqlite": "SELECT coalesce(sum(CASE WHEN d.attempts = 1 THEN 1 ELSE (SELECT count(*)"
    " FROM json_each(d.log) e WHERE json_extract(e.value, '$.error') = '') END), 0) FROM {table} d"
    " WHERE d.delivered_at IS NOT NULL",
}


def _attempts() -> CounterMetricFamily:
    """Delivery attempts so far, from the deliveries' rows: Celery makes them, in a container /metrics cannot read.

    Deleting an endpoint deletes its deliveries, which Prometheus sees as a counter reset.
    """
    attempts = CounterMetricFamily(
        "evergreen_webhook_attempts",
        "Webhook delivery attempts by outcome (delivered, failed), counted from the deliveries' rows.",
        labels=["outcome"],
    )
    total = WebhookDelivery.objects.aggregate(n=Sum("attempts"))["n"] or 0
    with connection.cursor() as cursor:
        cursor.execute(
            _SUCCESSES[connection.vendor].format(table=connection.ops.quote_name(WebhookDelivery._meta.db_table))
        )
        delivered = int(cursor.fetchone()[0])
    attempts.add_metric(["delivered"], delivered)
    attempts.add_metric(["failed"], total - delivered)
    return attempts


def _webhooks() -> Iterator[Metric]:
    yield _attempts()
    deliveries = GaugeMetricFamily("evergreen_webhook_deliveries", "Webhook notices by status.", labels=["status"])
    counts = dict(WebhookDelivery.objects.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    for status in DeliveryStatus.values:
        deliveries.add_metric([status], counts.get(status, 0))
    yield deliveries
    endpoints = GaugeMetricFamily("evergreen_webhook_endpoints", "Webhook endpoints by state.", labels=["state"])
    active = WebhookEndpoint.objects.filter(is_active=True).count()
    endpoints.add_metric(["active"], active)
    endpoints.add_metric(["disabled"], WebhookEndpoint.objects.count() - active)
    yield endpoints


def _releases() -> Iterator[Metric]:
    serving = GaugeMetricFamily(
        "evergreen_active_release", "The releaseId each namespace serves.", labels=["namespace"]
    )
    rows = Namespace.objects.filter(active_release__isnull=False).values_list("slug", "active_release__sequence")
    for slug, sequence in rows:
        serving.add_metric([slug], sequence)
    yield serving


def _queues() -> Iterator[Metric]:
    depth = GaugeMetricFamily("evergreen_queue_depth", "Messages waiting in a queue.", labels=["queue"])
    url = settings.CELERY_BROKER_URL if settings.CELERY_BROKER_URL.startswith("redis") else settings.REDIS_URL
    if not url:  # the embedded mode has no queues: the family is there, without samples
        yield depth
        return
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    depth.add_metric([queue], redis_client(url).llen(queue))
    if settings.REDIS_URL:
        depth.add_metric(["request-log"], redis_client(settings.REDIS_URL).llen(QUEUE_KEY))
    yield depth


class StateCollector:
    """A prometheus_client collector; each part reads its store once per scrape."""

    def collect(self) -> Iterator[Metric]:
        for part in (_builds, _webhooks, _releases, _queues):
            try:
                yield from list(part())
            except Exception as error:  # noqa: BLE001 - a store that does not answer costs its metrics, not the scrape
                logger.warning("Metrics of %s unavailable: %s", part.__name__.strip("_"), error)
