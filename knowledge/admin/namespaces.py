"""Admin for tenants: a namespace's settings, hosts and members, and its categories with ID blocks.

Settings, hosts and members change only through services, which check the namespace-admin role of
that namespace and audit every field; creating a namespace is for superusers.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from knowledge.admin.access import MembershipInline, memberships_save
from knowledge.admin.base import NamespaceScopedAdmin, NamespaceScopedInline, ServiceErrorsShown, namespace_action
from knowledge.admin.live import live_preview
from knowledge.models import Category, IdBlock, Membership, Namespace, NamespaceHost, ReviewedText, Role, TextKind
from knowledge.selectors.layers import base_links_list
from knowledge.services.build_queue import build_requests_pending, release_request_build
from knowledge.services.namespace_settings import (
    namespace_create,
    namespace_host_add,
    namespace_host_change,
    namespace_host_remove,
    namespace_settings_clean,
    namespace_update,
    settable_fields,
)
from knowledge.services.namespaces import PROFILE_FIELDS

# What a base hands over (NamespaceBase.shares_protected), as the namespace page says it.
BASE_SHARES = {True: "with its internal entries", False: "its public entries"}


class HostInline(NamespaceScopedInline, admin.TabularInline):
    model = NamespaceHost
    extra = 0
    deletable = True


def hosts_save(request: HttpRequest, formset: Any, namespace: Namespace) -> None:
    """Removals first, so that a host name can move between rows in one save."""
    formset.save(commit=False)
    for host in formset.deleted_objects:
        namespace_host_remove(host=host, actor=request.user)
    for host, _ in formset.changed_objects:
        namespace_host_change(host=host, value=host.host, actor=request.user)
    for host in formset.new_objects:
        namespace_host_add(namespace=namespace, host=host.host, actor=request.user)


class NamespaceForm(forms.ModelForm):
    class Meta:
        model = Namespace
        fields = ("name",)  # the admin's fieldsets decide the fields shown

    def clean(self) -> dict[str, Any]:
        """The services' own checks, so that a bad value is shown on its field rather than after saving."""
        cleaned = super().clean() or {}
        try:
            cleaned.update(namespace_settings_clean(cleaned))
        except ValidationError as error:
            for field, messages in error.message_dict.items():
                self.add_error(field, messages)
        return cleaned


def _text_link(namespace: Namespace, kind: str, *, write: str) -> SafeString:
    """A link to the namespace's reviewed text of `kind`, or to opening its first draft."""
    text = ReviewedText.objects.filter(namespace=namespace, kind=kind).first()
    if text is None:
        url = reverse("admin:knowledge_reviewedtext_add") + f"?namespace={namespace.pk}&kind={kind}"
        return format_html('<a href="{}">{}</a>', url, write)
    url = reverse("admin:knowledge_reviewedtext_change", args=[text.pk])
    return format_html('<a href="{}">{} (edit through review)</a>', url, text)


