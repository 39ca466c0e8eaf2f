"""What Celery does (builds, webhook attempts) reaches /metrics from the rows, typed as what it is."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from knowledge.models import DeliveryStatus, Namespace, WebhookDelivery, WebhookEndpoint
from tests.configure import configure
from tests.observe.test_metrics import TOKEN, sample, scrape

pytestmark = pytest.mark.django_db
DOCS = Path(__file__).resolve().parents[2] / "docs"


def attempt(error: str = "") -> dict[str, Any]:
    return {"at": timezone.now().isoformat(), "status": 200 if not error else 500, "error": error, "ms": 3}


def delivery(endpoint: WebhookEndpoint, number: int, status: str, log: list[dict[str, Any]]) -> None:
    delivered = timezone.now() if any(not item["error"] for item in log) else None
    WebhookDelivery.objects.create(
        endpoint=endpoint,
        message_id=f"msg_{number}",
        event="release.activated",
        payload="{}",
        status=status,
        attempts=len(log),
        delivered_at=delivered,
        log=log,
    )


def test_webhook_attempts_made_by_another_process_are_counted_from_the_deliveries(
    client: Any, alpha: Namespace, settings: Any
) -> None:
    configure(settings, metrics_token=TOKEN)
    endpoint = WebhookEndpoint.objects.create(namespace=alpha, url="https://hooks.example.com/in", secret="whsec_x")
    delivery(endpoint, 1, DeliveryStatus.DELIVERED, [attempt()])
    delivery(endpoint, 2, DeliveryStatus.DELIVERED, [attempt("HTTP 500"), attempt("HTTP 503"), attempt()])
    delivery(endpoint, 3, DeliveryStatus.PENDING, [attempt("HTTP 500"), attempt("timeout")])
    delivery(endpoint, 4, DeliveryStatus.DELIVERED, [attempt(), attempt("HTTP 502"), attempt()])  # sent again
    text = scrape(client).content.decode()
    assert re.search(r"^# TYPE evergreen_webhook_attempts(_total)? counter$", text, re.M)
    assert sample(text, 'evergreen_webhook_attempts_total{outcome="delivered"}') == 1 + 1 + 2
    assert sample(text, 'evergreen_webhook_attempts_total{outcome="failed"}') == 2 + 2 + 1


def test_builds_by_status_are_a_gauge_since_queued_and_running_go_down(
    client: Any, alpha: Namespace, settings: Any
) -> None:
    configure(settings, metrics_token=TOKEN)
    text = scrape(client).content.decode()
    assert "# TYPE evergreen_release_builds gauge" in text
    assert "evergreen_release_builds_total" not in text
    assert sample(text, 'evergreen_release_builds{status="succeeded"}') >= 1
    assert sample(text, 'evergreen_release_builds{status="running"}') == 0


def test_dashboards_and_alerts_use_counters_and_gauges_as_what_they_are(
    client: Any, alpha: Namespace, settings: Any
) -> None:
    configure(settings, metrics_token=TOKEN)
    client.get("/t/alpha/api/context?topic=alpha")
    exposition = scrape(client).content.decode()
    types = {name.removesuffix("_total"): kind for name, kind in re.findall(r"^# TYPE (\w+) (\w+)$", exposition, re.M)}
    gauges = {name for name, kind in types.items() if kind == "gauge"}
    for name in ("grafana/evergreen-dashboard.json", "prometheus/alerts.yml"):
        text = (DOCS / name).read_text()
        for function, metric in re.findall(r"\b(rate|increase|irate)\((evergreen_\w+)", text):
            assert metric.removesuffix("_total") not in gauges, f"{name}: {function}() of the gauge {metric}"
        for metric in re.findall(r"\b(evergreen_\w+_total)\b", text):
            assert types.get(metric.removesuffix("_total")) == "counter", f"{name}: {metric} is not a counter"
