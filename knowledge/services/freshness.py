"""Freshness (issue 12 §6): entries past their review-by date turn stale, past valid-until they leave the packs.

Both are properties of a release (its revision date decides them), so a day on which some live entry
crosses either date needs a new release: the sweep (Celery beat, hourly) queues one build per such
namespace. The snapshot records the entries due on its date, so the rebuilt release differs from the
one it replaces even though no content changed.
"""

from __future__ import annotations

from datetime import date

from django.db.models import Q
from django.utils import timezone

from knowledge.models import Entry, Namespace
from knowledge.services.build_queue import release_request_build


def due_filter(today: date) -> Q:
    """Published entries due for re-review or past their valid-until date (on the live version)."""
    return Q(live_version__review_by__lt=today) | Q(live_version__valid_until__lt=today)


def freshness_sweep(*, today: date | None = None) -> int:
    """Queue a build for every namespace whose active release predates an entry turning stale or expiring.

    One query per namespace: live versions whose date falls on or after the release's revision and
    before today. Returns how many builds were requested. Running it twice queues nothing new (the
    builds coalesce, and a built release carries today's revision).
    """
    today = today or timezone.localdate()
    requested = 0
    namespaces = Namespace.objects.filter(active_release__isnull=False).select_related("active_release")
    for namespace in namespaces:
        revision = namespace.active_release.revision  # type: ignore[union-attr]  # filtered above
        crossed = Q(live_version__review_by__gte=revision, live_version__review_by__lt=today) | Q(
            live_version__valid_until__gte=revision, live_version__valid_until__lt=today
        )
        live = Entry.objects.filter(namespace=namespace, retired_at__isnull=True)
        if live.filter(crossed).exists():
            release_request_build(namespace=namespace, reason="freshness")
            requested += 1
    return requested