@admin.register(Namespace)
class NamespaceAdmin(ServiceErrorsShown, NamespaceScopedAdmin):
    form = NamespaceForm
    namespace_path = "pk"
    change_role = Role.ADMIN
    list_display = ["slug", "name", "prefix", "language", "is_public", "active_release", "release_state"]
    search_fields = ["slug", "name", "prefix"]
    readonly_fields = [
        "active_release",
        "release_state",
        "content_serial",
        "created_at",
        *PROFILE_FIELDS,
        "profile_text",
        "bases",
        "bases_text",
    ]
    inlines = [HostInline, MembershipInline]
    actions = ["build_release"]
    fieldsets = [
        (None, {"fields": ["slug", "name", "prefix", "id_digits", "is_public", "default_budget"]}),
        ("Public metadata", {"fields": ["license", "base_url", "language"]}),
        (
            "What agents are told (the profile, changed through review)",
            {"fields": ["profile_text", *PROFILE_FIELDS]},
        ),
        ("Review", {"fields": ["allow_self_approval"]}),
        ("Layers (base namespaces, changed through review)", {"fields": ["bases", "bases_text"]}),
        (
            "Retrieval and limits",
            {
                "fields": [
                    "ranker",
                    "match_threshold",
                    "match_threshold_note",
                    "packing",
                    "link_expansion",
                    "rate_limit",
                ],
                "description": "Leave the match threshold empty and every release calibrates its own from the entries "
                "and Evergreen's off-topic probes (shown on each release); calibrate_threshold refines it from "
                "golden questions.",
            },
        ),
        ("Request log", {"fields": ["log_requests"]}),
        (
            "Releases",
            {"fields": ["knowledge_version", "active_release", "release_state", "content_serial", "created_at"]},
        ),
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    @admin.display(description="Reviewed text")
    def profile_text(self, obj: Namespace) -> SafeString:
        return _text_link(obj, TextKind.PROFILE, write="Write the profile (a draft for review)")

    @admin.display(description="Builds on")
    def bases(self, obj: Namespace) -> str:
        """What the releases are built from now (issue 16 §1), most important first, and whether each base's
        internal and restricted entries come along (only when every writer of the list is its editor)."""
        links = base_links_list(namespace=obj)
        return " → ".join(f"{link.base.slug} ({BASE_SHARES[link.shares_protected]})" for link in links) or "—"

    @admin.display(description="Reviewed text")
    def bases_text(self, obj: Namespace) -> SafeString:
        return _text_link(obj, TextKind.BASES, write="Propose base namespaces (a draft for review)")

    @admin.display(description="Release")
    def release_state(self, obj: Namespace) -> str:
        """Published, release pending: changes the active release was not built from (see Build requests)."""
        return "release pending" if build_requests_pending(namespace=obj) else "up to date"

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None:
            fields += ["slug", "prefix"]  # IDs and URLs depend on them: never change once created
        return fields

    def save_model(self, request: HttpRequest, obj: Namespace, form: Any, change: bool) -> None:
        if change:
            changes = {name: form.cleaned_data[name] for name in form.changed_data if name in settable_fields()}
            namespace_update(namespace=obj, actor=request.user, changes=changes)
            return
        fields = {
            name: form.cleaned_data[name]
            for name in form.cleaned_data
            if name in settable_fields() | {"slug", "prefix"}
        }
        created = namespace_create(actor=request.user, fields=fields)
        obj.pk = created.pk
        obj._state.adding = False

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        if formset.model is NamespaceHost:
            hosts_save(request, formset, form.instance)
        elif formset.model is Membership:
            memberships_save(request, formset, form.instance)
        else:
            super().save_formset(request, form, formset, change)

    @namespace_action(role=Role.REVIEWER, description="Build a release now")
    def build_release(self, request: HttpRequest, queryset: QuerySet[Namespace]) -> None:
        namespaces = list(queryset)
        for namespace in namespaces:
            release_request_build(namespace=namespace, reason="admin")
        self.message_user(request, f"Queued a release build for {len(namespaces)} namespace(s).")


class IdBlockInline(NamespaceScopedInline, admin.TabularInline):
    model = IdBlock
    extra = 0


@admin.register(Category)
class CategoryAdmin(NamespaceScopedAdmin):
    change_role = Role.ADMIN
    list_display = ["slug", "name", "namespace", "blocks_display", "review_days", "position"]
    list_filter = ["namespace"]
    search_fields = ["slug", "name"]
    autocomplete_fields = ["namespace"]
    inlines = [IdBlockInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Category]:
        return super().get_queryset(request).select_related("namespace").prefetch_related("blocks")

    @admin.display(description="ID blocks")
    def blocks_display(self, obj: Category) -> str:
        return ", ".join(f"{b.start}–{b.end}" for b in obj.blocks.all())

    def get_urls(self) -> list[Any]:
        view = self.admin_site.admin_view(self.live_preview_view)
        return [path("<int:pk>/live-preview/", view, name="knowledge_category_livepreview"), *super().get_urls()]

    def live_preview_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The new-entry form's live preview, in the namespace of the category chosen (an editor's there)."""
        category = get_object_or_404(self.get_queryset(request), pk=pk)
        self.require(request, category, Role.EDITOR)
        return live_preview(request, namespace=category.namespace)
