"""Each person's admin home: their drafts, what awaits their review, what was rejected, what is stale or due,
open feedback and the quality trend, read in a bounded number of queries whatever the namespace's size."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Window
from django.utils import timezone

from knowledge.models import (
    Entry,
    EntryVersion,
    EvaluationRun,
    Feedback,
    Role,
    SynonymVersion,
    TextVersion,
    VersionState,
)
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
    """The first rows and how many there are, in one query (the count is a window over the whole result)."""
    rows = list(queryset.annotate(panel_total=Window(Count("pk")))[:SHOWN])
    return Panel(rows=rows, total=rows[0].panel_total if rows else 0)


def _merged(entries: Panel, others: list[Any], order: str) -> Panel:
    """Entry versions' panel with the texts' and synonym sets' versions that belong in it, ordered by `order`."""
    field_name, newest_first = order.lstrip("-"), order.startswith("-")
    rows = [*entries.rows, *others]
    rows.sort(key=lambda row: getattr(row, field_name) or timezone.now(), reverse=newest_first)
    return Panel(rows=rows[:SHOWN], total=entries.total + len(others))


def _scoped(queryset: QuerySet[Any], roles: NamespaceRoles, path: str, role: str | None) -> QuerySet[Any]:
    return queryset if roles.is_superuser else queryset.filter(**{f"{path}__in": roles.namespace_ids(role)})


def _versions() -> QuerySet[EntryVersion]:
    return EntryVersion.objects.select_related("entry__namespace", "author", "reviewer")


def _texts_and_sets(user: Any, roles: NamespaceRoles, since: Any) -> list[Any]:
    """Open versions of reviewed texts and synonym sets in the person's namespaces, and their own recent
    rejections: one query per kind. A namespace has a handful of texts and sets, each with at most one open
    version, so these are read whole; `contributed` says whether the person wrote or edited one (four eyes)."""
    wanted = Q(state__in=OPEN_STATES) | Q(author=user, state=VersionState.REJECTED, reviewed_at__gte=since)
    found: list[Any] = []
    kinds: tuple[tuple[type[Any], str], ...] = ((TextVersion, "text"), (SynonymVersion, "synonym_set"))
    for model, subject in kinds:
        queryset: QuerySet[Any] = model.objects.filter(wanted).select_related(
            f"{subject}__namespace", "author", "reviewer"
        )
        queryset = _scoped(queryset, roles, f"{subject}__namespace", None)
        if model is TextVersion:
            through = TextVersion.contributors.through.objects.filter(textversion=OuterRef("pk"), user_id=user.pk)
            queryset = queryset.annotate(contributed=Exists(through))
        for version in queryset:
            version.namespace = getattr(version, subject).namespace
            found.append(version)
    return found


def _reviewable(version: Any, user: Any, roles: NamespaceRoles, state: str) -> bool:
    if version.state != state or not roles.has(version.namespace.pk, Role.REVIEWER):
        return False
    wrote = version.author_id == user.pk or getattr(version, "contributed", False)
    return version.namespace.allow_self_approval or not wrote


def texts_and_sets_awaiting(*, user: Any, roles: NamespaceRoles) -> list[Any]:
    """Reviewed texts' and synonym sets' versions in review that this person may approve, oldest first."""
    since = timezone.now() - REJECTED_WITHIN
    waiting = [v for v in _texts_and_sets(user, roles, since) if _reviewable(v, user, roles, VersionState.IN_REVIEW)]
    return sorted(waiting, key=lambda version: version.submitted_at or timezone.now())


def dashboard_get(*, user: Any, roles: NamespaceRoles, today: date | None = None) -> Dashboard:
    """The panels this person's roles call for: editors' panels to editors, reviewers' to reviewers.

    Version panels hold entry versions, reviewed texts (prompt packs, doc pages, the profile) and synonym
    sets alike, in a fixed number of queries whatever the number of entries.
    """
    today = today or timezone.localdate()
    board = Dashboard()
    editor, reviewer = roles.anywhere(Role.EDITOR), roles.anywhere(Role.REVIEWER)
    since = timezone.now() - REJECTED_WITHIN
    others = _texts_and_sets(user, roles, since) if editor or reviewer else []
    ns = "entry__namespace"
    if editor:
        mine = _versions().filter(author=user)
        own = [v for v in others if v.author_id == user.pk and roles.has(v.namespace.pk, Role.EDITOR)]
        board.my_drafts = _merged(
            _panel(mine.filter(state__in=OPEN_STATES).order_by("-modified_at")),
            [v for v in own if v.state in OPEN_STATES],
            "-modified_at",
        )
        board.rejected = _merged(
            _panel(mine.filter(state=VersionState.REJECTED, reviewed_at__gte=since).order_by("-reviewed_at")),
            [v for v in own if v.state == VersionState.REJECTED],
            "-reviewed_at",
        )
    if reviewer:
        waiting = _scoped(_versions().filter(state=VersionState.IN_REVIEW), roles, ns, Role.REVIEWER)
        wrote = Q(author=user) | Q(contributors=user)
        theirs = waiting.filter(wrote, entry__namespace__allow_self_approval=False).values("pk")
        board.awaiting_review = _merged(
            _panel(waiting.exclude(pk__in=theirs).order_by("submitted_at")),
            [v for v in others if _reviewable(v, user, roles, VersionState.IN_REVIEW)],
            "submitted_at",
        )
        approved = _scoped(
            _versions().filter(state=VersionState.APPROVED, publish_at__isnull=True), roles, ns, Role.REVIEWER
        )
        board.to_publish = _merged(
            _panel(approved.order_by("reviewed_at")),
            [v for v in others if v.state == VersionState.APPROVED and roles.has(v.namespace.pk, Role.REVIEWER)],
            "reviewed_at",
        )
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
