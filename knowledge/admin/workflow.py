"""The review pages shared by entry versions, reviewed texts and synonym sets.

An admin names its services per action (`transitions`), the role each needs (`action_roles`), the
fields its versions have (`diff_fields`) and how a new draft is opened from an old version
(`revise`). Every such admin then has the same page: what changed (any two versions, every field,
word by word), the buttons this person may use, the history of every version, the review thread,
and "Revise in a new draft". Refusals (a role, four eyes, a transition) come back as messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from django.contrib import messages
from django.db.models import Model, QuerySet
from django.forms.utils import pretty_name
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse

from knowledge.admin.base import NamespaceScopedAdmin, namespace_action
from knowledge.admin.diffs import versions_diff_html
from knowledge.admin.forms import NoteForm
from knowledge.admin.review_pages import compare_page, review_context
from knowledge.errors import ServiceError
from knowledge.models import Role, VersionState
from knowledge.services.review_notes import review_comment
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
    transition_page = False  # whether this admin serves the review page's URLs (buttons, notes, compare, revise)
    scanned = True  # whether approval passes the safety scan (and so takes an acknowledgement)
    actions: Sequence[Any] = ["bulk_submit", "bulk_approve", "bulk_publish", "bulk_withdraw"]
    subject_noun = "text"  # what a first version creates: "nothing (new text)" is what it is compared with

    # -- what each kind of version says about itself ------------------------------------------------

    def diff_fields(self, version: Any) -> list[tuple[str, Any]]:
        """Every field a reviewer compares, in reading order, as (name, value)."""
        raise NotImplementedError

    def version_title(self, version: Any) -> str:
        """A short line naming a version's content in the history and the compare page's choices."""
        return ""

    def subject_name(self, version: Any) -> str:
        """What the versions are versions of, as people call it (“EG-202”, “Prompt pack default”)."""
        return str(version)

    def contributor_ids(self, version: Any) -> set[int]:
        """Everyone who wrote some of the version (four eyes: none of them approves it)."""
        ids = set(version.contributors.values_list("pk", flat=True))
        return ids | ({version.author_id} if version.author_id is not None else set())

    def is_retired(self, version: Any) -> bool:
        """A retired subject takes no new drafts; only an open version's withdrawal."""
        return False

    def revise(self, request: HttpRequest, version: Any) -> Any:
        """Open a new draft with this version's content (the service refuses when one is open)."""
        raise NotImplementedError

    # -- who may do what, here and now --------------------------------------------------------------

    def _is_editable(self, request: HttpRequest, obj: Any) -> bool:
        return (
            obj is not None
            and obj.state == VersionState.DRAFT
            and not self.is_retired(obj)
            and self.may(request, obj, Role.EDITOR)
        )

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        """Only a draft is changed, by an editor: every other version page is read-only, without Save buttons."""
        if obj is None or not self.transition_page:
            return super().has_change_permission(request, obj)
        return self._is_editable(request, obj)

    def actions_for(self, request: HttpRequest, version: Any) -> list[tuple[str, str]]:
        """The transitions this person may make now: the state allows them, their roles do, four eyes does."""
        shown = []
        for action, label in available_actions(version.state):
            if self.is_retired(version) and action != "withdraw":
                continue
            if not self.may(request, version, self.action_roles[action]):
                continue
            if action == "approve" and self.four_eyes_blocks(request, version):
                continue
            shown.append((action, label))
        return shown

    def four_eyes_blocks(self, request: HttpRequest, version: Any) -> bool:
        namespace = self.namespace_of(version)
        return not namespace.allow_self_approval and request.user.pk in self.contributor_ids(version)

    def namespace_of(self, version: Any) -> Any:
        obj = version
        for hop in self.namespace_path.split("__"):
            obj = getattr(obj, hop)
        return obj

    # -- transitions --------------------------------------------------------------------------------

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

    # -- the page -----------------------------------------------------------------------------------

    def url_name(self, view: str) -> str:
        return f"{self.opts.app_label}_{self.opts.model_name}_{view}"

    def page_url(self, version: Any, view: str = "change") -> str:
        return reverse(f"admin:{self.url_name(view)}", args=[version.pk])

    def diff_html(self, old: Any, new: Any) -> Any:
        return versions_diff_html(self, old, new)

    def render_change_form(self, request: HttpRequest, context: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        obj = kwargs.get("obj")
        if obj is not None and self.transition_page:
            context.update(review_context(self, request, obj))
        return super().render_change_form(request, context, *args, **kwargs)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Nothing typed, nothing written: e.g. “Submit for review” on a saved draft audits no empty edit."""
        if form.has_changed():
            self.save_draft(request, obj, form)

    def save_draft(self, request: HttpRequest, obj: Any, form: Any) -> None:
        raise NotImplementedError

    def response_change(self, request: HttpRequest, obj: Any) -> HttpResponse:
        """A transition button inside the draft's form: the edits were saved above, now move the version."""
        action = request.POST.get("_transition")
        if action is None or not self.transition_page:
            return super().response_change(request, obj)
        if self._transition(request, obj, action, {"note": request.POST.get("note", "")}):
            messages.success(request, f"{obj}: saved, then {action} done.")
        return HttpResponseRedirect(self.page_url(obj))

    def get_urls(self) -> list[Any]:
        if not self.transition_page:
            return super().get_urls()

        def view(name: str) -> Any:
            return self.admin_site.admin_view(getattr(self, name))

        return [
            path("<int:pk>/transition/<str:action>/", view("transition_view"), name=self.url_name("transition")),
            path("<int:pk>/comment/", view("comment_view"), name=self.url_name("comment")),
            path("<int:pk>/revise/", view("revise_view"), name=self.url_name("revise")),
            path("<int:pk>/compare/", view("compare_view"), name=self.url_name("compare")),
            *super().get_urls(),
        ]

    def _version(self, request: HttpRequest, pk: int) -> Any:
        return get_object_or_404(self.get_queryset(request), pk=pk)

    def _transition(self, request: HttpRequest, version: Any, action: str, data: Mapping[str, Any]) -> bool:
        if action not in self.transitions:
            messages.error(request, f"Unknown action “{action}”.")
            return False
        self.require(request, version, self.action_roles[action])
        form = NoteForm(data)
        if not form.is_valid():
            for name, errors in form.errors.items():
                label = form.fields[name].label or pretty_name(name)
                messages.error(
                    request, f"{version}: {label}: {' '.join(str(error) for error in errors)} Nothing was changed."
                )
            return False
        extra: dict[str, Any] = {}
        if self.schedulable and action == "approve" and form.cleaned_data.get("publish_at"):
            extra["publish_at"] = form.cleaned_data["publish_at"]
        if self.scanned and action == "approve":
            extra["acknowledgement"] = form.cleaned_data.get("acknowledgement", "")
        return self.run_action(request, version, action, note=form.cleaned_data.get("note", ""), **extra)

    def transition_view(self, request: HttpRequest, pk: int, action: str) -> HttpResponse:
        version = self._version(request, pk)
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if self._transition(request, version, action, request.POST):
            messages.success(request, f"{version}: {action} done.")
        return HttpResponseRedirect(self.page_url(version))

    def comment_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """Add a note to the version's review thread (any member of its namespace)."""
        version = self._version(request, pk)
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        self.require(request, version, None)
        try:
            review_comment(version=version, actor=request.user, note=request.POST.get("comment", ""))
        except ServiceError as error:
            messages.error(request, str(error))
        else:
            messages.success(request, "Note added to the review thread.")
        return HttpResponseRedirect(self.page_url(version) + "#thread")

    def revise_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """Open a new draft with this version's content: revise a rejected version, or revert to an earlier one."""
        version = self._version(request, pk)
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        self.require(request, version, Role.EDITOR)
        try:
            draft = self.revise(request, version)
        except ServiceError as error:
            messages.error(request, str(error))
            return HttpResponseRedirect(self.page_url(version))
        messages.success(request, f"{draft}: a new draft from v{version.number}. Edit it, then submit it for review.")
        return HttpResponseRedirect(self.page_url(draft))

    def compare_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """Any two versions of the same thing (GET ?old=N&new=M; it only reads)."""
        return compare_page(self, request, self._version(request, pk))
