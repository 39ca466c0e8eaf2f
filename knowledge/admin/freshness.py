"""The “due for re-review” queue (issue 12 §6): live entries past review-by (stale) or valid-until (out of packs)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from knowledge.admin.base import NamespaceScopedAdmin, namespace_action
from knowledge.errors import ServiceError
from knowledge.models import DueItem, EntryVersion, Role, VersionState
from knowledge.services.versions import version_draft_for_entry

STALE = "stale since {date}"
EXPIRED = "out of the packs since {date}"


@admin.register(DueItem)
class DueForReviewAdmin(NamespaceScopedAdmin):
    """Live versions whose review-by or valid-until date has passed, oldest first; a re-review is a new
    version through the usual review (and its approval sets a new review-by date)."""

    namespace_path = "entry__namespace"
    list_display = ["version_label", "title", "namespace", "why", "reviewer", "reviewed_at", "open"]
    list_filter = ["entry__namespace", "sensitivity"]
    search_fields = ["entry__public_id", "title"]
    actions = ["start_rereview"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        today = timezone.localdate()
        due = super().get_queryset(request).filter(state=VersionState.PUBLISHED, entry__retired_at__isnull=True)
        due = due.filter(review_by__lt=today) | due.filter(valid_until__lt=today)
        return due.select_related("entry__namespace", "reviewer").order_by("review_by", "valid_until", "pk")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="Version", ordering="entry__number")
    def version_label(self, obj: EntryVersion) -> str:
        return f"{obj.entry.public_id} v{obj.number}"

    @admin.display(description="Namespace")
    def namespace(self, obj: EntryVersion) -> str:
        return obj.entry.namespace.slug

    @admin.display(description="Why")
    def why(self, obj: EntryVersion) -> str:
        today = timezone.localdate()
        reasons = []
        if obj.valid_until is not None and obj.valid_until < today:
            reasons.append(EXPIRED.format(date=obj.valid_until.isoformat()))
        if obj.review_by is not None and obj.review_by < today:
            reasons.append(STALE.format(date=obj.review_by.isoformat()))
        return "; ".join(reasons)

    @admin.display(description="")
    def open(self, obj: EntryVersion) -> str:
        url = reverse("admin:knowledge_entry_change", args=[obj.entry_id])
        return format_html('<a href="{}">Open {}</a>', url, obj.entry.public_id)

    @namespace_action(role=Role.EDITOR, description="Start a re-review: open a draft of each selected entry")
    def start_rereview(self, request: HttpRequest, queryset: QuerySet[EntryVersion]) -> None:
        opened = 0
        for version in queryset.select_related("entry"):
            try:
                version_draft_for_entry(entry=version.entry, actor=request.user)
            except ServiceError as error:
                messages.error(request, f"{version.entry.public_id}: {error}")
                continue
            opened += 1
        if opened:
            messages.success(request, f"Opened {opened} draft(s); submit them for review when checked.")
