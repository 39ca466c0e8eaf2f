"""Each person's admin home: their drafts, what awaits their review, what was rejected, what is stale or due,
open feedback and the quality trend, read in a bounded number of queries whatever the namespace's size."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from knowledge.models import Entry, EntryVersion, EvaluationRun, Feedback, Role, VersionState
from knowledge.models.entry import OPEN_STATES
from knowledge.retrieval.authoring import STALE_AFTER
from knowledge.selectors.permissions import NamespaceRoles

SHOWN = 8  # rows per panel; each panel links its full list
REJECTED_WITHIN = timedelta(days=30)
TREND_RUNS = 12


@dataclass
class Panel:
    rows: list[Any]
    total: int


@dataclass
class Dashboard:
    my_drafts: Panel | None = None
    awaiting_review: Panel | None = None
    to_publish: Panel | None = None
    rejected: Panel | None = None
    stale: Panel | None = None
    scheduled: Panel | None = None
    feedback: Panel | None = None
    trend: list[EvaluationRun] = field(default_factory=list)


def _panel(queryset: QuerySet[Any]) -> Panel:
    rows = list(queryset[:SHOWN])
    total = len(rows) if len(rows) < SHOWN else queryset.count()
    return Panel(rows=rows, total=total)


def _scoped(queryset: QuerySet[Any], roles: NamespaceRoles, path: str, role: str | None) -> QuerySet[Any]:
    return queryset if roles.is_superuser else queryset.filter(**{f"{path}__in": roles.namespace_ids(role)})


def _versions() -> QuerySet[EntryVersion]:
    return EntryVersion.objects.select_related("entry__namespace", "author", "reviewer")


def dashboard_get(*, user: Any, roles: NamespaceRoles, today: date | None = None) -> Dashboard:
    """The panels this person's roles call for: editors' panels to editors, reviewers' to reviewers."""
    today = today or timezone.localdate()
    board = Dashboard()
    editor, reviewer = roles.anywhere(Role.EDITOR), roles.anywhere(Role.REVIEWER)
    ns = "entry__namespace"
    if editor:
        mine = _versions().filter(author=user)
        board.my_drafts = _panel(mine.filter(state__in=OPEN_STATES).order_by("-modified_at"))
        since = timezone.now() - REJECTED_WITHIN
        board.rejected = _panel(
            mine.filter(state=VersionState.REJECTED, reviewed_at__gte=since).order_by("-reviewed_at")
        )
    if reviewer:
        waiting = _scoped(_versions().filter(state=VersionState.IN_REVIEW), roles, ns, Role.REVIEWER)
        waiting = waiting.filter(~Q(author=user) | Q(entry__namespace__allow_self_approval=True))
        board.awaiting_review = _panel(waiting.order_by("submitted_at"))
        approved = _scoped(
            _versions().filter(state=VersionState.APPROVED, publish_at__isnull=True), roles, ns, Role.REVIEWER
        )
        board.to_publish = _panel(approved.order_by("reviewed_at"))
        scheduled = _scoped(_versions().filter(state=VersionState.APPROVED, publish_at__isnull=False), roles, ns, None)
        board.scheduled = _panel(scheduled.order_by("publish_at"))
    stale = Entry.objects.filter(retired_at__isnull=True, live_version__updated__lt=today - STALE_AFTER)
    board.stale = _panel(
        _scoped(stale, roles, "namespace", None)
        .select_related("live_version", "namespace")
        .order_by("live_version__updated")
    )
    feedback = _scoped(Feedback.objects.filter(status=Feedback.Status.OPEN), roles, "namespace", None)
    board.feedback = _panel(feedback.select_related("namespace").order_by("-created_at"))
    runs = _scoped(EvaluationRun.objects.filter(~Q(metrics={})), roles, "namespace", None)
    board.trend = list(
        reversed(runs.select_related("release", "namespace").order_by("-created_at", "-id")[:TREND_RUNS])
    )
    return board
