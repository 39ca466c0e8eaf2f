"""Admin for tenants: namespaces, categories with ID blocks, members and API keys."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest

from knowledge.admin.base import NamespaceScopedAdmin, NamespaceScopedInline, namespace_action
from knowledge.models import ApiKey, Category, IdBlock, Membership, Namespace, NamespaceHost, Role
from knowledge.services.api_keys import api_key_create, api_key_revoke
from knowledge.services.releases import release_request_build


class HostInline(NamespaceScopedInline, admin.TabularInline):
    model = NamespaceHost
    extra = 0
    deletable = True


class MembershipForm(forms.ModelForm):
    """Members are named by username, so tenant admins never browse other tenants' people."""

    username = forms.CharField(max_length=150)

    class Meta:
        model = Membership
        fields = ["username", "namespace", "role"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["username"].initial = self.instance.user.get_username()

    def clean_username(self) -> str:
        username = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise forms.ValidationError(f"No user “{username}”; a superuser creates accounts first.")
        self.instance.user = user
        return username


class MembershipInline(NamespaceScopedInline, admin.TabularInline):
    model = Membership
    form = MembershipForm
    extra = 0
    view_role = Role.ADMIN
    deletable = True


@admin.register(Namespace)
class NamespaceAdmin(NamespaceScopedAdmin):
    namespace_path = "pk"
    change_role = Role.ADMIN
    list_display = ["slug", "name", "prefix", "language", "is_public", "active_release", "content_serial"]
    search_fields = ["slug", "name", "prefix"]
    readonly_fields = ["active_release", "content_serial", "created_at"]
    inlines = [HostInline, MembershipInline]
    actions = ["build_release"]
    fieldsets = [
        (None, {"fields": ["slug", "name", "prefix", "id_digits", "is_public", "default_budget"]}),
        ("Public metadata", {"fields": ["title", "summary", "contact", "license", "base_url", "language"]}),
        ("What agents are told", {"fields": ["rules", "faq"]}),
        ("Review", {"fields": ["allow_self_approval"]}),
        ("Retrieval and limits", {"fields": ["ranker", "match_threshold", "link_expansion", "rate_limit"]}),
        ("Releases", {"fields": ["knowledge_version", "active_release", "content_serial", "created_at"]}),
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None:
            fields += ["slug", "prefix"]  # IDs and URLs depend on them: never change once created
        return fields

    def save_model(self, request: HttpRequest, obj: Namespace, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        release_request_build(namespace=obj)

    @namespace_action(role=Role.REVIEWER, description="Build a release now")
    def build_release(self, request: HttpRequest, queryset: QuerySet[Namespace]) -> None:
        for namespace in queryset:
            release_request_build(namespace=namespace)
        self.message_user(request, f"Queued a release build for {queryset.count()} namespace(s).")


class IdBlockInline(NamespaceScopedInline, admin.TabularInline):
    model = IdBlock
    extra = 0


@admin.register(Category)
class CategoryAdmin(NamespaceScopedAdmin):
    change_role = Role.ADMIN
    list_display = ["slug", "name", "namespace", "blocks_display", "position"]
    list_filter = ["namespace"]
    search_fields = ["slug", "name"]
    autocomplete_fields = ["namespace"]
    inlines = [IdBlockInline]

    @admin.display(description="ID blocks")
    def blocks_display(self, obj: Category) -> str:
        return ", ".join(f"{b.start}–{b.end}" for b in obj.blocks.all())


@admin.register(Membership)
class MembershipAdmin(NamespaceScopedAdmin):
    view_role = change_role = Role.ADMIN
    form = MembershipForm
    list_display = ["user", "namespace", "role"]
    list_filter = ["namespace", "role"]
    list_select_related = ["user", "namespace"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_change_permission(request, obj)


class ApiKeyForm(forms.ModelForm):
    class Meta:
        model = ApiKey
        fields = ["namespace", "name"]


@admin.register(ApiKey)
class ApiKeyAdmin(NamespaceScopedAdmin):
    view_role = change_role = Role.ADMIN
    form = ApiKeyForm
    list_display = ["name", "namespace", "lookup", "created_by", "created_at", "revoked_at"]
    list_filter = ["namespace"]
    actions = ["revoke"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["namespace", "name", "lookup", "created_by", "created_at", "revoked_at"] if obj else []

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            return
        key, raw = api_key_create(namespace=obj.namespace, name=obj.name, actor=request.user)
        obj.pk = key.pk
        messages.warning(
            request, f"The key “{key.name}” is {raw} — copy it now: it is stored hashed and never shown again."
        )

    @namespace_action(role=Role.ADMIN, description="Revoke the selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for key in queryset:
            api_key_revoke(key=key, actor=request.user)
        self.message_user(request, f"Revoked {queryset.count()} key(s).")
