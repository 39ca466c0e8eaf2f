"""The form that edits a reviewed text's draft: the fields of its kind, and optimistic locking."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from knowledge.models import ReviewedText, TextVersion
from knowledge.services.text_kinds import KINDS

FAQ_HELP = 'A JSON list: [{"question": "…", "answer": "…"}, …]'


class RulesField(forms.CharField):
    """Rules typed one per line."""

    widget = forms.Textarea(attrs={"rows": 6})

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(value) if isinstance(value, list | tuple) else value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        text = super().to_python(value) or ""
        return [line.strip() for line in text.splitlines() if line.strip()]


class FaqField(forms.CharField):
    widget = forms.Textarea(attrs={"rows": 8})

    def prepare_value(self, value: Any) -> Any:
        return json.dumps(value, ensure_ascii=False, indent=1) if isinstance(value, list) else value

    def to_python(self, value: Any) -> Any:
        text = (super().to_python(value) or "").strip()
        if not text:
            return []
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise forms.ValidationError(f"Not valid JSON ({error.msg}). {FAQ_HELP}") from None


def _content_fields() -> dict[str, forms.Field]:
    return {
        "title": forms.CharField(max_length=200, required=False),
        "summary": forms.CharField(max_length=300, required=False, widget=forms.Textarea(attrs={"rows": 2})),
        "contact": forms.CharField(max_length=200, required=False),
        "rules": RulesField(required=False, help_text="One rule per line; every response carries them."),
        "faq": FaqField(required=False, help_text=FAQ_HELP),
        "body": forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 18}), help_text="Markdown."),
        "entries": RulesField(required=False, help_text="The theme's entry IDs, one per line (e.g. EG-202)."),
        "bases": RulesField(
            required=False,
            help_text="Base namespaces this one builds on, one slug a line, the most important first. Releases "
            "include their published entries (with their own IDs) after this namespace's own; an entry here "
            "overrides a base entry by naming its ID in its Overrides field. A public namespace cannot build on "
            "a private one; cycles are refused. Takes effect with the first release after it is published.",
        ),
        "position": forms.IntegerField(min_value=0, max_value=32767, required=False, initial=0),
        "template": forms.CharField(
            required=False,
            widget=forms.Textarea(attrs={"rows": 18}),
            help_text="What users paste into an assistant; ${base_url} is filled in when served.",
        ),
    }


class TextVersionForm(forms.ModelForm):
    """The content fields of the text's kind; `based_on` is the lock version the editor started from."""

    based_on = forms.IntegerField(widget=forms.HiddenInput)

    class Meta:
        model = TextVersion
        fields: list[str] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        kind = self.instance.text.kind if self.instance.pk else None
        names = KINDS[kind].fields if kind else ()
        available = _content_fields()
        for name in names:
            self.fields[name] = available[name]
            self.fields[name].initial = (self.instance.content or {}).get(name)
        if self.instance.pk:
            self.fields["based_on"].initial = self.instance.lock_version

    def text_content(self) -> dict[str, Any]:
        names = KINDS[self.instance.text.kind].fields
        content = {name: self.cleaned_data.get(name) for name in names}
        if "position" in content and content["position"] is None:
            content["position"] = 0
        return {name: "" if value is None else value for name, value in content.items()}


def text_fieldnames(text: ReviewedText | None) -> list[str]:
    return list(KINDS[text.kind].fields) if text is not None else []


class TextCreateForm(forms.ModelForm):
    """A new text: its namespace, kind and key; the first draft opens next."""

    class Meta:
        model = ReviewedText
        fields = ["namespace", "kind", "key"]
