"""Requests per day and how many were about something the knowledge does not cover, from the request log."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import Count, Q
from django.db.models.functions import TruncDate
from django.utils import timezone

from knowledge.models import RequestLog

TRAFFIC_DAYS = 30


@dataclass(frozen=True, slots=True)
class DailyTraffic:
    days: tuple[date, ...]
    requests: tuple[int, ...]
    uncovered: tuple[int, ...]  # answered matched=false: nothing in the knowledge covers the topic

    @property
    def recorded(self) -> bool:
        return any(self.requests)


def traffic_by_day(*, namespace_id: int, days: int = TRAFFIC_DAYS, today: date | None = None) -> DailyTraffic:
    """The last `days` days, today included, with zero for days without requests (one query on the log's index)."""
    last = today or timezone.localdate()
    first = last - timedelta(days=days - 1)
    start = timezone.make_aware(datetime.combine(first, time.min))
    rows = (
        RequestLog.objects.filter(namespace_id=namespace_id, at__gte=start)
        .annotate(day=TruncDate("at"))
        .values("day")
        .annotate(total=Count("id"), uncovered=Count("id", filter=Q(matched=False)))
        .order_by("day")
    )
    counted = {row["day"]: (row["total"], row["uncovered"]) for row in rows}
    span = tuple(first + timedelta(days=n) for n in range(days))
    return DailyTraffic(
        days=span,
        requests=tuple(counted.get(day, (0, 0))[0] for day in span),
        uncovered=tuple(counted.get(day, (0, 0))[1] for day in span),
    )
