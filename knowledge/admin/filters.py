"""List filters that offer only what the user may see: no other tenant's names, even private ones."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from knowledge.admin.roles import request_roles


class NamespaceListFilter(admin.RelatedFieldListFilter):
    """ "By namespace", listing the namespaces where the user holds the list's view role."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> Any:
        ordering = self.field_admin_ordering(field, request, model_admin)
        roles = request_roles(request)
        limit = None if roles.is_superuser else {"pk__in": roles.namespace_ids(model_admin.view_role)}
        return field.get_choices(include_blank=False, ordering=ordering, limit_choices_to=limit)


class ScopedValuesListFilter(admin.AllValuesFieldListFilter):
    """A filter on a related model's value (e.g. category slug), offering values of the user's own rows.

    Django's own reads every row of the related model, i.e. every tenant's category names.
    """

    def __init__(self, field: Any, request: HttpRequest, params: Any, model: Any, model_admin: Any, field_path: str):
        super().__init__(field, request, params, model, model_admin, field_path)
        self.lookup_choices = (
            model_admin.get_queryset(request).order_by(field_path).values_list(field_path, flat=True).distinct()
        )
