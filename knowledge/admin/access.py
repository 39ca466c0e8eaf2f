"""Admin for who may act on a namespace: its members' roles and its API keys, both through services."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db.models import Model, QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from knowledge.actors import SYSTEM_USERNAME
from knowledge.admin.base import NamespaceScopedAdmin, NamespaceScopedInline, ServiceErrorsShown, namespace_action
from knowledge.errors import ServiceError
from knowledge.models import ApiKey, Membership, Namespace, Role, Sensitivity
from knowledge.services.api_keys import api_key_create, api_key_revoke
from knowledge.services.memberships import REVIEW_ROLES, membership_add, membership_change, membership_remove

NO_SUCH_MEMBER = (
    "“{username}” cannot be given a role here. Check the username: a namespace admin adds people who already "
    "hold a role in a namespace they administer; a superuser creates accounts and adds anyone else."
)
KEEP_A_REVIEWER = "Keep at least one reviewer or namespace admin: four eyes need someone who can review."
NEW_KEY_ATTRIBUTE = "_evergreen_new_key"


def addable_users(*, actor: Any) -> QuerySet[Any]:
    """Whom `actor` may give a role: a superuser anyone active; a namespace admin only active people who
    already hold a role in a namespace they administer (new people are placed by a superuser first)."""
    users = get_user_model().objects.filter(is_active=True).exclude(username=SYSTEM_USERNAME)
    if actor is None or not actor.is_authenticated:
        return users.none()
    if actor.is_superuser:
        return users
    administered = Membership.objects.filter(user=actor, role=Role.ADMIN).values("namespace")
    return users.filter(pk__in=Membership.objects.filter(namespace__in=administered).values("user"))


def with_actor(form: type[forms.ModelForm], request: HttpRequest) -> type[forms.ModelForm]:
    """`form`, knowing who fills it in (Django builds admin forms without the request)."""
    return type(form.__name__, (form,), {"actor": request.user})


class MembershipForm(forms.ModelForm):
    """Members are named by username, so tenant admins never browse other tenants' people.

    An existing membership changes only its role; to move someone, remove one role and add another.
    """

    username = forms.CharField(max_length=150)

    class Meta:
        model = Membership
        fields = ["username", "namespace", "role"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["username"].initial = self.instance.user.get_username()
            self.fields["username"].disabled = True
            if "namespace" in self.fields and isinstance(self.fields["namespace"], forms.ModelChoiceField):
                self.fields["namespace"].disabled = True

    actor: Any = None  # who fills the form in (set per request by the admin); nobody is addable without one

    def clean_username(self) -> str:
        """One answer for an account that is missing, inactive, the system's, or not the actor's to add,
        so tenant admins can neither probe for usernames nor pull in other tenants' people."""
        username = self.cleaned_data["username"].strip()
        found = addable_users(actor=self.actor).filter(username=username).first()
        if found is None:
            raise forms.ValidationError(NO_SUCH_MEMBER.format(username=username))
        self.instance.user = found
        return username


class MembershipFormSet(BaseInlineFormSet):
    """Says at once, with the typed rows kept, when a save would leave nobody able to review."""

    def clean(self) -> None:
        super().clean()
        if any(self.errors):
            return
        had = any(form.initial.get("role") in REVIEW_ROLES for form in self.initial_forms)
        kept = any(
            form.cleaned_data.get("role") in REVIEW_ROLES and not (self.can_delete and form.cleaned_data.get("DELETE"))
            for form in self.forms
            if getattr(form, "cleaned_data", None)
        )
        if had and not kept:
            raise forms.ValidationError(KEEP_A_REVIEWER)


def memberships_save(request: HttpRequest, formset: Any, namespace: Namespace) -> None:
    """Apply a membership formset through the services: additions first, so a hand-over never empties review."""
    formset.save(commit=False)
    for membership in formset.new_objects:
        membership_add(namespace=namespace, user=membership.user, role=membership.role, actor=request.user)
    for membership, _ in formset.changed_objects:
        membership_change(membership=membership, role=membership.role, actor=request.user)
    for membership in formset.deleted_objects:
        membership_remove(membership=membership, actor=request.user)


