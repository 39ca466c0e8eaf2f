"""Admin pages of what agents did: citation checks and their accuracy week by week."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse

from knowledge.admin.base import ReadOnlyAdmin
from knowledge.models import CitationCheck
from knowledge.selectors.citations import citation_accuracy_by_week


@admin.register(CitationCheck)
class CitationCheckAdmin(ReadOnlyAdmin):
    list_display = ["at", "namespace", "channel", "release", "citations", "valid", "accuracy", "problems"]
    list_filter = ["namespace", "channel"]
    list_select_related = ["namespace", "release"]
    readonly_fields = ["at", "namespace", "channel", "release", "pack_etag", "citations", "valid", "problems"]
    change_list_template = "admin/knowledge/citationcheck/change_list.html"

    @admin.display(description="Valid share")
    def accuracy(self, obj: CitationCheck) -> str:
        return f"{obj.valid / obj.citations:.0%}" if obj.citations else "—"

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        weeks = citation_accuracy_by_week(checks=self.get_queryset(request))
        return super().changelist_view(request, {**(extra_context or {}), "accuracy_weeks": weeks})
