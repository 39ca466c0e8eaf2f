"""Admin for namespace content beside entries: docs, prompt packs, golden questions, feedback."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from knowledge.admin.base import NamespaceScopedAdmin
from knowledge.models import DocPage, EvaluationRun, Feedback, GoldenQuestion, PromptPack
from knowledge.services.releases import release_request_build


class ReleasedContentAdmin(NamespaceScopedAdmin):
    """Content that ships inside releases: saving it queues a build."""

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        release_request_build(namespace=obj.namespace)


@admin.register(DocPage)
class DocPageAdmin(ReleasedContentAdmin):
    list_display = ["slug", "title", "namespace", "position", "updated_at"]
    list_filter = ["namespace"]
    search_fields = ["slug", "title"]


@admin.register(PromptPack)
class PromptPackAdmin(ReleasedContentAdmin):
    list_display = ["scenario", "namespace", "updated_at"]
    list_filter = ["namespace"]


@admin.register(GoldenQuestion)
class GoldenQuestionAdmin(NamespaceScopedAdmin):
    list_display = ["key", "text", "namespace", "expected", "split"]
    list_filter = ["namespace", "split"]
    search_fields = ["key", "text"]

    @admin.display(description="Expected")
    def expected(self, obj: GoldenQuestion) -> str:
        return ", ".join(obj.relevant) if obj.relevant else "not covered"


@admin.register(EvaluationRun)
class EvaluationRunAdmin(NamespaceScopedAdmin):
    list_display = ["created_at", "namespace", "release", "summary"]
    list_filter = ["namespace"]
    readonly_fields = ["namespace", "release", "metrics", "results", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="Metrics")
    def summary(self, obj: EvaluationRun) -> str:
        return ", ".join(f"{k} {v}" for k, v in obj.metrics.items() if isinstance(v, int | float))


@admin.register(Feedback)
class FeedbackAdmin(NamespaceScopedAdmin):
    """Agent feedback waits here for an editor; its text is untrusted and shown escaped."""

    list_display = ["created_at", "namespace", "kind", "entry_public_id", "short_message", "source", "status"]
    list_filter = ["namespace", "status", "kind"]
    readonly_fields = ["namespace", "entry_public_id", "query", "kind", "message", "source", "created_at"]
    fields = [*readonly_fields, "status"]
    actions = ["mark_done", "mark_dismissed"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="Message")
    def short_message(self, obj: Feedback) -> str:
        return obj.message[:80]

    @admin.action(description="Mark as handled")
    def mark_done(self, request: HttpRequest, queryset: QuerySet[Feedback]) -> None:
        queryset.update(status=Feedback.Status.DONE)

    @admin.action(description="Dismiss")
    def mark_dismissed(self, request: HttpRequest, queryset: QuerySet[Feedback]) -> None:
        queryset.update(status=Feedback.Status.DISMISSED)
