"""Admin for reviewed texts (prompt packs, doc pages, profiles, themes, bases), edited as drafts and reviewed.

The served rows (DocPage, PromptPack, the namespace's profile fields) are read-only elsewhere in the
admin: publishing a reviewed version is the only way to change them.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from knowledge.admin.base import NamespaceScopedAdmin, ServiceErrorsShown, namespace_action
from knowledge.admin.bases_preview import bases_preview_html
from knowledge.admin.findings import findings_html
from knowledge.admin.live import MARKDOWN_FIELDS, TEXT_READ_FIELDS, text_live_preview
from knowledge.admin.text_forms import TextCreateForm, TextVersionForm, text_fieldnames
from knowledge.admin.workflow import ReviewWorkflowAdmin
from knowledge.errors import ServiceError
from knowledge.models import ReviewedText, Role, TextKind, TextVersion, VersionState
from knowledge.services.texts import ACTION_ROLES, TEXT_TRANSITIONS, text_draft, text_save


def _content_lines(content: dict[str, Any] | None) -> list[str]:
    return json.dumps(content or {}, ensure_ascii=False, indent=1, sort_keys=True).splitlines()


def version_link(version: TextVersion | None) -> SafeString | str:
    if version is None:
        return "—"
    url = reverse("admin:knowledge_textversion_change", args=[version.pk])
    return format_html('<a href="{}">v{} ({})</a>', url, version.number, version.get_state_display().lower())


@admin.register(ReviewedText)
class ReviewedTextAdmin(ServiceErrorsShown, NamespaceScopedAdmin):
    """Texts agents read beside entries; “Add” opens a text's first draft."""

    form = TextCreateForm
    list_display = ["__str__", "kind", "key", "namespace", "live", "open_version"]
    list_filter = ["kind", "namespace"]
    list_select_related = ["namespace", "live_version"]
    search_fields = ["key"]
    actions = ["start_drafts"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["namespace", "kind", "key", "live", "open_version", "live_content"] if obj is not None else []

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.get_readonly_fields(request, obj) if obj is not None else ["namespace", "kind", "key"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return obj is None and super().has_change_permission(request, obj)

    @admin.display(description="Live")
    def live(self, obj: ReviewedText) -> SafeString | str:
        return version_link(obj.live_version)

    @admin.display(description="Open version")
    def open_version(self, obj: ReviewedText) -> SafeString | str:
        open_states = (VersionState.DRAFT, VersionState.IN_REVIEW, VersionState.APPROVED)
        return version_link(obj.versions.filter(state__in=open_states).first())

    @admin.display(description="Live content")
    def live_content(self, obj: ReviewedText) -> SafeString:
        lines = _content_lines(obj.live_version.content if obj.live_version else None)
        return format_html("<pre>{}</pre>", "\n".join(lines))

    def save_model(self, request: HttpRequest, obj: ReviewedText, form: Any, change: bool) -> None:
        draft = text_draft(
            namespace=form.cleaned_data["namespace"], kind=obj.kind, key=obj.key or "", actor=request.user
        )
        obj.pk = draft.text_id
        obj._state.adding = False
        request._evergreen_draft = draft  # type: ignore[attr-defined]

    def response_add(self, request: HttpRequest, obj: ReviewedText, post_url_continue: str | None = None) -> Any:
        draft = getattr(request, "_evergreen_draft", None)
        if draft is None:
            return super().response_add(request, obj, post_url_continue)
        messages.success(request, f"{obj}: draft v{draft.number} opened; write it, then submit it for review.")
        return HttpResponseRedirect(reverse("admin:knowledge_textversion_change", args=[draft.pk]))

    @namespace_action(role=Role.EDITOR, description="Open a draft of the selected texts")
    def start_drafts(self, request: HttpRequest, queryset: QuerySet[ReviewedText]) -> HttpResponse | None:
        drafts = []
        for text in queryset.select_related("namespace"):
            try:
                drafts.append(text_draft(namespace=text.namespace, kind=text.kind, key=text.key, actor=request.user))
            except ServiceError as error:
                messages.error(request, f"{text}: {error}")
        if len(drafts) == 1:
            return HttpResponseRedirect(reverse("admin:knowledge_textversion_change", args=[drafts[0].pk]))
        if drafts:
            messages.success(request, f"Opened {len(drafts)} draft(s).")
        return None


@admin.register(TextVersion)
class TextVersionAdmin(ServiceErrorsShown, ReviewWorkflowAdmin):
    namespace_path = "text__namespace"
    form = TextVersionForm
    transitions = TEXT_TRANSITIONS
    action_roles = ACTION_ROLES
    transition_page = True
    list_display = ["__str__", "state", "author", "reviewer", "modified_at"]
    list_filter = ["state", "text__kind", "text__namespace"]
    search_fields = ["text__key"]
    readonly_fields = [
        "text_link",
        "number",
        "state",
        "content_shown",
        "safety",
        "author",
        "contributors_shown",
        "reviewer",
        "review_note",
        "content_hash",
        "layers_preview",
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return (
            super().get_queryset(request).select_related("text__namespace", "text__live_version", "author", "reviewer")
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a version starts from its text: “Add reviewed text” or “Open a draft”

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        editable = self._is_editable(request, obj)
        content = [*text_fieldnames(obj.text if obj else None), "based_on"] if editable else ["content_shown"]
        if obj is not None and obj.text.kind == TextKind.BASES:
            content = [*content, "layers_preview"]
        return [
            (None, {"fields": ["text_link", "number", "state"]}),
            ("Content", {"fields": content}),
            ("Safety scan", {"fields": ["safety"]}),
            ("Review", {"fields": ["author", "contributors_shown", "reviewer", "review_note", "content_hash"]}),
        ]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        kwargs["fields"] = []  # the form adds the kind's fields itself
        return super().get_form(request, obj, change, **kwargs)

    def save_draft(self, request: HttpRequest, obj: TextVersion, form: Any) -> None:
        saved = text_save(
            version=obj,
            content=form.text_content(),
            expected_lock_version=form.cleaned_data["based_on"],
            actor=request.user,
        )
        obj.lock_version = saved.lock_version

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """Contributors are recorded by the service, never taken from the form."""

    # -- the review page's hooks ---------------------------------------------------------------------

    def diff_fields(self, version: TextVersion) -> list[tuple[str, Any]]:
        content = version.content or {}
        return [(name, content.get(name)) for name in text_fieldnames(version.text)]

    def version_title(self, version: TextVersion) -> str:
        content = version.content or {}
        first = next((content[name] for name in ("title", "summary", "template", "body") if content.get(name)), "")
        if "bases" in content:
            first = " → ".join(content["bases"]) or "(no bases)"
        return str(first).strip().split("\n", 1)[0][:120]

    def subject_name(self, version: TextVersion) -> str:
        return str(version.text)

    def get_urls(self) -> list[Any]:
        view = self.admin_site.admin_view(self.live_preview_view)
        return [path("<int:pk>/live-preview/", view, name=self.url_name("livepreview")), *super().get_urls()]

    def render_change_form(self, request: HttpRequest, context: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        obj = kwargs.get("obj")
        if obj is not None and any(name in MARKDOWN_FIELDS for name in text_fieldnames(obj.text)):
            context["live_preview_url"] = self.page_url(obj, "livepreview")
            read = [name for name in text_fieldnames(obj.text) if name in TEXT_READ_FIELDS]
            context["live_tokens_of"] = " and ".join(read)
        return super().render_change_form(request, context, *args, **kwargs)

    def live_preview_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The token cost and rendered Markdown of the text being typed (nothing is saved)."""
        version = self._version(request, pk)
        self.require(request, version, Role.EDITOR)
        return text_live_preview(request, fields=text_fieldnames(version.text))

    def revise(self, request: HttpRequest, version: TextVersion) -> TextVersion:
        text = version.text
        return text_draft(namespace=text.namespace, kind=text.kind, key=text.key, actor=request.user, base=version)

    @admin.display(description="Text")
    def text_link(self, obj: TextVersion) -> SafeString:
        url = reverse("admin:knowledge_reviewedtext_change", args=[obj.text_id])
        return format_html('<a href="{}">{}</a>', url, obj.text)

    @admin.display(description="Content")
    def content_shown(self, obj: TextVersion) -> SafeString:
        return format_html("<pre>{}</pre>", "\n".join(_content_lines(obj.content)))

    @admin.display(description="What it means")
    def layers_preview(self, obj: TextVersion) -> SafeString:
        return bases_preview_html(obj)

    @admin.display(description="Wrote or edited it")
    def contributors_shown(self, obj: TextVersion) -> str:
        return ", ".join(sorted(user.get_username() for user in obj.contributors.all())) or "—"

    @admin.display(description="Findings")
    def safety(self, obj: TextVersion) -> SafeString:
        return findings_html(obj, obj.text.namespace)
