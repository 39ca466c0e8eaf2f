"""Review buttons and bulk actions shared by entry versions and reviewed texts.

An admin names its services per action (`transitions`), the role each needs (`action_roles`) and the
change view its buttons return to; refusals (a role, four eyes, a transition) come back as messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from django.contrib import messages
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse

from knowledge.admin.base import NamespaceScopedAdmin, namespace_action
from knowledge.admin.forms import NoteForm
from knowledge.errors import ServiceError
from knowledge.models import Role
from knowledge.workflow import TRANSITIONS, TransitionError

BUTTONS = [
    ("submit", "Submit for review"),
    ("approve", "Approve"),
    ("reject", "Reject"),
    ("publish", "Publish"),
    ("withdraw", "Withdraw"),
]


def available_actions(state: str) -> list[tuple[str, str]]:
    allowed = {action for (source, _), action in TRANSITIONS.items() if source == state}
    return [(action, label) for action, label in BUTTONS if action in allowed]


class ReviewWorkflowAdmin(NamespaceScopedAdmin):
    transitions: ClassVar[Mapping[str, Callable[..., Any]]] = {}
    action_roles: ClassVar[Mapping[str, str]] = {}
    schedulable = False  # whether approval takes a go-live time
    transition_page = False  # whether this admin serves the buttons' POST URL
    scanned = True  # whether approval passes the safety scan (and so takes an acknowledgement)
    actions: Sequence[Any] = ["bulk_submit", "bulk_approve", "bulk_publish", "bulk_withdraw"]

    def run_action(self, request: HttpRequest, version: Model, action: str, *, note: str = "", **extra: Any) -> bool:
        """Run one transition and report it as a message; a refusal changes nothing."""
        try:
            self.transitions[action](version=version, actor=request.user, note=note, **extra)
        except (ServiceError, TransitionError) as error:
            messages.error(request, f"{version}: {error}")
            return False
        return True

    def _bulk(self, request: HttpRequest, queryset: QuerySet[Any], action: str) -> None:
        done = sum(self.run_action(request, version, action) for version in queryset)
        if done:
            messages.success(request, f"{action.title()}: {done} version(s).")

    @namespace_action(role=Role.EDITOR, description="Submit the selected drafts for review")
    def bulk_submit(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self._bulk(request, queryset, "submit")

    @namespace_action(role=Role.REVIEWER, description="Approve the selected versions")
    def bulk_approve(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self._bulk(request, queryset, "approve")

    @namespace_action(role=Role.REVIEWER, description="Publish the selected approved versions")
    def bulk_publish(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self._bulk(request, queryset, "publish")

    @namespace_action(role=Role.EDITOR, description="Withdraw the selected versions")
    def bulk_withdraw(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self._bulk(request, queryset, "withdraw")

    def _url_name(self, view: str) -> str:
        return f"{self.opts.app_label}_{self.opts.model_name}_{view}"

    def render_change_form(self, request: HttpRequest, context: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        obj = kwargs.get("obj")
        if obj is not None and self.transition_page:
            context["transition_buttons"] = available_actions(obj.state)
            context["transition_url_name"] = f"admin:{self._url_name('transition')}"
            context["schedulable"] = self.schedulable
            context["scanned"] = self.scanned
            context["note_form"] = NoteForm()
        return super().render_change_form(request, context, *args, **kwargs)

    def get_urls(self) -> list[Any]:
        if not self.transition_page:
            return super().get_urls()
        view = self.admin_site.admin_view(self.transition_view)
        return [path("<int:pk>/transition/<str:action>/", view, name=self._url_name("transition")), *super().get_urls()]

    def transition_view(self, request: HttpRequest, pk: int, action: str) -> HttpResponse:
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        version = get_object_or_404(self.get_queryset(request), pk=pk)
        back = reverse(f"admin:{self._url_name('change')}", args=[version.pk])
        if action not in self.transitions:
            messages.error(request, f"Unknown action “{action}”.")
            return HttpResponseRedirect(back)
        self.require(request, version, self.action_roles[action])
        form = NoteForm(request.POST)
        form.is_valid()
        extra: dict[str, Any] = {}
        if self.schedulable and action == "approve" and form.cleaned_data.get("publish_at"):
            extra["publish_at"] = form.cleaned_data["publish_at"]
        if self.scanned and action == "approve":
            extra["acknowledgement"] = form.cleaned_data.get("acknowledgement", "")
        if self.run_action(request, version, action, note=form.cleaned_data.get("note", ""), **extra):
            messages.success(request, f"{version}: {action} done.")
        return HttpResponseRedirect(back)
