"""Admin for namespace content beside entries: docs, prompt packs, golden questions, feedback."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from knowledge.admin.base import NamespaceScopedAdmin, ReadOnlyAdmin, ServiceErrorsShown, namespace_action
from knowledge.errors import ServiceError
from knowledge.models import (
    DocPage,
    EvaluationRun,
    Feedback,
    GoldenQuestion,
    Namespace,
    PromptPack,
    Release,
    ReviewedText,
    Role,
    TextKind,
)
from knowledge.retrieval.evaluation import EvalQuestion
from knowledge.selectors.evaluation import ReleasePrunedError, golden_questions_list, release_for_evaluation
from knowledge.services.evaluation import evaluation_run_record, questions_evaluate
from knowledge.services.feedback import feedback_draft_open, feedback_set_status
from knowledge.services.golden_questions import BAD_RELEVANT, golden_relevant_clean

# The metrics an evaluation run shows first, with their labels (EvaluationReport field names).
METRIC_LABELS = (
    ("queries", "Questions"),
    ("covered", "Covered"),
    ("uncovered", "Not covered"),
    ("ndcg_at_10", "nDCG@10"),
    ("mrr_at_10", "MRR@10"),
    ("pack_recall", "Recall in pack"),
    ("hit_rate", "Hit rate (relevant entry packed)"),
    ("matched_when_covered", "Covered answered matched=true"),
    ("unmatched_when_uncovered", "Not covered answered matched=false"),
    ("latency_p50_ms", "Latency p50 (ms)"),
    ("latency_p99_ms", "Latency p99 (ms)"),
    ("budget", "Budget"),
)


def _metric_summary(metrics: dict[str, Any]) -> str:
    parts = [
        f"{label} {metrics[name]}" for name, label in METRIC_LABELS[3:9] if isinstance(metrics.get(name), int | float)
    ]
    return "; ".join(parts)


def evaluate_and_report(
    request: HttpRequest, *, namespace: Namespace, release: Release, questions: Sequence[EvalQuestion]
) -> EvaluationRun | None:
    """Run the questions against the release, store the run and tell the user where to read it."""
    if not questions:
        messages.warning(request, f"{namespace.slug} has no golden questions to evaluate.")
        return None
    try:
        loaded = release_for_evaluation(release=release)
    except ReleasePrunedError as error:
        messages.error(request, str(error))
        return None
    evaluation = questions_evaluate(release=loaded, questions=questions, budget=namespace.default_budget)
    run = evaluation_run_record(namespace=namespace, release=release, evaluation=evaluation)
    url = reverse("admin:knowledge_evaluationrun_change", args=[run.pk])
    messages.success(
        request,
        format_html(
            '{} questions of {} against release #{}: {}. <a href="{}">Per-question results</a>.',
            len(questions),
            namespace.slug,
            release.sequence,
            _metric_summary(run.metrics),
            url,
        ),
    )
    return run


class PublishedTextAdmin(ReadOnlyAdmin):
    """What agents are served of a reviewed text; it changes only by publishing a reviewed version."""

    @admin.display(description="Reviewed text")
    def reviewed_text(self, obj: DocPage | PromptPack) -> SafeString | str:
        kind, key = (TextKind.DOC, obj.slug) if isinstance(obj, DocPage) else (TextKind.PROMPT, obj.scenario)
        text = ReviewedText.objects.filter(namespace_id=obj.namespace_id, kind=kind, key=key).first()
        if text is None:
            return "—"
        url = reverse("admin:knowledge_reviewedtext_change", args=[text.pk])
        return format_html('<a href="{}">{} (edit through review)</a>', url, text)


@admin.register(DocPage)
class DocPageAdmin(PublishedTextAdmin):
    list_display = ["slug", "title", "namespace", "position", "updated_at", "reviewed_text"]
    list_filter = ["namespace"]
    search_fields = ["slug", "title"]


@admin.register(PromptPack)
class PromptPackAdmin(PublishedTextAdmin):
    list_display = ["scenario", "namespace", "updated_at", "reviewed_text"]
    list_filter = ["namespace"]


class GoldenQuestionForm(forms.ModelForm):
    """The expected entries checked as the management API checks them: grades 1 or 2 as numbers, each
    entry once, every ID an entry of the namespace or of a base (knowledge.services.golden_questions)."""

    class Meta:
        model = GoldenQuestion
        fields = ["namespace", "key", "text", "relevant", "split"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or self.cleaned_data
        namespace, relevant = cleaned.get("namespace"), cleaned.get("relevant")
        if namespace is None or relevant is None:
            return cleaned
        if not isinstance(relevant, dict):
            self.add_error("relevant", BAD_RELEVANT)
            return cleaned
        try:
            cleaned["relevant"] = golden_relevant_clean(namespace=namespace, relevant=relevant)
        except ServiceError as error:
            self.add_error("relevant", str(error))
        return cleaned


@admin.register(GoldenQuestion)
class GoldenQuestionAdmin(NamespaceScopedAdmin):
    form = GoldenQuestionForm
    list_display = ["key", "text", "namespace", "expected", "split"]
    list_filter = ["namespace", "split"]
    search_fields = ["key", "text"]
    actions = ["evaluate_active_release"]

    @admin.display(description="Expected")
    def expected(self, obj: GoldenQuestion) -> str:
        return ", ".join(obj.relevant) if obj.relevant else "not covered"

    @namespace_action(role=Role.EDITOR, description="Evaluate against the active release")
    def evaluate_active_release(self, request: HttpRequest, queryset: QuerySet[GoldenQuestion]) -> None:
        """One run per namespace of the selected questions, through /api/context's own path."""
        for namespace_id in sorted(set(queryset.values_list("namespace_id", flat=True))):
            namespace = Namespace.objects.select_related("active_release").get(pk=namespace_id)
            if namespace.active_release is None:
                messages.error(request, f"{namespace.slug} has no active release to evaluate against.")
                continue
            keys = queryset.filter(namespace_id=namespace_id).values_list("key", flat=True)
            questions = golden_questions_list(namespace=namespace, keys=keys)
            evaluate_and_report(request, namespace=namespace, release=namespace.active_release, questions=questions)


