"""Admin for the release history, builds and the audit trail; rollback is one action, and a release the
golden questions held is activated from its own page with a reason."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.safestring import SafeString

from knowledge.admin.base import NamespaceScopedInline, ReadOnlyAdmin, namespace_action
from knowledge.admin.content import evaluate_and_report
from knowledge.admin.gate import gate_html
from knowledge.errors import ServiceError
from knowledge.models import Artifact, AuditRecord, BuildRequest, GateStatus, Release, ReleaseBuild, ReleaseGate, Role
from knowledge.retrieval.calibration import matching_summary
from knowledge.selectors.evaluation import golden_questions_list
from knowledge.services.build_queue import MAX_ATTEMPTS
from knowledge.services.gate_override import release_gate_override
from knowledge.services.rollback import release_rollback


class ActivateForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Why the regressions are acceptable; kept in the audit trail and on the release.",
    )


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
        "gate_status",
    ]
    list_filter = ["namespace", "gate__status"]
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
        "golden_questions",
        "manifest_json",
    ]
    inlines = [ArtifactInline]
    actions = ["rollback", "evaluate_golden_questions"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Release]:
        return super().get_queryset(request).select_related("namespace", "gate__compared_with", "gate__decided_by")

    @admin.display(description="Manifest")
    def manifest_json(self, obj: Release) -> str:
        """The whole manifest as JSON, as the admin showed the field before it could be stored as a delta."""
        return json.dumps(obj.manifest, ensure_ascii=False)

    @admin.display(description="Match threshold")
    def matching(self, obj: Release) -> str:
        """The threshold `matched` is decided on in this release, and how the build obtained it."""
        return matching_summary((obj.metrics or {}).get("matching"))

    @admin.display(boolean=True, description="Active")
    def is_active(self, obj: Release) -> bool:
        return obj.namespace.active_release_id == obj.pk

    @admin.display(description="Golden questions", ordering="gate__status")
    def gate_status(self, obj: Release) -> str:
        gate = _gate(obj)
        return gate.status if gate else "—"

    @admin.display(description="Golden questions before and after")
    def golden_questions(self, obj: Release) -> SafeString:
        return gate_html(_gate(obj))

    def get_urls(self) -> list[Any]:
        view = self.admin_site.admin_view(self.activate_view)
        return [path("<int:pk>/activate/", view, name="knowledge_release_activate"), *super().get_urls()]

    def render_change_form(self, request: HttpRequest, context: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        obj = kwargs.get("obj")
        if obj is not None:
            gate = _gate(obj)
            held = gate is not None and gate.status == GateStatus.HELD
            context["can_activate"] = held and self.may(request, obj, Role.REVIEWER)
        return super().render_change_form(request, context, *args, **kwargs)

    def activate_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """A held release, its golden questions before and after, and the reason to serve it anyway."""
        release = get_object_or_404(self.get_queryset(request), pk=pk)
        self.require(request, release, Role.REVIEWER)
        form = ActivateForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                release_gate_override(release=release, actor=request.user, reason=form.cleaned_data["reason"])
            except ServiceError as error:
                form.add_error(None, str(error))
            else:
                messages.success(request, f"{release.namespace.slug} now serves release #{release.sequence}.")
                return HttpResponseRedirect(reverse("admin:knowledge_release_change", args=[release.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "release": release,
            "report": gate_html(_gate(release)),
            "form": form,
            "title": f"Activate held release #{release.sequence} of {release.namespace.slug}",
        }
        return TemplateResponse(request, "admin/knowledge/release/activate.html", context)

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


def _gate(release: Release) -> ReleaseGate | None:
    try:
        return release.gate
    except ReleaseGate.DoesNotExist:
        return None


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
