"""Admin for the release history, builds and the audit trail; rollback is one action."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from knowledge.admin.base import NamespaceScopedInline, ReadOnlyAdmin, namespace_action
from knowledge.admin.content import evaluate_and_report
from knowledge.errors import ServiceError
from knowledge.models import Artifact, AuditRecord, BuildRequest, Release, ReleaseBuild, Role
from knowledge.retrieval.calibration import matching_summary
from knowledge.selectors.evaluation import golden_questions_list
from knowledge.services.build_queue import MAX_ATTEMPTS
from knowledge.services.rollback import release_rollback


class ArtifactInline(NamespaceScopedInline, admin.TabularInline):
    model = Artifact
    fields = readonly_fields = ("name", "content_type", "size", "etag")
    extra = 0
    can_delete = False
    read_only = True


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
        "files_pruned_at",
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
        "matching",
        "inputs_hash",
        "content_serial",
        "files_pruned_at",
        "manifest",
    ]
    inlines = [ArtifactInline]
    actions = ["rollback", "evaluate_golden_questions"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Release]:
        return super().get_queryset(request).select_related("namespace")

    @admin.display(description="Match threshold")
    def matching(self, obj: Release) -> str:
        """The threshold `matched` is decided on in this release, and how the build obtained it."""
        return matching_summary((obj.metrics or {}).get("matching"))

    @admin.display(boolean=True, description="Active")
    def is_active(self, obj: Release) -> bool:
        return obj.namespace.active_release_id == obj.pk

    @namespace_action(role=Role.REVIEWER, description="Roll back to the selected release")
    def rollback(self, request: HttpRequest, queryset: QuerySet[Release]) -> None:
        if queryset.count() != 1:
            messages.error(request, "Select exactly one release to roll back to.")
            return
        release = queryset.get()
        try:
            outcome = release_rollback(namespace=release.namespace, release=release, actor=request.user)
        except ServiceError as error:
            messages.error(request, str(error))
            return
        messages.success(request, f"{release.namespace.slug}: {outcome.describe()}")

    @namespace_action(role=Role.REVIEWER, description="Evaluate golden questions against this release")
    def evaluate_golden_questions(self, request: HttpRequest, queryset: QuerySet[Release]) -> None:
        """A candidate or older release answers the namespace's golden questions as it would serve them."""
        for release in queryset.select_related("namespace"):
            questions = golden_questions_list(namespace=release.namespace)
            evaluate_and_report(request, namespace=release.namespace, release=release, questions=questions)


@admin.register(ReleaseBuild)
class ReleaseBuildAdmin(ReadOnlyAdmin):
    list_display = ["pk", "namespace", "status", "release", "started_at", "finished_at"]
    list_filter = ["namespace", "status"]
    list_select_related = ["namespace", "release__namespace"]
    readonly_fields = ["namespace", "status", "release", "task_id", "started_at", "finished_at", "error"]


@admin.register(BuildRequest)
class BuildRequestAdmin(ReadOnlyAdmin):
    """The build outbox: every change that asked for a release, and whether one was built from it yet."""

    list_display = ["pk", "namespace", "reason", "serial", "state", "created_at", "enqueued_at", "attempts", "release"]
    list_filter = ["namespace", ("built_at", admin.EmptyFieldListFilter), "reason"]
    list_select_related = ["namespace", "release__namespace"]
    readonly_fields = [
        "namespace",
        "reason",
        "serial",
        "state",
        "created_at",
        "enqueued_at",
        "attempts",
        "last_error",
        "built_at",
        "release",
    ]

    @admin.display(description="State")
    def state(self, obj: BuildRequest) -> str:
        if obj.built_at is not None:
            return "built"
        if obj.attempts >= MAX_ATTEMPTS:
            return "stuck: see the failed builds"
        if obj.last_error:
            return "pending: the broker refused it; the reconciler tries again"
        return "pending: queued" if obj.enqueued_at else "pending"


@admin.register(AuditRecord)
class AuditRecordAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "namespace", "actor", "action", "entry", "version", "from_state", "to_state", "note"]
    list_filter = ["namespace", "action"]
    list_select_related = ["namespace", "actor", "entry", "version__entry"]
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
