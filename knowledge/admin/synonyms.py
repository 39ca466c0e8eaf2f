"""Admin for synonym sets: editors write them, reviewers approve and publish, like entry versions."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Prefetch, QuerySet
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from knowledge.admin.base import NamespaceScopedAdmin, ServiceErrorsShown, namespace_action
from knowledge.admin.workflow import ReviewWorkflowAdmin
from knowledge.errors import ServiceError
from knowledge.models import Role, SynonymSet, SynonymVersion
from knowledge.models.entry import OPEN_STATES
from knowledge.retrieval.analysis import AnalyzerConfig
from knowledge.retrieval.synonyms import SynonymSet as SynonymRule
from knowledge.retrieval.synonyms import synonym_rules
from knowledge.services.synonyms import (
    SYNONYM_ACTIONS,
    SynonymContent,
    synonym_contributor_ids,
    synonym_draft,
    synonym_duplicate_check,
    synonym_save,
    synonym_set_create,
    synonym_set_name_clean,
)
from knowledge.services.versions import ACTION_ROLES


class PhraseLinesField(forms.CharField):
    """Phrases typed one per line."""

    widget = forms.Textarea(attrs={"rows": 5})

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(value) if isinstance(value, list | tuple) else value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        return [line.strip() for line in text.splitlines() if line.strip()]


PHRASES_HELP = (
    "One phrase per line, any language (e.g. token budget / Token 预算). Two-way: each phrase also "
    "searches for the others; one-way: only the first line does."
)


class SynonymContentForm(forms.ModelForm):
    phrases = PhraseLinesField(help_text=PHRASES_HELP)

    def synonym_content(self) -> SynonymContent:
        data = self.cleaned_data
        return SynonymContent.build(
            phrases=data["phrases"], two_way=data.get("two_way", True), enabled=data.get("enabled", True)
        )

    def clean(self) -> dict[str, Any]:
        """The services' checks, shown on the phrases field: content, then duplicates of other sets."""
        cleaned = super().clean() or {}
        if "phrases" in cleaned:
            try:
                self.duplicate_check(self.synonym_content())
            except ServiceError as error:
                self.add_error("phrases", forms.ValidationError(str(error), code=getattr(error, "code", "invalid")))
        return cleaned

    def duplicate_check(self, content: SynonymContent) -> None:
        """Another set of the namespace with the same phrases (the forms below know which namespace)."""


class SynonymSetCreateForm(SynonymContentForm):
    """A new set: its namespace and name, and the phrases of its first draft."""

    two_way = forms.BooleanField(
        required=False, initial=True, help_text=SynonymVersion._meta.get_field("two_way").help_text
    )
    enabled = forms.BooleanField(required=False, initial=True, widget=forms.HiddenInput)

    class Meta:
        model = SynonymSet
        fields = ["namespace", "name"]

    def clean_name(self) -> str:
        try:
            return synonym_set_name_clean(self.cleaned_data["name"])
        except ServiceError as error:
            raise forms.ValidationError(str(error), code=getattr(error, "code", "invalid")) from error

    def duplicate_check(self, content: SynonymContent) -> None:
        if self.cleaned_data.get("namespace") is not None:
            synonym_duplicate_check(namespace=self.cleaned_data["namespace"], content=content)


class SynonymVersionForm(SynonymContentForm):
    class Meta:
        model = SynonymVersion
        fields = ["phrases", "two_way", "enabled"]

    def duplicate_check(self, content: SynonymContent) -> None:
        synonym_set = self.instance.synonym_set
        synonym_duplicate_check(namespace=synonym_set.namespace, content=content, synonym_set=synonym_set)


def _phrases(version: SynonymVersion | None) -> str:
    if version is None:
        return "—"
    arrow = " ⇄ " if version.two_way else " → "
    text = arrow.join(version.phrases)
    return text if version.enabled else f"(switched off) {text}"


@admin.register(SynonymSet)
class SynonymSetAdmin(ServiceErrorsShown, NamespaceScopedAdmin):
    list_display = ["name", "namespace", "live", "pending"]
    list_filter = ["namespace"]
    list_select_related = ["namespace", "live_version"]
    search_fields = ["name"]
    readonly_fields = ["namespace", "name", "live", "versions_table"]
    actions = ["open_drafts"]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is None:
            kwargs["form"] = SynonymSetCreateForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ["namespace", "name", "phrases", "two_way", "enabled"]
        return self.readonly_fields

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.readonly_fields if obj is not None else []

    def save_model(self, request: HttpRequest, obj: SynonymSet, form: Any, change: bool) -> None:
        if change:
            return  # a set's name and namespace never change; its phrases change through versions
        created, _ = synonym_set_create(
            namespace=form.cleaned_data["namespace"],
            name=form.cleaned_data["name"],
            content=form.synonym_content(),
            actor=request.user,
        )
        obj.pk = created.pk

    def response_add(self, request: HttpRequest, obj: SynonymSet, post_url_continue: str | None = None) -> Any:
        draft = obj.versions.order_by("-number").first()
        assert draft is not None  # synonym_set_create made the first version
        messages.success(request, f"Synonym set “{obj.name}” created as a draft: submit it for review.")
        return HttpResponseRedirect(reverse("admin:knowledge_synonymversion_change", args=[draft.pk]))

    @admin.display(description="Live (in releases)")
    def live(self, obj: SynonymSet) -> str:
        return _phrases(obj.live_version)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        open_versions = Prefetch(
            "versions", queryset=SynonymVersion.objects.filter(state__in=OPEN_STATES), to_attr="open_versions"
        )
        return super().get_queryset(request).prefetch_related(open_versions)

    @admin.display(description="Open version")
    def pending(self, obj: SynonymSet) -> str:
        version = next(iter(getattr(obj, "open_versions", ())), None)
        if version is None:
            return "—"
        url = reverse("admin:knowledge_synonymversion_change", args=[version.pk])
        return format_html('<a href="{}">v{} {}</a>', url, version.number, version.get_state_display().lower())

    @admin.display(description="Versions")
    def versions_table(self, obj: SynonymSet) -> SafeString:
        rows = [
            (
                reverse("admin:knowledge_synonymversion_change", args=[v.pk]),
                f"v{v.number}",
                v.get_state_display(),
                _phrases(v),
                v.author or "",
                v.reviewer or "",
            )
            for v in obj.versions.select_related("author", "reviewer").order_by("-number")
        ]
        body = format_html_join(
            "", '<tr><td><a href="{}">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>', rows
        )
        header = SafeString("<tr><th>Version</th><th>State</th><th>Phrases</th><th>Author</th><th>Reviewer</th></tr>")
        return format_html("<table>{}{}</table>", header, body)

    @namespace_action(role=Role.EDITOR, description="Edit: open a draft of the selected sets")
    def open_drafts(self, request: HttpRequest, queryset: QuerySet[SynonymSet]) -> Any:
        drafts = []
        for synonym_set in queryset:
            try:
                drafts.append(synonym_draft(synonym_set=synonym_set, actor=request.user))
            except ServiceError as error:
                messages.error(request, f"{synonym_set}: {error}")
        if len(drafts) == 1:
            return HttpResponseRedirect(reverse("admin:knowledge_synonymversion_change", args=[drafts[0].pk]))
        if drafts:
            messages.success(request, f"{len(drafts)} draft(s) open.")
        return None


