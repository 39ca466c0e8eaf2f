"""Forms of the editorial admin: list fields as comma-separated text, optimistic locking."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django import forms
from django.utils import timezone

from knowledge.errors import STALE_DRAFT
from knowledge.models import Entry, EntryVersion, Namespace, Sensitivity
from knowledge.retrieval.paths import globs_normalize
from knowledge.services.content import (
    ContentReferenceError,
    ContentSizeError,
    VersionContent,
    content_sizes_check,
    content_text_problem,
    links_normalize,
    overridden_id_normalize,
    references_check,
)


class CommaListField(forms.CharField):
    """A list of strings typed as `a, b, c`."""

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return ", ".join(value)
        return value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        return [item.strip() for item in text.replace("，", ",").split(",") if item.strip()]

    def run_validators(self, value: Any) -> None:
        """CharField's validators on each item: run on the list, "Null characters are not allowed" looked for
        NUL in the list's repr (an escape) and missed it, and PostgreSQL's refusal became a 503 (QA)."""
        for item in value:
            super().run_validators(item)


class GlobListField(forms.CharField):
    """Path globs, one a line (a glob may hold commas: ``*.{ts,tsx}``), checked as the engine reads them."""

    widget = forms.Textarea(attrs={"rows": 3})

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return "\n".join(value)
        return value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        return [line.strip() for line in text.splitlines() if line.strip()]

    def validate(self, value: Any) -> None:
        super().validate(value)
        try:
            globs_normalize(value)
        except ValueError as error:
            raise forms.ValidationError(str(error), code="invalid_glob") from error


CONTENT_FIELDS = [
    "title",
    "summary",
    "body",
    "tags",
    "aliases",
    "confidence",
    "links",
    "updated",
    "sensitivity",
    "review_by",
    "valid_until",
    "paths",
    "overrides",
]


class ContentFormMixin(forms.Form):
    tags = CommaListField(required=False, help_text="Comma-separated, e.g. token, budget.")
    aliases = CommaListField(
        required=False,
        help_text="Alternate titles, also in another language, comma-separated (e.g. Token budget, 预算纪律). "
        "Searched like the title; agents do not receive them.",
    )
    links = CommaListField(required=False, help_text="Related entry IDs, e.g. EG-201, EG-101.")
    paths = GlobListField(
        required=False,
        help_text="Only for rules about certain files: one path glob a line (src/api/**/*.py, *.sql, docs/**). "
        "** spans directories, a glob without / matches the file name anywhere, case counts. Agents that send "
        "the paths they work on get this entry first when a glob matches, and never when none does. "
        "Empty: the entry applies everywhere.",
    )
    overrides = forms.CharField(
        required=False,
        max_length=32,
        help_text="Only in a namespace built on base namespaces: the ID of the base entry this one replaces "
        "(e.g. AC-101). Agents then get this entry and never the base one.",
    )
    sensitivity = forms.ChoiceField(
        choices=Sensitivity.choices,
        required=False,
        help_text="Public entries go everywhere; internal and restricted ones only to API keys cleared for them.",
    )

    def version_content(self) -> VersionContent:
        data: dict[str, Any] = {name: self.cleaned_data.get(name) for name in CONTENT_FIELDS}
        # A form posted without it keeps the draft's level (never silently public).
        data["sensitivity"] = data["sensitivity"] or getattr(getattr(self, "instance", None), "sensitivity", "public")
        return VersionContent.build(**data)

    def reference_scope(self, cleaned: dict[str, Any]) -> tuple[Namespace, str | None] | None:
        """The namespace the content's links and overrides are checked in, and the entry's ID (None: unknown)."""
        return None

    def clean(self) -> dict[str, Any]:
        """What VersionContent.build and the save's services refuse (knowledge.services.content) is the form's
        error beside its field, with every typed character kept, not a 500 or an emptied form (QA)."""
        cleaned = super().clean() or {}
        texts: dict[str, str] = {name: cleaned.get(name) or "" for name in ("title", "summary", "body")}
        lists: dict[str, list[str]] = {name: cleaned.get(name) or [] for name in ("tags", "aliases", "links")}
        try:
            content_sizes_check(title=texts["title"], summary=texts["summary"], body=texts["body"], **lists)
        except ContentSizeError as error:
            self.add_error(error.field if error.field in self.fields else None, str(error))
        for name, value in (*texts.items(), ("tags", lists["tags"]), ("aliases", lists["aliases"])):
            problem = content_text_problem(name, value)
            if problem is not None and name in cleaned:
                self.add_error(name, problem)
        self._references_clean(cleaned)
        return cleaned

    def _references_clean(self, cleaned: dict[str, Any]) -> None:
        scope = self.reference_scope(cleaned)
        if scope is None or "links" not in cleaned or "overrides" not in cleaned:
            return
        namespace, public_id = scope
        try:
            references_check(
                namespace=namespace, public_id=public_id, links=cleaned["links"], overrides=cleaned["overrides"]
            )
        except ContentReferenceError as error:
            field = error.code.split(".", 1)[0]
            self.add_error(field if field in self.fields else None, str(error))

    def clean_links(self) -> list[str]:
        try:
            return list(links_normalize(self.cleaned_data["links"] or []))
        except ValueError as error:
            raise forms.ValidationError(str(error), code="invalid_link") from error

    def clean_overrides(self) -> str:
        try:
            return overridden_id_normalize(self.cleaned_data["overrides"] or "")
        except ValueError as error:
            raise forms.ValidationError(str(error), code="invalid_overrides") from error


class EntryCreateForm(ContentFormMixin, forms.ModelForm):
    """A new entry: its category (which fixes namespace and ID block) and its first draft."""

    title = forms.CharField(max_length=500)
    summary = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    body = forms.CharField(widget=forms.Textarea(attrs={"rows": 14}), help_text="Markdown.")
    confidence = forms.DecimalField(min_value=0, max_value=1, decimal_places=2, initial="0.90")
    updated = forms.DateField(help_text="The date agents see, YYYY-MM-DD.")
    review_by = forms.DateField(
        required=False, help_text="Re-review due (YYYY-MM-DD). Empty: the category's default after approval."
    )
    valid_until = forms.DateField(
        required=False, help_text="Past this date the entry leaves the packs and waits for a decision."
    )

    class Meta:
        model = Entry
        fields = ["category"]

    def reference_scope(self, cleaned: dict[str, Any]) -> tuple[Namespace, str | None] | None:
        category = cleaned.get("category")
        return (category.namespace, None) if category is not None else None


class VersionForm(ContentFormMixin, forms.ModelForm):
    """Edits a draft. `based_on` carries the lock version the editor started from (optimistic lock)."""

    based_on = forms.IntegerField(widget=forms.HiddenInput)

    class Meta:
        model = EntryVersion
        fields = CONTENT_FIELDS
        widgets = {"summary": forms.Textarea(attrs={"rows": 2}), "body": forms.Textarea(attrs={"rows": 16})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["based_on"].initial = self.instance.lock_version

    def reference_scope(self, cleaned: dict[str, Any]) -> tuple[Namespace, str | None] | None:
        entry = self.instance.entry if self.instance.pk else None
        return (entry.namespace, entry.public_id) if entry is not None else None

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        expected = cleaned.get("based_on")
        if self.instance.pk and expected is not None:
            # The admin's change view runs in a transaction: this row lock lasts until the save.
            current = (
                EntryVersion.objects.select_for_update().values_list("lock_version", flat=True).get(pk=self.instance.pk)
            )
            if current != expected:
                # Keep every typed character and move the form onto the saved draft, so that a
                # second save, after the editor compared both, goes through.
                data = self.data.copy()  # type: ignore[attr-defined]  # a QueryDict when bound to a request
                data[self.add_prefix("based_on")] = str(current)
                self.data = data
                raise forms.ValidationError(STALE_DRAFT.format(expected=expected, current=current), code="conflict")
        return cleaned


PUBLISH_AT_GRACE = timedelta(minutes=5)  # a clock a little behind, or a slow form, is not an error
PUBLISH_AT_PAST = "This time has passed: choose a time in the future, or leave it empty."


class NoteForm(forms.Form):
    note = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)
    acknowledgement = forms.CharField(
        required=False, max_length=1000, help_text="Approve only: why the safety scan's warnings are acceptable."
    )
    publish_at = forms.DateTimeField(required=False, help_text="Optional scheduled go-live (approve only).")

    def clean_publish_at(self) -> datetime | None:
        """Refuse a go-live already past (the management API's rule): it would publish at once, unasked."""
        publish_at: datetime | None = self.cleaned_data.get("publish_at")
        if publish_at is not None and publish_at < timezone.now() - PUBLISH_AT_GRACE:
            raise forms.ValidationError(PUBLISH_AT_PAST, code="past")
        return publish_at


class RetireForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), help_text="Agents receive it with 410 Gone.")
    replaced_by = forms.CharField(required=False, max_length=32, help_text="Optional replacement ID.")
