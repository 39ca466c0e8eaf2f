"""Admin for versions: edit drafts, compare with the live version, move them through review."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from knowledge.admin.finding import finding_html
from knowledge.admin.findings import findings_html
from knowledge.admin.forms import CONTENT_FIELDS, VersionForm
from knowledge.admin.preview import diff_table, preview_html, warnings_html
from knowledge.admin.roles import request_roles
from knowledge.admin.workflow import ReviewWorkflowAdmin
from knowledge.models import EntryVersion, Feedback, Role, VersionState
from knowledge.models.review import ReviewItem
from knowledge.services.versions import (
    ACTION_ROLES,
    version_approve,
    version_publish,
    version_reject,
    version_save,
    version_submit,
    version_withdraw,
)

ACTIONS: dict[str, Callable[..., EntryVersion]] = {
    "submit": version_submit,
    "approve": version_approve,
    "reject": version_reject,
    "publish": version_publish,
    "withdraw": version_withdraw,
}
FEEDBACK_SHOWN = 20


class VersionAdminBase(ReviewWorkflowAdmin):
    namespace_path = "entry__namespace"
    list_display = ["version_label", "title", "state", "author", "reviewer", "tokens", "confidence", "modified_at"]
    list_select_related = ["entry", "author", "reviewer"]
    search_fields = ["entry__public_id", "title"]
    transitions = ACTIONS
    action_roles = ACTION_ROLES
    schedulable = True

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # Selecting related rows here replaces list_select_related, so name them all.
        return super().get_queryset(request).select_related("entry__namespace", "author", "reviewer")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a version starts from its entry: "Add entry" or "Edit" on an entry

    @admin.display(description="Version", ordering="entry__number")
    def version_label(self, obj: EntryVersion) -> str:
        return f"{obj.entry.public_id} v{obj.number}"

    def _bulk(self, request: HttpRequest, queryset: QuerySet[Any], action: str) -> None:
        super()._bulk(request, queryset.select_related("entry"), action)


@admin.register(EntryVersion)
class EntryVersionAdmin(VersionAdminBase):
    form = VersionForm
    transition_page = True
    list_filter = ["state", "entry__namespace"]
    readonly_fields = [
        "entry_link",
        "number",
        "state",
        "author",
        "reviewer",
        "review_note",
        "publish_at",
        "tokens",
        "content_hash",
        "warnings",
        "diff",
        "preview",
        "finding",
        "safety",
        "created_at",
        "modified_at",
    ]

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        editable = [*CONTENT_FIELDS, "based_on"]
        content = editable if self._is_editable(request, obj) else [f for f in editable if f != "based_on"]
        return [
            (None, {"fields": ["entry_link", "number", "state", "tokens"]}),
            ("Authoring warnings", {"fields": ["warnings"]}),
            ("Content", {"fields": content}),
            ("Compared with the live version", {"fields": ["diff"]}),
            ("Safety scan", {"fields": ["safety"]}),
            ("How agents will see it", {"fields": ["preview", "finding"]}),
            ("Review", {"fields": ["author", "reviewer", "review_note", "publish_at", "content_hash"]}),
        ]

    def _is_editable(self, request: HttpRequest, obj: EntryVersion | None) -> bool:
        return (
            obj is not None
            and obj.state == VersionState.DRAFT
            and obj.entry.retired_at is None
            and self.may(request, obj, Role.EDITOR)
        )

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if self._is_editable(request, obj):
            return self.readonly_fields
        return [*self.readonly_fields, *CONTENT_FIELDS]

    def save_model(self, request: HttpRequest, obj: EntryVersion, form: Any, change: bool) -> None:
        saved = version_save(
            version=obj,
            content=form.version_content(),
            expected_lock_version=form.cleaned_data["based_on"],
            actor=request.user,
        )
        obj.lock_version = saved.lock_version

    def entry_link(self, obj: EntryVersion) -> str:
        url = reverse("admin:knowledge_entry_change", args=[obj.entry_id])
        return format_html('<a href="{}">{}</a> ({})', url, obj.entry.public_id, obj.entry.namespace.slug)

    entry_link.short_description = "Entry"  # type: ignore[attr-defined]

    @admin.display(description="Warnings")
    def warnings(self, obj: EntryVersion) -> str:
        return warnings_html(obj)

    @admin.display(description="Diff")
    def diff(self, obj: EntryVersion) -> str:
        return diff_table(obj)

    @admin.display(description="Preview")
    def preview(self, obj: EntryVersion) -> str:
        return preview_html(obj)

    @admin.display(description="Findings")
    def safety(self, obj: EntryVersion) -> str:
        return findings_html(obj, obj.entry.namespace)

    @admin.display(description="Found by its title?")
    def finding(self, obj: EntryVersion) -> str:
        return finding_html(obj)


class AwaitingMeFilter(admin.SimpleListFilter):
    title = "queue"
    parameter_name = "queue"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("all", "Including my own versions")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "all":
            return queryset
        own = Q(author=request.user) | Q(contributors=request.user)
        mine = queryset.filter(own, entry__namespace__allow_self_approval=False).values("pk")
        return queryset.exclude(pk__in=mine)


@admin.register(ReviewItem)
class ReviewQueueAdmin(VersionAdminBase):
    """“Awaiting your review”: versions in review in the namespaces you review, not your own."""

    view_role = Role.REVIEWER
    list_display = ["version_label", "title", "namespace", "author", "submitted_at", "tokens", "confidence", "open"]
    list_filter = [AwaitingMeFilter, "entry__namespace"]
    actions = ["bulk_approve"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return (
            super()
            .get_queryset(request)
            .filter(state=VersionState.IN_REVIEW)
            .select_related("entry__namespace", "author")
            .order_by("submitted_at")
        )

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        """The queue also shows open agent feedback: reports wait here for a person, never act alone."""
        feedback = Feedback.objects.filter(status=Feedback.Status.OPEN)
        roles = request_roles(request)
        if not roles.is_superuser:
            feedback = feedback.filter(namespace__in=roles.namespace_ids(Role.REVIEWER))
        context = {
            **(extra_context or {}),
            "open_feedback": feedback.select_related("namespace")[:FEEDBACK_SHOWN],
            "open_feedback_count": feedback.count(),
        }
        return super().changelist_view(request, extra_context=context)

    @admin.display(description="Namespace")
    def namespace(self, obj: EntryVersion) -> str:
        return obj.entry.namespace.slug

    @admin.display(description="")
    def open(self, obj: EntryVersion) -> str:
        url = reverse("admin:knowledge_entryversion_change", args=[obj.pk])
        waited = timezone.now() - (obj.submitted_at or obj.modified_at)
        return format_html('<a href="{}">Review (waiting {}h)</a>', url, int(waited.total_seconds() // 3600))
