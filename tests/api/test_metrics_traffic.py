"""/metrics.html charts the request log: requests and topics not covered, per day, once requests are recorded."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from knowledge.models import Namespace, RequestLog
from knowledge.selectors.traffic import traffic_by_day

pytestmark = pytest.mark.django_db


def logged(namespace: Namespace, days_ago: int, *, matched: bool) -> None:
    assert namespace.active_release is not None
    RequestLog.objects.create(
        namespace=namespace,
        release=namespace.active_release,
        at=timezone.now() - timedelta(days=days_ago),
        channel="rest",
        route="context",
        topic="budgets",
        matched=matched,
    )


def test_without_recorded_requests_there_is_no_traffic_chart(client: Any, alpha: Namespace) -> None:
    assert 'id="traffic"' not in client.get("/t/alpha/metrics.html").content.decode()


def test_requests_and_uncovered_topics_per_day(client: Any, alpha: Namespace) -> None:
    logged(alpha, 0, matched=True)
    logged(alpha, 0, matched=False)
    logged(alpha, 2, matched=True)
    logged(alpha, 40, matched=False)  # outside the 30 days shown

    traffic = traffic_by_day(namespace_id=alpha.pk)
    assert len(traffic.days) == 30 and traffic.days[-1] == timezone.localdate()
    assert (traffic.requests[-1], traffic.uncovered[-1]) == (2, 1)
    assert (traffic.requests[-3], traffic.uncovered[-3]) == (1, 0)
    assert sum(traffic.requests) == 3

    page = client.get("/t/alpha/metrics.html").content.decode()
    assert '<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="traffic"' in page
    assert "3 requests over 30 days, 1 not covered." in page
