"""Personal API tokens in the admin (/admin/tokens/): each person makes and revokes their own.

Not a model admin: a token belongs to a person, not to a namespace, so the namespace-scoped admin and
its role matrix do not describe it. The page lists the person's tokens, makes one (the secret is shown
in the answer to that POST only, with Cache-Control: no-store) and revokes one.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from knowledge.errors import ServiceError
from knowledge.models import Namespace, PersonalToken, TokenScope
from knowledge.selectors.permissions import namespaces_for_user
from knowledge.services.personal_tokens import personal_token_create, personal_token_revoke

DEFAULT_LIFETIME = timedelta(days=90)
TEMPLATE = "admin/knowledge/personaltoken/tokens.html"


class TokenForm(forms.Form):
    name = forms.CharField(max_length=80, help_text="What uses it, e.g. “docs sync in CI”.")
    namespaces = forms.ModelMultipleChoiceField(queryset=Namespace.objects.none(), widget=forms.CheckboxSelectMultiple)
    scope = forms.ChoiceField(
        choices=TokenScope.choices,
        initial=TokenScope.READ,
        help_text="The most the token may do; it never gets a role you do not hold in a namespace.",
    )
    expires_in_days = forms.IntegerField(
        min_value=1, max_value=366, initial=DEFAULT_LIFETIME.days, required=False, help_text="Empty: never."
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["namespaces"]
        assert isinstance(field, forms.ModelMultipleChoiceField)
        field.queryset = namespaces_for_user(user=user)


def _owner_id(request: HttpRequest) -> int:
    """The signed-in person's id (admin_view lets only signed-in staff through)."""
    assert request.user.pk is not None
    return int(request.user.pk)


def _page(request: HttpRequest, form: TokenForm, **extra: Any) -> TemplateResponse:
    tokens = PersonalToken.objects.filter(user_id=_owner_id(request)).prefetch_related("namespaces")
    context = {
        **admin.site.each_context(request),
        "title": "Personal API tokens",
        "form": form,
        "tokens": tokens,
        **extra,
    }
    response = TemplateResponse(request, TEMPLATE, context)
    response["Cache-Control"] = "no-store"
    return response


@require_http_methods(["GET", "POST"])
def tokens_view(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _page(request, TokenForm(user=request.user))
    form = TokenForm(request.POST, user=request.user)
    if not form.is_valid():
        return _page(request, form)
    days = form.cleaned_data["expires_in_days"]
    try:
        token, raw = personal_token_create(
            user=request.user,
            name=form.cleaned_data["name"],
            namespaces=form.cleaned_data["namespaces"],
            scope=form.cleaned_data["scope"],
            expires_at=timezone.now() + timedelta(days=days) if days else None,
        )
    except ServiceError as error:
        form.add_error(None, str(error))
        return _page(request, form)
    return _page(request, TokenForm(user=request.user), created=token, secret=raw)


@require_POST
def token_revoke_view(request: HttpRequest, pk: int) -> HttpResponse:
    owned = (
        PersonalToken.objects.all()
        if request.user.is_superuser
        else PersonalToken.objects.filter(user_id=_owner_id(request))
    )
    token = get_object_or_404(owned, pk=pk)
    try:
        personal_token_revoke(token=token, actor=request.user)
    except ServiceError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Revoked {token}.")
    return HttpResponseRedirect(reverse("admin-tokens"))


tokens = admin.site.admin_view(tokens_view)
token_revoke = admin.site.admin_view(token_revoke_view)