class MembershipInline(NamespaceScopedInline, admin.TabularInline):
    model = Membership
    form = MembershipForm
    formset = MembershipFormSet
    extra = 0
    view_role = Role.ADMIN
    deletable = True

    def get_formset(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> Any:
        formset = super().get_formset(request, obj, **kwargs)
        formset.form = with_actor(formset.form, request)
        return formset


@admin.register(Membership)
class MembershipAdmin(ServiceErrorsShown, NamespaceScopedAdmin):
    view_role = change_role = Role.ADMIN
    form = MembershipForm
    list_display = ["user", "namespace", "role"]
    list_filter = ["namespace", "role"]
    list_select_related = ["user", "namespace"]
    actions = ["remove"]

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return self.has_change_permission(request, obj)

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        return with_actor(super().get_form(request, obj, change, **kwargs), request)

    def save_model(self, request: HttpRequest, obj: Membership, form: Any, change: bool) -> None:
        if change:
            membership_change(membership=obj, role=obj.role, actor=request.user)
        else:
            obj.pk = membership_add(namespace=obj.namespace, user=obj.user, role=obj.role, actor=request.user).pk

    def delete_model(self, request: HttpRequest, obj: Membership) -> None:
        membership_remove(membership=obj, actor=request.user)

    @namespace_action(role=Role.ADMIN, description="Remove the selected memberships")
    def remove(self, request: HttpRequest, queryset: QuerySet[Membership]) -> None:
        removed = 0
        for membership in queryset.select_related("user", "namespace"):
            try:
                membership_remove(membership=membership, actor=request.user)
            except ServiceError as error:
                messages.error(request, str(error))
            else:
                removed += 1
        if removed:
            messages.success(request, f"Removed {removed} membership(s).")


class ApiKeyForm(forms.ModelForm):
    clearance = forms.ChoiceField(
        choices=Sensitivity.choices,
        initial=Sensitivity.PUBLIC,
        required=False,
        help_text="The most sensitive entries the key may read (issue 12). Public when left out.",
    )

    class Meta:
        model = ApiKey
        fields = ["namespace", "name", "clearance"]

    def clean_clearance(self) -> str:
        return str(self.cleaned_data.get("clearance") or Sensitivity.PUBLIC)


@admin.register(ApiKey)
class ApiKeyAdmin(ServiceErrorsShown, NamespaceScopedAdmin):
    """Keys are made and revoked by the namespace's admins; a new key is shown once, on the next page only."""

    view_role = change_role = Role.ADMIN
    form = ApiKeyForm
    list_display = ["name", "namespace", "clearance", "lookup", "created_by", "created_at", "revoked_at"]
    list_filter = ["namespace", "clearance"]
    list_select_related = ["namespace", "created_by"]
    actions = ["revoke"]

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False  # a key never changes; it is revoked (an action) and replaced

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["namespace", "name", "clearance", "lookup", "created_by", "created_at", "revoked_at"] if obj else []

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        key, raw = api_key_create(namespace=obj.namespace, name=obj.name, actor=request.user, clearance=obj.clearance)
        obj.pk = key.pk
        obj.lookup = key.lookup
        setattr(request, NEW_KEY_ATTRIBUTE, raw)

    def response_add(self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None) -> HttpResponse:
        """The key, in the answer to the POST that made it: never in a message, cookie, session or log."""
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"API key “{obj.name}” created",
            "key": obj,
            "secret": getattr(request, NEW_KEY_ATTRIBUTE),
        }
        response = TemplateResponse(request, "admin/knowledge/apikey/created.html", context)
        response["Cache-Control"] = "no-store"
        return response

    @namespace_action(role=Role.ADMIN, description="Revoke the selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        keys = list(queryset)
        for key in keys:
            api_key_revoke(key=key, actor=request.user)
        self.message_user(request, f"Revoked {len(keys)} key(s).")
