"""Admin for entry versions: edit drafts, compare any two versions, move them through review."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from knowledge.admin.base import ServiceErrorsShown, selected_across
from knowledge.admin.finding import finding_html, paths_finding_html
from knowledge.admin.findings import findings_html
from knowledge.admin.forms import CONTENT_FIELDS, VersionForm
from knowledge.admin.gate import golden_preview_html
from knowledge.admin.live import live_preview
from knowledge.admin.preview import preview_html, warnings_html
from knowledge.admin.roles import request_roles
from knowledge.admin.workflow import ReviewWorkflowAdmin
from knowledge.models import EntryVersion, Feedback, Role, VersionState
from knowledge.models.review import ReviewItem
from knowledge.selectors.dashboard import texts_and_sets_awaiting
from knowledge.services.golden_preview import golden_preview
from knowledge.services.versions import (
    ACTION_ROLES,
    version_approve,
    version_draft_for_entry,
    version_publish,
    version_reject,
    version_save,
    version_submit,
    version_withdraw,
)

ACTIONS: dict[str, Callable[..., EntryVersion]] = {
    "submit": version_submit,
    "approve": version_approve,
    "reject": version_reject,
    "publish": version_publish,
    "withdraw": version_withdraw,
}
FEEDBACK_SHOWN = 20
# Read-only pages show list fields as chips instead of the form's comma-separated text.
CHIP_FIELDS = {"tags": "tag_chips", "aliases": "alias_chips", "links": "link_chips", "paths": "path_chips"}


def chips(values: Iterable[str]) -> str:
    """A list field read, not edited: one chip per item."""
    items = list(values)
    if not items:
        return "—"
    return format_html_join("", '<span class="eg-chip">{}</span>', ((value,) for value in items))


class VersionAdminBase(ReviewWorkflowAdmin):
    namespace_path = "entry__namespace"
    list_display = ["version_label", "title", "state", "author", "reviewer", "tokens", "confidence", "modified_at"]
    list_select_related = ["entry", "author", "reviewer"]
    search_fields = ["entry__public_id", "title"]
    transitions = ACTIONS
    action_roles = ACTION_ROLES
    schedulable = True
    subject_noun = "entry"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # Selecting related rows here replaces list_select_related, so name them all.
        return super().get_queryset(request).select_related("entry__namespace", "author", "reviewer")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a version starts from its entry: "Add entry" or "Edit" on an entry

    @admin.display(description="Version", ordering="entry__number")
    def version_label(self, obj: EntryVersion) -> str:
        return f"{obj.entry.public_id} v{obj.number}"

    def _bulk(self, request: HttpRequest, queryset: QuerySet[Any], action: str) -> None:
        super()._bulk(request, queryset.select_related("entry"), action)


@admin.register(EntryVersion)
class EntryVersionAdmin(ServiceErrorsShown, VersionAdminBase):
    """A draft's refusals are its form's errors (VersionForm.clean); one the form cannot foresee (a base entry
    retired meanwhile) comes back as a message, never a 500."""

    form = VersionForm
    transition_page = True
    list_filter = ["state", "entry__namespace"]
    readonly_fields = [
        "entry_link",
        "number",
        "state",
        "author",
        "reviewer",
        "review_note",
        "publish_at",
        "tokens",
        "content_hash",
        "warnings",
        *CHIP_FIELDS.values(),
        "preview",
        "finding",
        "safety",
        "golden",
        "created_at",
        "modified_at",
    ]

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        if self._is_editable(request, obj):
            content = [*CONTENT_FIELDS, "based_on"]
        else:
            content = [CHIP_FIELDS.get(name, name) for name in CONTENT_FIELDS]
        return [
            (None, {"fields": ["entry_link", "number", "state", "tokens"]}),
            ("Authoring warnings", {"fields": ["warnings"]}),
            ("Content", {"fields": content}),
            ("Safety scan", {"fields": ["safety"]}),
            ("How agents will see it", {"fields": ["preview", "finding"]}),
            ("Golden questions if published", {"fields": ["golden"]}),
            ("Review", {"fields": ["author", "reviewer", "review_note", "publish_at", "content_hash"]}),
        ]

    def is_retired(self, version: EntryVersion) -> bool:
        return version.entry.retired_at is not None

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if self._is_editable(request, obj):
            return self.readonly_fields
        return [*self.readonly_fields, *CONTENT_FIELDS]

    def save_draft(self, request: HttpRequest, obj: EntryVersion, form: Any) -> None:
        saved = version_save(
            version=obj,
            content=form.version_content(),
            expected_lock_version=form.cleaned_data["based_on"],
            actor=request.user,
        )
        obj.lock_version = saved.lock_version

    # -- the review page's hooks ---------------------------------------------------------------------

    def diff_fields(self, version: EntryVersion) -> list[tuple[str, Any]]:
        return [(name, getattr(version, name)) for name in CONTENT_FIELDS]

    def version_title(self, version: EntryVersion) -> str:
        return version.title

    def subject_name(self, version: EntryVersion) -> str:
        return version.entry.public_id

    def revise(self, request: HttpRequest, version: EntryVersion) -> EntryVersion:
        return version_draft_for_entry(entry=version.entry, actor=request.user, base=version)

    def get_urls(self) -> list[Any]:
        view = self.admin_site.admin_view(self.live_preview_view)
        return [path("<int:pk>/live-preview/", view, name=self.url_name("livepreview")), *super().get_urls()]

    def render_change_form(self, request: HttpRequest, context: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        obj = kwargs.get("obj")
        if obj is not None:
            context["live_preview_url"] = self.page_url(obj, "livepreview")
        return super().render_change_form(request, context, *args, **kwargs)

    def live_preview_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """Token count, Markdown, warnings and similar entries of the text being typed (nothing is saved)."""
        version = self._version(request, pk)
        self.require(request, version, Role.EDITOR)
        return live_preview(request, namespace=version.entry.namespace, exclude=version.entry.public_id)

    # -- read-only fields ----------------------------------------------------------------------------

    @admin.display(description="Entry")
    def entry_link(self, obj: EntryVersion) -> str:
        url = reverse("admin:knowledge_entry_change", args=[obj.entry_id])
        return format_html('<a href="{}">{}</a> ({})', url, obj.entry.public_id, obj.entry.namespace.slug)

    @admin.display(description="Warnings")
    def warnings(self, obj: EntryVersion) -> str:
        return warnings_html(obj)

    @admin.display(description="Tags")
    def tag_chips(self, obj: EntryVersion) -> str:
        return chips(obj.tags)

    @admin.display(description="Aliases")
    def alias_chips(self, obj: EntryVersion) -> str:
        return chips(obj.aliases)

    @admin.display(description="Links")
    def link_chips(self, obj: EntryVersion) -> str:
        return chips(obj.links)

    @admin.display(description="Paths")
    def path_chips(self, obj: EntryVersion) -> str:
        return chips(obj.paths)

    @admin.display(description="Preview")
    def preview(self, obj: EntryVersion) -> str:
        return preview_html(obj)

    @admin.display(description="Findings")
    def safety(self, obj: EntryVersion) -> str:
        return findings_html(obj, obj.entry.namespace)

    @admin.display(description="Changed answers")
    def golden(self, obj: EntryVersion) -> str:
        return golden_preview_html(golden_preview(version=obj))

    @admin.display(description="Found by its title?")
    def finding(self, obj: EntryVersion) -> str:
        return finding_html(obj) + paths_finding_html(obj)


class AwaitingMeFilter(admin.SimpleListFilter):
    title = "queue"
    parameter_name = "queue"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("all", "Including my own versions")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "all":
            return queryset
        own = Q(author=request.user) | Q(contributors=request.user)
        mine = queryset.filter(own, entry__namespace__allow_self_approval=False).values("pk")
        return queryset.exclude(pk__in=mine)


@admin.register(ReviewItem)
class ReviewQueueAdmin(VersionAdminBase):
    """“Awaiting your review”: versions in review in the namespaces you review, not your own."""

    view_role = Role.REVIEWER
    list_display = ["review_label", "title", "namespace", "author", "submitted_at", "tokens", "confidence", "open"]
    list_display_links = None  # every link opens the version's review page, with its diff and buttons
    list_filter = [AwaitingMeFilter, "entry__namespace"]
    actions = ["bulk_approve"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return (
            super()
            .get_queryset(request)
            .filter(state=VersionState.IN_REVIEW)
            .select_related("entry__namespace", "author")
            .order_by("submitted_at")
        )

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def response_action(self, request: HttpRequest, queryset: QuerySet[Any]) -> Any:
        """Ticked versions are acted on even where the list's filter hides them (one's own, by default), so
        a refusal says why (four eyes) instead of nothing happening; “select all” keeps to the list."""
        if not selected_across(request):
            queryset = self.get_queryset(request)
        return super().response_action(request, queryset)

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        """The queue also shows reviewed texts and synonym sets in review, and open agent feedback (reports wait
        here for a person, never act alone)."""
        feedback = Feedback.objects.filter(status=Feedback.Status.OPEN)
        roles = request_roles(request)
        if not roles.is_superuser:
            feedback = feedback.filter(namespace__in=roles.namespace_ids(Role.REVIEWER))
        context = {
            **(extra_context or {}),
            "open_feedback": feedback.select_related("namespace")[:FEEDBACK_SHOWN],
            "open_feedback_count": feedback.count(),
            "texts_waiting": [
                self.admin_site.version_row(version)  # type: ignore[attr-defined]  # EvergreenAdminSite
                for version in texts_and_sets_awaiting(user=request.user, roles=roles)
            ],
        }
        return super().changelist_view(request, extra_context=context)

    @admin.display(description="Version", ordering="entry__number")
    def review_label(self, obj: EntryVersion) -> str:
        url = reverse("admin:knowledge_entryversion_change", args=[obj.pk])
        return format_html('<a href="{}">{} v{}</a>', url, obj.entry.public_id, obj.number)

    @admin.display(description="Namespace")
    def namespace(self, obj: EntryVersion) -> str:
        return obj.entry.namespace.slug

    @admin.display(description="")
    def open(self, obj: EntryVersion) -> str:
        url = reverse("admin:knowledge_entryversion_change", args=[obj.pk])
        waited = timezone.now() - (obj.submitted_at or obj.modified_at)
        return format_html('<a href="{}">Review (waiting {}h)</a>', url, int(waited.total_seconds() // 3600))
