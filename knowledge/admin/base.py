"""Per-object permissions for every admin: each decision is the object's namespace and the role held there."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.options import InlineModelAdmin
from django.contrib.admin.utils import get_fields_from_path
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from knowledge.admin.denied import admin_refusal_logged
from knowledge.admin.filters import NamespaceListFilter, ScopedValuesListFilter
from knowledge.admin.roles import DENIAL_ATTRIBUTE, refusal, request_roles, role_label
from knowledge.errors import ServiceError
from knowledge.models import Category, Namespace, Role

SKIPPED = "Skipped {count} selected {what} in {namespaces}: you are not {role} there."
UNSEEN = (
    "Skipped {count} selected {what}: not among those this list lets you act on (gone, moved on, or not yours to see)."
)


def selected_across(request: HttpRequest) -> bool:
    """Whether an action runs on every object of the list rather than on the ticked ones (Django's reading)."""
    return bool(forms.BooleanField(required=False).to_python(request.POST.get("select_across")))


def unseen_count(request: HttpRequest, queryset: QuerySet[Any]) -> int:
    """How many ticked ids the action's queryset lacks: forged, another tenant's, or gone since the list was shown.

    One count for all of these, so the answer never says which ids exist elsewhere.
    """
    if selected_across(request):
        return 0
    return max(len(set(request.POST.getlist(ACTION_CHECKBOX_NAME))) - queryset.count(), 0)


class NamespaceScopedAdmin(admin.ModelAdmin):
    """Lists, pages, actions, inlines, filters and choices decided per namespace.

    `namespace_path` is the lookup from the model to its Namespace. `view_role` is the role needed to
    see an object (None: any role in its namespace), `change_role` the one needed to add or change it.
    Objects of namespaces the user cannot see are not in `get_queryset`, so their URLs are "not found";
    objects they can see but not change are read-only, and a POST is a 403 that names the missing role.
    Nothing is ever deleted here unless an admin says otherwise.
    """

    namespace_path = "namespace"
    view_role: str | None = None
    change_role: str = Role.EDITOR
    # A URL typed without a scheme means https (Django 6's default; 5.2 warns until it is chosen).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    # -- the object's namespace ------------------------------------------------------------------

    def namespace_id_of(self, obj: Model) -> int:
        if self.namespace_path == "pk":
            return int(obj.pk)
        *hops, last = self.namespace_path.split("__")
        for hop in hops:
            obj = getattr(obj, hop)
        return int(getattr(obj, f"{last}_id"))

    def in_namespaces(self, queryset: QuerySet[Any], ids: list[int]) -> QuerySet[Any]:
        return queryset.filter(**{f"{self.namespace_path}__in": ids})

    def may(self, request: HttpRequest, obj: Model | None, role: str | None) -> bool:
        """Whether the user holds `role` in the object's namespace (anywhere when obj is None)."""
        roles = request_roles(request)
        if obj is None:
            return roles.anywhere(role)
        namespace_id = self.namespace_id_of(obj)
        if roles.has(namespace_id, role):
            return True
        setattr(request, DENIAL_ATTRIBUTE, (namespace_id, role))
        return False

    def require(self, request: HttpRequest, obj: Model, role: str | None) -> None:
        """Raise PermissionDenied, naming the missing role, unless the user holds it in obj's namespace."""
        if not self.may(request, obj, role):
            raise PermissionDenied(refusal(self.namespace_id_of(obj), role))

    # -- what Django asks --------------------------------------------------------------------------

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        queryset = super().get_queryset(request)
        roles = request_roles(request)
        if roles.is_superuser:
            return queryset
        return self.in_namespaces(queryset, roles.namespace_ids(self.view_role))

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_staff and request_roles(request).anywhere(self.view_role)

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.may(request, obj, self.view_role) or self.has_change_permission(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.may(request, obj, self.change_role)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request_roles(request).anywhere(self.change_role)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    # Actions declare `permissions=[<role>]`; Django then asks these before offering them.
    def has_editor_permission(self, request: HttpRequest) -> bool:
        return request_roles(request).anywhere(Role.EDITOR)

    def has_reviewer_permission(self, request: HttpRequest) -> bool:
        return request_roles(request).anywhere(Role.REVIEWER)

    def has_admin_permission(self, request: HttpRequest) -> bool:
        return request_roles(request).anywhere(Role.ADMIN)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # removals go through services, one object at a time
        return actions

    # -- choices, filters, autocompletes -----------------------------------------------------------

    def choosable_namespaces(self, request: HttpRequest) -> QuerySet[Namespace]:
        roles = request_roles(request)
        if roles.is_superuser:
            return Namespace.objects.all()
        return Namespace.objects.filter(pk__in=roles.namespace_ids(self.change_role))

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.related_model is Namespace:
            kwargs["queryset"] = self.choosable_namespaces(request)
        elif db_field.related_model is Category:
            kwargs["queryset"] = Category.objects.filter(
                namespace__in=self.choosable_namespaces(request)
            ).select_related("namespace")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_list_filter(self, request: HttpRequest) -> Any:
        """Filters list only what the user may see: namespaces by role, related values from own rows."""
        return [self._scoped_filter(item) for item in super().get_list_filter(request)]

    def _scoped_filter(self, item: Any) -> Any:
        if not isinstance(item, str):
            return item
        fields = get_fields_from_path(self.model, item)
        if fields[-1].is_relation and fields[-1].related_model is Namespace:
            return (item, NamespaceListFilter)
        if len(fields) > 1 and not fields[-1].is_relation:
            return (item, ScopedValuesListFilter)
        return item

    def get_search_results(self, request: HttpRequest, queryset: QuerySet[Any], search_term: str) -> Any:
        """An autocomplete offers only the namespaces where the asking form's own role is held."""
        match = getattr(request, "resolver_match", None)
        if match is not None and match.url_name == "autocomplete" and not request_roles(request).is_superuser:
            source = self._autocomplete_source(request)
            role = getattr(source, "change_role", Role.ADMIN)
            queryset = self.in_namespaces(queryset, request_roles(request).namespace_ids(role))
        return super().get_search_results(request, queryset, search_term)

    def _autocomplete_source(self, request: HttpRequest) -> Any:
        from django.apps import apps  # noqa: PLC0415  # the registry is complete only at request time

        try:
            model = apps.get_model(request.GET.get("app_label", ""), request.GET.get("model_name", ""))
        except (LookupError, ValueError):
            return None
        return self.admin_site.get_model_admin(model) if self.admin_site.is_registered(model) else None


def namespace_action(*, role: str, description: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """An admin action offered to holders of `role` that acts only where they hold it.

    A selection may span namespaces: objects in namespaces where the user lacks the role are
    skipped and the user is told which, so no action reaches past the role it was granted by.
    Ticked ids the list does not hold (forged, another tenant's, gone) are counted as skipped too.
    """

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(func)
        def run(model_admin: NamespaceScopedAdmin, request: HttpRequest, queryset: QuerySet[Any]) -> Any:
            roles = request_roles(request)
            unseen = unseen_count(request, queryset)
            if unseen:
                what = model_admin.model._meta.verbose_name_plural
                messages.warning(request, UNSEEN.format(count=unseen, what=what))
                admin_refusal_logged(request, reason="action_skipped", role=role, action=func.__name__)
            if not roles.is_superuser:
                allowed_ids = roles.namespace_ids(role)
                refused = queryset.exclude(**{f"{model_admin.namespace_path}__in": allowed_ids})
                count = refused.count()
                if count:
                    slugs = Namespace.objects.filter(pk__in=refused.values(model_admin.namespace_path)).values_list(
                        "slug", flat=True
                    )
                    messages.warning(
                        request,
                        SKIPPED.format(
                            count=count,
                            what=model_admin.model._meta.verbose_name_plural,
                            namespaces=", ".join(slugs),
                            role=role_label(role),
                        ),
                    )
                    admin_refusal_logged(
                        request, reason="action_skipped", namespace=",".join(slugs), role=role, action=func.__name__
                    )
                    queryset = model_admin.in_namespaces(queryset, allowed_ids)
            if not queryset.exists():
                return None
            return func(model_admin, request, queryset)

        return admin.action(description=description, permissions=[role])(run)

    return decorate


class NamespaceScopedInline(InlineModelAdmin):
    """An inline obeys its parent: its namespace, and the parent's roles unless it names its own."""

    view_role: str | None = None
    change_role: str | None = None  # None: the parent admin's change role
    read_only = False
    deletable = False

    def _parent(self) -> NamespaceScopedAdmin:
        return self.admin_site.get_model_admin(self.parent_model)  # type: ignore[return-value]

    def _may(self, request: HttpRequest, obj: Model | None, role: str | None) -> bool:
        return self._parent().may(request, obj, role)

    def _change_role(self) -> str:
        return self.change_role or self._parent().change_role

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        role = self.view_role if self.view_role is not None else self._parent().view_role
        return self._may(request, obj, role)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return not self.read_only and self._may(request, obj, self._change_role())

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return not self.read_only and self._may(request, obj, self._change_role())

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.deletable and not self.read_only and self._may(request, obj, self._change_role())


class ServiceErrorsShown(admin.ModelAdmin):
    """A service's refusal on save or delete (a business rule, not a role) comes back as a message, never a 500.

    The admin's views run in a transaction, so whatever the save had done before the refusal is undone.
    """

    @staticmethod
    def _refusal_shown(
        view: Callable[..., HttpResponse], request: HttpRequest, *args: Any, **kwargs: Any
    ) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except ServiceError as error:
            messages.error(request, str(error))
            return HttpResponseRedirect(request.get_full_path())

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return self._refusal_shown(super().changeform_view, request, *args, **kwargs)

    def delete_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return self._refusal_shown(super().delete_view, request, *args, **kwargs)


class ReadOnlyAdmin(NamespaceScopedAdmin):
    """History that nobody edits: releases, builds, the audit trail."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False