@admin.register(SynonymVersion)
class SynonymVersionAdmin(ServiceErrorsShown, ReviewWorkflowAdmin):
    namespace_path = "synonym_set__namespace"
    transitions = SYNONYM_ACTIONS
    action_roles = ACTION_ROLES
    transition_page = True
    scanned = False  # phrases steer search; agents never read them
    subject_noun = "synonym set"
    actions = ()  # no bulk review of synonym sets
    form = SynonymVersionForm
    list_display = ["label", "namespace", "state", "phrases_shown", "author", "reviewer", "modified_at"]
    list_filter = ["state", "synonym_set__namespace"]
    list_select_related = ["synonym_set__namespace", "author", "reviewer"]
    search_fields = ["synonym_set__name"]
    readonly_fields = ["set_link", "number", "state", "live", "expansion", "author", "reviewer", "review_note"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a version starts from its set: "Add synonym set" or "Edit" on a set

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [
            "set_link",
            "number",
            "state",
            "phrases",
            "two_way",
            "enabled",
            "live",
            "expansion",
            *self.readonly_fields[5:],
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if self._is_editable(request, obj):
            return self.readonly_fields
        return [*self.readonly_fields, "phrases", "two_way", "enabled"]

    def save_draft(self, request: HttpRequest, obj: SynonymVersion, form: Any) -> None:
        synonym_save(version=obj, content=form.synonym_content(), actor=request.user)

    # -- the review page's hooks ---------------------------------------------------------------------

    def diff_fields(self, version: SynonymVersion) -> list[tuple[str, Any]]:
        direction = "two-way" if version.two_way else "one-way (the first phrase finds the others)"
        return [("phrases", version.phrases), ("direction", direction), ("enabled", version.enabled)]

    def version_title(self, version: SynonymVersion) -> str:
        return _phrases(version)

    def subject_name(self, version: SynonymVersion) -> str:
        return f"synonym set “{version.synonym_set.name}”"

    def contributor_ids(self, version: SynonymVersion) -> set[int]:
        return synonym_contributor_ids(version)

    def revise(self, request: HttpRequest, version: SynonymVersion) -> SynonymVersion:
        return synonym_draft(synonym_set=version.synonym_set, actor=request.user, base=version)

    @admin.display(description="Version", ordering="synonym_set__name")
    def label(self, obj: SynonymVersion) -> str:
        return str(obj)

    @admin.display(description="Namespace")
    def namespace(self, obj: SynonymVersion) -> str:
        return obj.synonym_set.namespace.slug

    @admin.display(description="Phrases")
    def phrases_shown(self, obj: SynonymVersion) -> str:
        return _phrases(obj)

    @admin.display(description="Set")
    def set_link(self, obj: SynonymVersion) -> str:
        url = reverse("admin:knowledge_synonymset_change", args=[obj.synonym_set_id])
        return format_html('<a href="{}">{}</a> ({})', url, obj.synonym_set.name, obj.synonym_set.namespace.slug)

    @admin.display(description="Live version (what releases use now)")
    def live(self, obj: SynonymVersion) -> str:
        return _phrases(obj.synonym_set.live_version)

    @admin.display(description="How topics expand once published")
    def expansion(self, obj: SynonymVersion) -> SafeString:
        """Each phrase as the engine analyses it, and what a topic containing it also searches for."""
        if not obj.enabled:
            return format_html("<p>{}</p>", "Switched off: once published, topics no longer expand with this set.")
        rules = synonym_rules([SynonymRule(tuple(obj.phrases), obj.two_way)], AnalyzerConfig())
        rows = [(" ".join(source), "; ".join(" ".join(t) for t in targets)) for source, targets in rules.items()]
        body = format_html_join("", "<tr><td>{}</td><td>{}</td></tr>", rows)
        return format_html("<table><tr><th>Topic terms</th><th>Also searched</th></tr>{}</table>", body)
