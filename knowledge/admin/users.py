"""django.contrib.auth's User admin, re-registered so deleting or deactivating a person keeps the
namespace rule of the membership service: nobody takes away a namespace's last reviewer unnoticed.

django.contrib.auth precedes knowledge in INSTALLED_APPS, so its admin is registered before this runs.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db import router, transaction
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse

from knowledge.admin.base import ServiceErrorsShown
from knowledge.services.memberships import user_removal_check, users_delete

User = get_user_model()


class EvergreenUserAdmin(ServiceErrorsShown, UserAdmin):
    """Deletes (one or the bulk action) and deactivations go through the membership service's rule;
    a refusal is an error message and, the views being atomic, changes nothing."""

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        users_delete(users=[obj], actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        users_delete(users=queryset, actor=request.user)

    def save_model(self, request: HttpRequest, obj: Any, form: ModelForm, change: bool) -> None:
        if change and not obj.is_active and User.objects.filter(pk=obj.pk, is_active=True).exists():
            user_removal_check(users=[obj], actor=request.user)
        super().save_model(request, obj, form, change)

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        """Atomic, so a refused bulk delete leaves no deletion log entries behind (Django writes them first)."""

        def view(request: HttpRequest) -> HttpResponse:
            with transaction.atomic(using=router.db_for_write(self.model)):
                return super(EvergreenUserAdmin, self).changelist_view(request, extra_context)

        return self._refusal_shown(view, request)


if admin.site.is_registered(User):
    admin.site.unregister(User)
admin.site.register(User, EvergreenUserAdmin)
