"""Citation accuracy over time: verified answers per namespace and week."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.db.models import Count, QuerySet, Sum
from django.db.models.functions import TruncWeek

from knowledge.models import CitationCheck

WEEKS_SHOWN = 12


@dataclass(frozen=True, slots=True)
class AccuracyWeek:
    namespace: str
    week: date
    checks: int
    citations: int
    valid: int

    @property
    def accuracy(self) -> float | None:
        return self.valid / self.citations if self.citations else None


def citation_accuracy_by_week(*, checks: QuerySet[CitationCheck], weeks: int = WEEKS_SHOWN) -> list[AccuracyWeek]:
    """The latest `weeks` weeks of the given checks, newest first, one row per namespace and week."""
    rows = (
        checks.annotate(week=TruncWeek("at"))
        .values("namespace__slug", "week")
        .annotate(n=Count("id"), cited=Sum("citations"), held=Sum("valid"))
        .order_by("-week", "namespace__slug")
    )
    result = [
        AccuracyWeek(
            row["namespace__slug"],
            row["week"].date() if hasattr(row["week"], "date") else row["week"],
            row["n"],
            row["cited"] or 0,
            row["held"] or 0,
        )
        for row in rows
    ]
    newest = sorted({row.week for row in result}, reverse=True)[:weeks]
    return [row for row in result if row.week in newest]
