"""Admin pages of what agents asked: the request log (with replay) and the knowledge-gap report."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import orjson
from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html

from knowledge.admin.base import NamespaceScopedAdmin, ReadOnlyAdmin, namespace_action
from knowledge.errors import ServiceError
from knowledge.models import Entry, KnowledgeGap, Namespace, RequestLog, Role
from knowledge.selectors.replay import ReplayError, pack_diff, request_replay, request_replay_current
from knowledge.services.gaps import gap_attach, gap_dismiss, gap_draft_opened, gap_reopen

BODY_SHOWN = 20_000


@admin.register(RequestLog)
class RequestLogAdmin(ReadOnlyAdmin):
    """Topics can hold what people typed: reviewers and namespace admins only."""

    view_role = Role.REVIEWER
    list_display = ["at", "namespace", "channel", "route", "topic", "matched", "returned_count", "latency", "replay"]
    list_filter = ["namespace", "channel", "route", "matched"]
    list_select_related = ["namespace", "release"]
    search_fields = ["topic", "request_id"]
    readonly_fields = [
        "at",
        "namespace",
        "release",
        "channel",
        "route",
        "status",
        "topic",
        "budget",
        "category",
        "limit",
        "matched",
        "hit_count",
        "returned",
        "omitted",
        "used_tokens",
        "latency_us",
        "client",
        "request_id",
        "etag",
        "params",
    ]

    @admin.display(description="Entries")
    def returned_count(self, obj: RequestLog) -> int:
        return len(obj.returned)

    @admin.display(description="Latency")
    def latency(self, obj: RequestLog) -> str:
        return f"{obj.latency_us / 1000:.2f} ms"

    @admin.display(description="Replay")
    def replay(self, obj: RequestLog) -> str:
        return format_html('<a href="{}">replay</a>', reverse("admin:knowledge_requestlog_replay", args=[obj.pk]))

    def get_urls(self) -> list[Any]:
        view = self.admin_site.admin_view(self.replay_view)
        return [path("<int:pk>/replay/", view, name="knowledge_requestlog_replay"), *super().get_urls()]

    def replay_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The logged request rendered again from its release (same bytes?), and today's answer beside it."""
        log = get_object_or_404(self.get_queryset(request), pk=pk)
        context: dict[str, Any] = {**self.admin_site.each_context(request), "log": log, "opts": self.model._meta}
        try:
            replayed = request_replay(log=log)
            current = request_replay_current(log=log)
        except ReplayError as error:
            context["error"] = str(error)
        else:
            context.update(
                replayed=replayed,
                identical=replayed.etag == log.etag if log.etag else None,
                body=orjson.dumps(replayed.document, option=orjson.OPT_INDENT_2).decode()[:BODY_SHOWN],
                current=current,
                diff=pack_diff(replayed.document, current.document) if current else None,
            )
        return TemplateResponse(request, "admin/knowledge/requestlog/replay.html", context)


class AttachForm(forms.Form):
    entry_id = forms.CharField(
        label="Entry ID", max_length=64, help_text="The entry that should answer it, e.g. EG-202."
    )

    def __init__(self, *args: Any, namespace: Namespace, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.namespace = namespace

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        wanted = str(data.get("entry_id", "")).strip().upper()
        entry = Entry.objects.filter(namespace=self.namespace, public_id=wanted, retired_at__isnull=True).first()
        if entry is None:
            raise forms.ValidationError(f"{wanted} is not a live entry of {self.namespace.slug}.")
        data["entry"] = entry
        return data


@admin.register(KnowledgeGap)
class KnowledgeGapAdmin(NamespaceScopedAdmin):
    change_role = Role.EDITOR
    list_display = ["example", "terms_shown", "count", "weak", "channels_shown", "first_seen", "last_seen", "status"]
    list_display_links = None
    list_filter = ["namespace", "status"]
    ordering = ["-count", "-last_seen"]
    actions = ["dismiss", "reopen"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False if obj is not None else super().has_change_permission(request, obj)

    def get_list_display(self, request: HttpRequest) -> Any:
        return [*self.list_display, "draft", "attach"]

    @admin.display(description="Informative terms")
    def terms_shown(self, obj: KnowledgeGap) -> str:
        return ", ".join(obj.terms)

    @admin.display(description="Channels")
    def channels_shown(self, obj: KnowledgeGap) -> str:
        return ", ".join(obj.channels)

    @admin.display(description="")
    def draft(self, obj: KnowledgeGap) -> str:
        return format_html(
            '<a href="{}">Draft an entry</a>', reverse("admin:knowledge_knowledgegap_draft", args=[obj.pk])
        )

    @admin.display(description="")
    def attach(self, obj: KnowledgeGap) -> str:
        url = reverse("admin:knowledge_knowledgegap_attach", args=[obj.pk])
        return format_html('<a href="{}">Add to an entry\'s aliases</a>', url)

    def get_urls(self) -> list[Any]:
        draft = self.admin_site.admin_view(self.draft_view)
        attach = self.admin_site.admin_view(self.attach_view)
        return [
            path("<int:pk>/draft/", draft, name="knowledge_knowledgegap_draft"),
            path("<int:pk>/attach/", attach, name="knowledge_knowledgegap_attach"),
            *super().get_urls(),
        ]

    def attach_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """Ask which entry should answer the gap's topic; add the topic to that entry's aliases in its draft."""
        gap = get_object_or_404(self.get_queryset(request), pk=pk)
        self.require(request, gap, Role.EDITOR)
        form = AttachForm(request.POST or None, namespace=gap.namespace)
        if request.method == "POST" and form.is_valid():
            try:
                draft = gap_attach(gap=gap, entry=form.cleaned_data["entry"], actor=request.user)
            except ServiceError as error:
                messages.error(request, str(error))
            else:
                messages.success(request, f"“{gap.example}” is an alias of {draft.entry.public_id} in its draft.")
                return HttpResponseRedirect(reverse("admin:knowledge_entryversion_change", args=[draft.pk]))
        context = {**self.admin_site.each_context(request), "gap": gap, "form": form, "opts": self.model._meta}
        return TemplateResponse(request, "admin/knowledge/knowledgegap/attach.html", context)

    def draft_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """One click: the gap leaves the open list and the new-entry form opens filled in from it."""
        gap = get_object_or_404(self.get_queryset(request), pk=pk)
        self.require(request, gap, Role.EDITOR)
        try:
            gap_draft_opened(gap=gap, actor=request.user)
        except ServiceError as error:
            messages.error(request, str(error))
            return HttpResponseRedirect(reverse("admin:knowledge_knowledgegap_changelist"))
        initial = {
            "title": gap.example[:200],
            "tags": ", ".join(gap.terms),
            "summary": f"Answers: {'; '.join(gap.topics)}"[:300],
            "updated": timezone.localdate().isoformat(),
        }
        return HttpResponseRedirect(reverse("admin:knowledge_entry_add") + "?" + urlencode(initial))

    @namespace_action(role=Role.EDITOR, description="Dismiss the selected gaps")
    def dismiss(self, request: HttpRequest, queryset: QuerySet[KnowledgeGap]) -> None:
        for gap in queryset.select_related("namespace"):
            gap_dismiss(gap=gap, actor=request.user)
        self.message_user(request, f"Dismissed {queryset.count()} gap(s); they keep counting, out of sight.")

    @namespace_action(role=Role.EDITOR, description="Open the selected gaps again")
    def reopen(self, request: HttpRequest, queryset: QuerySet[KnowledgeGap]) -> None:
        for gap in queryset.select_related("namespace"):
            gap_reopen(gap=gap, actor=request.user)