@admin.register(EvaluationRun)
class EvaluationRunAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "namespace", "release", "summary"]
    list_filter = ["namespace"]
    list_select_related = ["namespace", "release"]
    fields = ["namespace", "release", "created_at", "metrics_table", "results_table"]
    readonly_fields = ["namespace", "release", "created_at", "metrics_table", "results_table"]

    @admin.display(description="Metrics")
    def summary(self, obj: EvaluationRun) -> str:
        return _metric_summary(obj.metrics)

    @admin.display(description="Metrics")
    def metrics_table(self, obj: EvaluationRun) -> SafeString:
        rows = [(label, obj.metrics.get(name, "-")) for name, label in METRIC_LABELS if name in obj.metrics]
        return format_html("<table>{}</table>", format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", rows))

    @admin.display(description="Questions")
    def results_table(self, obj: EvaluationRun) -> SafeString:
        """Expected against packed entries per question; misses first, so the work list is on top."""

        def verdict(item: dict[str, Any]) -> str:
            expected = set(item.get("expected") or {})
            if not expected:
                return "refused" if not item.get("matched") else "answered (not covered!)"
            if expected & set(item.get("packed") or []):
                return "hit" if item.get("matched") else "hit, matched=false"
            return "miss"

        def order(item: dict[str, Any]) -> tuple[int, str]:
            return (0 if verdict(item) in ("miss", "answered (not covered!)") else 1, str(item.get("key")))

        rows = [
            (
                item.get("key", ""),
                item.get("text", ""),
                ", ".join(item.get("expected") or {}) or "not covered",
                ", ".join(item.get("packed") or []) or "-",
                "true" if item.get("matched") else "false",
                verdict(item),
            )
            for item in sorted(obj.results or [], key=order)
        ]
        header = "<tr><th>Key</th><th>Question</th><th>Expected</th><th>Packed</th><th>matched</th><th></th></tr>"
        body = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", rows)
        return format_html("<table>{}{}</table>", SafeString(header), body)


@admin.register(Feedback)
class FeedbackAdmin(ServiceErrorsShown, NamespaceScopedAdmin):
    """Agent feedback waits here for an editor; its text is untrusted and shown escaped."""

    list_display = [
        "created_at",
        "namespace",
        "kind",
        "entry_public_id",
        "short_message",
        "source",
        "scan",
        "status",
    ]
    list_filter = ["namespace", "status", "kind"]
    readonly_fields = ["namespace", "entry_public_id", "query", "kind", "message", "scan", "source", "created_at"]
    fields = [*readonly_fields, "status"]
    actions = ["mark_done", "mark_dismissed"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="Message")
    def short_message(self, obj: Feedback) -> str:
        return obj.message[:80]

    @admin.display(description="Safety scan")
    def scan(self, obj: Feedback) -> str:
        """What the scan found when the feedback arrived (the text is never acted on unread)."""
        found = [f"{item.get('severity')}: {item.get('code')} in {item.get('field')}" for item in obj.findings or []]
        return "; ".join(found) or "—"

    def save_model(self, request: HttpRequest, obj: Feedback, form: Any, change: bool) -> None:
        feedback_set_status(feedback=obj, status=form.cleaned_data["status"], actor=request.user)

    def _set_status(self, request: HttpRequest, queryset: QuerySet[Feedback], status: str) -> None:
        items = list(queryset)
        for feedback in items:
            feedback_set_status(feedback=feedback, status=status, actor=request.user)
        self.message_user(request, f"{len(items)} report(s) marked {Feedback.Status(status).label.lower()}.")

    @namespace_action(role=Role.EDITOR, description="Mark as handled")
    def mark_done(self, request: HttpRequest, queryset: QuerySet[Feedback]) -> None:
        self._set_status(request, queryset, Feedback.Status.DONE)

    @namespace_action(role=Role.EDITOR, description="Dismiss")
    def mark_dismissed(self, request: HttpRequest, queryset: QuerySet[Feedback]) -> None:
        self._set_status(request, queryset, Feedback.Status.DISMISSED)

    def get_urls(self) -> list[Any]:
        view = self.admin_site.admin_view(self.draft_view)
        return [path("<int:pk>/draft/", view, name="knowledge_feedback_draft"), *super().get_urls()]

    def draft_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """One click from a report to a draft: the entry's draft with the report on its thread, or a new entry's
        form prefilled with what the agent asked and said (POST only; the report's text stays untrusted)."""
        feedback = get_object_or_404(self.get_queryset(request), pk=pk)
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        self.require(request, feedback, Role.EDITOR)
        draft = feedback_draft_open(feedback=feedback, actor=request.user)
        if draft is None:
            prefill = urlencode({"title": (feedback.query or feedback.message)[:120], "body": feedback.message})
            messages.info(request, "The report names no entry: write a new one, prefilled from it.")
            return HttpResponseRedirect(reverse("admin:knowledge_entry_add") + "?" + prefill)
        messages.success(request, f"{draft}: the report is on this draft's review thread and marked handled.")
        return HttpResponseRedirect(reverse("admin:knowledge_entryversion_change", args=[draft.pk]))
