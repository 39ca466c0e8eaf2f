"""GET /metrics (Prometheus): protected by a token; requests, memory answers, builds, webhooks and queues."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import REGISTRY, CollectorRegistry, Histogram, generate_latest

from gateway.replay import ReplayApp, ReplayMemory
from knowledge.models import Namespace
from knowledge.telemetry.metrics import LATENCY_BUCKETS, histogram_add, tallies
from tests.configure import configure
from tests.gateway.replaying import CountingDjango, call, django_app

pytestmark = pytest.mark.django_db

TOKEN = "scrape-me-please"
__all__ = ["django_app"]


def scrape(client: Any, token: str | None = TOKEN) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return client.get("/metrics", headers=headers)


def sample(text: str, line_start: str) -> float:
    """The value of the first exposition line starting with `line_start` (labels in Prometheus' order)."""
    for line in text.splitlines():
        if line.startswith(line_start):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no line starts with {line_start!r}")


def test_batched_observations_expose_exactly_what_observe_would() -> None:
    observed, batched = CollectorRegistry(), CollectorRegistry()
    one = Histogram("t_seconds", "t", ["route"], buckets=LATENCY_BUCKETS, registry=observed)
    two = Histogram("t_seconds", "t", ["route"], buckets=LATENCY_BUCKETS, registry=batched)
    values = [0.0001, 0.0005, 0.003, 0.003, 0.2, 7.0, 42.0]
    for value in values:
        one.labels("x").observe(value)
    counts = [0] * (len(LATENCY_BUCKETS) + 1)
    for value in values:
        counts[next((i for i, b in enumerate(LATENCY_BUCKETS) if value <= b), len(LATENCY_BUCKETS))] += 1
    histogram_add(two.labels("x"), counts, sum(values))
    strip = [line for line in generate_latest(observed).splitlines() if b"_created" not in line]
    assert strip == [line for line in generate_latest(batched).splitlines() if b"_created" not in line]


def test_the_endpoint_is_off_without_a_token_and_refuses_a_wrong_one(client: Any, settings: Any) -> None:
    assert scrape(client).status_code == 404
    configure(settings, metrics_token=TOKEN)
    refused = scrape(client, token="guess")
    assert refused.status_code == 401 and refused["WWW-Authenticate"].startswith("Bearer")
    assert scrape(client, token=None).status_code == 401


def test_requests_builds_webhooks_and_releases_are_reported(client: Any, alpha: Namespace, settings: Any) -> None:
    configure(settings, metrics_token=TOKEN)
    before = scrape(client).content.decode()
    start = _value(before, 'evergreen_requests_total{channel="rest",route="api-context",status="200"}')
    for _ in range(3):
        client.get("/t/alpha/api/context?topic=alpha")
    client.get("/t/alpha/api/context?budget=nope")
    text = scrape(client).content.decode()

    assert sample(text, 'evergreen_requests_total{channel="rest",route="api-context",status="200"}') == start + 3
    assert sample(text, 'evergreen_requests_total{channel="rest",route="api-context",status="400"}') >= 1
    assert sample(text, 'evergreen_request_duration_seconds_count{channel="rest",route="api-context"}') >= start + 4
    assert sample(text, 'evergreen_release_builds{status="succeeded"}') >= 1
    assert sample(text, "evergreen_release_build_duration_seconds_count") >= 1
    assert sample(text, 'evergreen_active_release{namespace="alpha"}') == 1
    assert sample(text, 'evergreen_webhook_endpoints{state="active"}') == 0
    assert 'evergreen_response_cache_total{result="miss"}' in text


def test_answers_from_memory_are_counted_apart(
    alpha: Namespace, django_app: CountingDjango, no_rate_limit: None
) -> None:
    app = ReplayApp(django_app, remembered=ReplayMemory())
    tallies.flush()
    memory = {"route": "llms-txt"}
    answered = {"route": "llms-txt", "channel": "rest", "status": "200"}
    start = REGISTRY.get_sample_value("evergreen_served_from_memory_total", memory) or 0.0
    all_start = REGISTRY.get_sample_value("evergreen_requests_total", answered) or 0.0
    for _ in range(4):
        call(app, "/t/alpha/llms.txt")
    tallies.flush()
    assert django_app.calls == 1
    assert REGISTRY.get_sample_value("evergreen_served_from_memory_total", memory) == start + 3
    assert REGISTRY.get_sample_value("evergreen_requests_total", answered) == all_start + 4


def _value(text: str, line_start: str) -> float:
    try:
        return sample(text, line_start)
    except AssertionError:
        return 0.0


def test_the_dashboard_and_alert_rules_use_only_metrics_that_exist(
    client: Any, alpha: Namespace, settings: Any
) -> None:
    import re
    from pathlib import Path

    configure(settings, metrics_token=TOKEN)
    client.get("/t/alpha/api/context?topic=alpha")
    suffixes = ("_total", "_bucket", "_count", "_sum")

    def family(name: str) -> str:
        return next((name.removesuffix(s) for s in suffixes if name.endswith(s)), name)

    typed = re.findall(r"^# TYPE (\w+) ", scrape(client).content.decode(), re.MULTILINE)
    exposed = {family(name) for name in typed}
    docs = Path(__file__).resolve().parents[2] / "docs"
    used = set()
    for name in ("grafana/evergreen-dashboard.json", "prometheus/alerts.yml"):
        used |= set(re.findall(r"\b(evergreen_[a-z_]+)", (docs / name).read_text()))
    families = {family(name) for name in used}
    assert families <= exposed, families - exposed
