"""Namespace scoping for every admin: people see and change only their own namespaces' objects."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from knowledge.models import Category, Namespace, Role
from knowledge.selectors.permissions import namespaces_for_user


class NamespaceScopedAdmin(admin.ModelAdmin):
    """Filters lists, change URLs, autocompletes, actions and history by the user's namespaces.

    `namespace_path` is the lookup from the model to its Namespace. Django resolves change,
    history and action targets through get_queryset, so an object of another namespace is a 404.
    Nothing is ever deleted here.
    """

    namespace_path = "namespace"
    view_role: str | None = None
    change_role: str = Role.EDITOR

    def _namespaces(self, request: HttpRequest, role: str | None = None) -> QuerySet[Namespace]:
        return namespaces_for_user(user=request.user, role=role)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(**{f"{self.namespace_path}__in": self._namespaces(request, self.view_role)})

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff and self._namespaces(request).exists()

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self._namespaces(request, self.change_role).exists()

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._namespaces(request, self.change_role).exists()

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.related_model is Namespace:
            kwargs["queryset"] = self._namespaces(request, self.change_role)
        elif db_field.related_model is Category:
            kwargs["queryset"] = Category.objects.filter(
                namespace__in=self._namespaces(request, self.change_role)
            ).select_related("namespace")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class ReadOnlyAdmin(NamespaceScopedAdmin):
    """History that nobody edits: releases, builds, the audit trail."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False
