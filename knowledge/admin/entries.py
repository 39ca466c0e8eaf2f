"""Admin for entries: create one (its ID is allocated), open its draft, retire it."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from knowledge.admin.base import NamespaceScopedAdmin, NamespaceScopedInline, ServiceErrorsShown
from knowledge.admin.forms import CONTENT_FIELDS, EntryCreateForm, RetireForm
from knowledge.admin.roles import request_roles
from knowledge.errors import ServiceError
from knowledge.models import Entry, EntryVersion, Role, VersionState
from knowledge.models.entry import OPEN_STATES
from knowledge.services.build_queue import build_requests_pending
from knowledge.services.entries import entry_create, entry_retire
from knowledge.services.versions import version_draft_for_entry


def version_url(version: EntryVersion) -> str:
    return reverse("admin:knowledge_entryversion_change", args=[version.pk])


class VersionInline(NamespaceScopedInline, admin.TabularInline):
    model = EntryVersion
    extra = 0
    fields = readonly_fields = (
        "number_link",
        "state",
        "title",
        "tokens",
        "confidence",
        "updated",
        "author",
        "reviewer",
        "modified_at",
    )
    ordering = ["-number"]
    can_delete = False
    show_change_link = False
    read_only = True

    def get_queryset(self, request: HttpRequest) -> QuerySet[EntryVersion]:
        return super().get_queryset(request).select_related("entry", "author", "reviewer")

    @admin.display(description="Version")
    def number_link(self, obj: EntryVersion) -> str:
        return format_html('<a href="{}">v{}</a>', version_url(obj), obj.number)


@admin.register(Entry)
class EntryAdmin(ServiceErrorsShown, NamespaceScopedAdmin):
    list_display = ["public_id", "title", "category", "namespace", "status", "confidence", "tokens", "updated"]
    list_filter = ["namespace", "category__slug", ("retired_at", admin.EmptyFieldListFilter)]
    list_select_related = ["live_version", "category__namespace", "namespace"]
    search_fields = ["public_id", "versions__title", "versions__tags"]
    readonly_fields = [
        "public_id",
        "namespace",
        "category",
        "status",
        "live_version_link",
        "retired_at",
        "retire_reason",
        "replaced_by",
        "created_by",
        "created_at",
    ]
    inlines = [VersionInline]
    ordering = ["namespace", "number"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # an entry changes through its versions ("Edit") or by retiring it

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = EntryCreateForm
            kwargs["fields"] = None
        return super().get_form(request, obj, change, **kwargs)

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return [
                (
                    None,
                    {"fields": ["category", *CONTENT_FIELDS]},
                )
            ]
        return [(None, {"fields": self.readonly_fields})]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.readonly_fields if obj is not None else []

    def get_inlines(self, request: HttpRequest, obj: Any) -> Any:
        return self.inlines if obj is not None else []

    def save_model(self, request: HttpRequest, obj: Entry, form: Any, change: bool) -> None:
        version = entry_create(
            namespace=obj.category.namespace, category=obj.category, content=form.version_content(), actor=request.user
        )
        obj.pk = version.entry_id
        obj.public_id = version.entry.public_id
        request._evergreen_new_version = version  # type: ignore[attr-defined]

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """Nothing to save: the service created the entry and its draft."""

    def response_add(self, request: HttpRequest, obj: Entry, post_url_continue: str | None = None) -> HttpResponse:
        version = request._evergreen_new_version  # type: ignore[attr-defined]
        messages.success(request, f"{obj.public_id} created as a draft. Submit it for review when it is ready.")
        return HttpResponseRedirect(version_url(version))

    def get_queryset(self, request: HttpRequest) -> QuerySet[Entry]:
        """Each row's latest title and open version come with the row: a list costs the same at any length."""
        latest = EntryVersion.objects.filter(entry=OuterRef("pk")).order_by("-number")
        open_version = EntryVersion.objects.filter(entry=OuterRef("pk"), state__in=OPEN_STATES)
        return (
            super()
            .get_queryset(request)
            .annotate(
                latest_title=Subquery(latest.values("title")[:1]),
                open_number=Subquery(open_version.values("number")[:1]),
                open_state=Subquery(open_version.values("state")[:1]),
            )
        )

    @admin.display(description="Title")
    def title(self, obj: Entry) -> str:
        return obj.live_version.title if obj.live_version else (getattr(obj, "latest_title", None) or "")

    @admin.display(description="Status")
    def status(self, obj: Entry) -> str:
        if obj.retired_at:
            return f"retired {obj.retired_at:%Y-%m-%d}"
        live = f"live v{obj.live_version.number}" if obj.live_version else "not published"
        if build_requests_pending(namespace=obj.namespace):
            live += ", release pending"
        state = getattr(obj, "open_state", None)
        return f"{live} · v{getattr(obj, 'open_number', '')} {VersionState(state).label.lower()}" if state else live

    @admin.display(description="Confidence")
    def confidence(self, obj: Entry) -> Any:
        return obj.live_version.confidence if obj.live_version else "—"

    @admin.display(description="Tokens")
    def tokens(self, obj: Entry) -> Any:
        return obj.live_version.tokens if obj.live_version else "—"

    @admin.display(description="Updated")
    def updated(self, obj: Entry) -> Any:
        return obj.live_version.updated if obj.live_version else "—"

    @admin.display(description="Live version")
    def live_version_link(self, obj: Entry) -> str:
        if obj.live_version is None:
            return "—"
        return format_html('<a href="{}">v{}</a>', version_url(obj.live_version), obj.live_version.number)

    def get_urls(self) -> list[Any]:
        urls = [
            path("<int:pk>/edit/", self.admin_site.admin_view(self.edit_view), name="knowledge_entry_edit"),
            path("<int:pk>/compare/", self.admin_site.admin_view(self.compare_view), name="knowledge_entry_compare"),
            path("<int:pk>/retire/", self.admin_site.admin_view(self.retire_view), name="knowledge_entry_retire"),
        ]
        return urls + super().get_urls()

    def _entry(self, request: HttpRequest, pk: int) -> Entry:
        return get_object_or_404(self.get_queryset(request), pk=pk)

    def edit_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """Open the entry's draft, making one from the live version; the live one keeps serving (POST only)."""
        entry = self._entry(request, pk)
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        self.require(request, entry, Role.EDITOR)
        try:
            draft = version_draft_for_entry(entry=entry, actor=request.user)
        except ServiceError as error:
            messages.error(request, str(error))
            return HttpResponseRedirect(reverse("admin:knowledge_entry_change", args=[entry.pk]))
        return HttpResponseRedirect(version_url(draft))

    def compare_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The entry's "Compare versions": the shared compare page of its newest version (GET ?old=N&new=M)."""
        entry = self._entry(request, pk)
        newest = entry.versions.order_by("-number").only("pk").first()
        if newest is None:  # every entry is created with its first version; a hand-made row may not be
            raise Http404("This entry has no versions.")
        url = reverse("admin:knowledge_entryversion_compare", args=[newest.pk])
        query = request.GET.urlencode()
        return HttpResponseRedirect(f"{url}?{query}" if query else url)

    def retire_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        entry = self._entry(request, pk)
        self.require(request, entry, Role.REVIEWER)
        form = RetireForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                entry_retire(
                    entry=entry,
                    actor=request.user,
                    reason=form.cleaned_data["reason"],
                    replaced_by=form.cleaned_data["replaced_by"],
                )
            except ServiceError as error:
                form.add_error(None, str(error))
            else:
                messages.success(request, f"{entry.public_id} is retired; agents get 410 Gone from the next release.")
                return HttpResponseRedirect(reverse("admin:knowledge_entry_change", args=[entry.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "entry": entry,
            "form": form,
            "title": f"Retire {entry.public_id}",
        }
        return TemplateResponse(request, "admin/knowledge/entry/retire.html", context)

    def render_change_form(self, request: HttpRequest, context: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        obj = kwargs.get("obj")
        if obj is not None:
            roles = request_roles(request)
            active = obj.retired_at is None
            context["can_retire"] = active and roles.has(obj.namespace_id, Role.REVIEWER)
            context["can_edit"] = active and roles.has(obj.namespace_id, Role.EDITOR)
            context["open_version"] = obj.versions.filter(state__in=OPEN_STATES).only("pk", "number", "state").first()
            live = obj.live_version
            context["title"] = f"{obj.public_id}: {live.title if live else getattr(obj, 'latest_title', '')}"
        return super().render_change_form(request, context, *args, **kwargs)
