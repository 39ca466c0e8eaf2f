"""Admin for the release history, builds and the audit trail; rollback is one action."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from knowledge.admin.base import ReadOnlyAdmin
from knowledge.admin.content import evaluate_and_report
from knowledge.errors import ServiceError
from knowledge.models import Artifact, AuditRecord, Release, ReleaseBuild, Role
from knowledge.selectors.evaluation import golden_questions_list
from knowledge.services.releases import release_rollback


class ArtifactInline(admin.TabularInline):
    model = Artifact
    fields = readonly_fields = ("name", "content_type", "size", "etag")
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Release)
class ReleaseAdmin(ReadOnlyAdmin):
    list_display = [
        "sequence",
        "namespace",
        "knowledge_version",
        "revision",
        "entry_count",
        "total_tokens",
        "built_at",
        "build_seconds",
        "is_active",
    ]
    list_filter = ["namespace"]
    readonly_fields = [
        "namespace",
        "sequence",
        "knowledge_version",
        "revision",
        "entry_count",
        "total_tokens",
        "built_at",
        "build_seconds",
        "inputs_hash",
        "content_serial",
        "manifest",
    ]
    inlines = [ArtifactInline]
    actions = ["rollback", "evaluate_golden_questions"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Release]:
        return super().get_queryset(request).select_related("namespace")

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Needed for actions to show; the form itself has only read-only fields.
        return self._namespaces(request, Role.REVIEWER).exists()

    @admin.display(boolean=True, description="Active")
    def is_active(self, obj: Release) -> bool:
        return obj.namespace.active_release_id == obj.pk

    @admin.action(description="Roll back to the selected release")
    def rollback(self, request: HttpRequest, queryset: QuerySet[Release]) -> None:
        if queryset.count() != 1:
            messages.error(request, "Select exactly one release to roll back to.")
            return
        release = queryset.get()
        try:
            release_rollback(namespace=release.namespace, release=release, actor=request.user)
        except ServiceError as error:
            messages.error(request, str(error))
            return
        messages.success(
            request,
            f"{release.namespace.slug} now serves release #{release.sequence} (v{release.knowledge_version}). "
            "The next publish builds a new release from the current published versions.",
        )

    @admin.action(description="Evaluate golden questions against this release", permissions=["change"])
    def evaluate_golden_questions(self, request: HttpRequest, queryset: QuerySet[Release]) -> None:
        """A candidate or older release answers the namespace's golden questions as it would serve them."""
        for release in queryset.select_related("namespace"):
            questions = golden_questions_list(namespace=release.namespace)
            evaluate_and_report(request, namespace=release.namespace, release=release, questions=questions)


@admin.register(ReleaseBuild)
class ReleaseBuildAdmin(ReadOnlyAdmin):
    list_display = ["pk", "namespace", "status", "release", "started_at", "finished_at"]
    list_filter = ["namespace", "status"]
    readonly_fields = ["namespace", "status", "release", "task_id", "started_at", "finished_at", "error"]


@admin.register(AuditRecord)
class AuditRecordAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "namespace", "actor", "action", "entry", "version", "from_state", "to_state", "note"]
    list_filter = ["namespace", "action"]
    search_fields = ["entry__public_id", "note"]
    readonly_fields = [
        "created_at",
        "namespace",
        "actor",
        "action",
        "entry",
        "version",
        "release",
        "from_state",
        "to_state",
        "note",
    ]
