"""While an editor types: the token cost, the Markdown as agents' readers will see it, the authoring warnings
and existing entries like this one (from the serving release), answered as JSON to the admin's script.
Doc pages and prompt packs get the cost and the Markdown (warnings and near duplicates are about entries)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.utils import timezone

from knowledge.admin.forms import CommaListField
from knowledge.models import Entry, Namespace
from knowledge.retrieval.authoring import Draft, authoring_warnings
from knowledge.retrieval.render.safe_html import markdown_to_safe_html
from knowledge.retrieval.tokens import entry_tokens, estimate_tokens
from knowledge.selectors.similar import similar_entries

TEXT_MAX = 200_000  # a body longer than this is not previewed (the form itself refuses nothing here)


def _confidence(text: str) -> float:
    try:
        return min(max(float(text), 0.0), 1.0)
    except ValueError:
        return 1.0  # unparsable: the form will say so on save; no confidence warning meanwhile


def _updated(text: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        return timezone.localdate()


def live_preview(request: HttpRequest, *, namespace: Namespace, exclude: str = "") -> HttpResponse:
    """POST the form's fields; the answer is what the page shows beside the form. Nothing is saved."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    field = request.POST.get
    title, summary, body = field("title", "")[:TEXT_MAX], field("summary", "")[:TEXT_MAX], field("body", "")[:TEXT_MAX]
    links = CommaListField(required=False).clean(field("links", ""))
    states = {
        e.public_id: "retired" if e.retired_at else "live"
        for e in Entry.objects.filter(namespace=namespace, public_id__in=links).only("public_id", "retired_at")
    }
    draft = Draft(
        title=title,
        summary=summary,
        body=body,
        confidence=_confidence(field("confidence", "")),
        updated=_updated(field("updated", "")),
        links=tuple(links),
    )
    similar = similar_entries(namespace=namespace, title=title, exclude=exclude)
    return JsonResponse(
        {
            "tokens": entry_tokens(title=title, summary=summary, body=body),
            "html": markdown_to_safe_html(body),
            "warnings": authoring_warnings(draft, link_states=states, today=timezone.localdate()),
            "similar": [{"id": s.id, "title": s.title, "nearDuplicate": s.near_duplicate} for s in similar],
        }
    )


# A reviewed text's fields agents read (and pay tokens for), and the one shown rendered from Markdown.
TEXT_READ_FIELDS = ("title", "summary", "body", "template")
MARKDOWN_FIELDS = ("body", "template")


def text_live_preview(request: HttpRequest, *, fields: Sequence[str]) -> HttpResponse:
    """A doc page's or prompt pack's draft while typed: its token cost and its Markdown rendered. Nothing is saved."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    typed = {name: request.POST.get(name, "")[:TEXT_MAX] for name in TEXT_READ_FIELDS if name in fields}
    markdown = next((typed[name] for name in MARKDOWN_FIELDS if name in typed), "")
    return JsonResponse(
        {
            "tokens": estimate_tokens("".join(typed.values())),
            "html": markdown_to_safe_html(markdown),
            "warnings": [],
            "similar": [],
        }
    )
