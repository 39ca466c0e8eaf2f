"""What reviewers look at: the diff against the live version, the agent's view, the warnings."""

from __future__ import annotations

import difflib
import json

from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from knowledge.models import Entry, EntryVersion
from knowledge.retrieval.authoring import Draft, authoring_warnings
from knowledge.retrieval.contract.shapes import ENTRY, Served
from knowledge.retrieval.paths import glob_example
from knowledge.retrieval.render.safe_html import markdown_to_safe_html
from knowledge.retrieval.snapshot import ReleaseStamp
from knowledge.selectors.snapshots import entry_record, namespace_info

DIFF_FIELDS = ["title", "summary", "body", "tags", "aliases", "links", "confidence", "updated", "paths"]


def _field_lines(version: EntryVersion | None, field: str) -> list[str]:
    if version is None:
        return []
    value = getattr(version, field)
    if isinstance(value, list):
        return [", ".join(value)]
    return str(value).splitlines() or [""]


def diff_table(version: EntryVersion) -> SafeString:
    """A side-by-side diff of each field against the live version (or “new entry”)."""
    live = version.entry.live_version
    if live is not None and live.pk == version.pk:
        return mark_safe("<p>This is the live version.</p>")
    differ = difflib.HtmlDiff(wrapcolumn=70)
    tables = []
    for field in DIFF_FIELDS:
        before, after = _field_lines(live, field), _field_lines(version, field)
        if before == after:
            continue
        old = f"live v{live.number}" if live else "(new entry)"
        tables.append(
            format_html("<h4>{}</h4>{}", field, mark_safe(differ.make_table(before, after, old, f"v{version.number}")))  # noqa: S308
        )
    if not tables:
        return mark_safe("<p>No change from the live version.</p>")
    return mark_safe('<div class="evergreen-diff">' + "".join(tables) + "</div>")  # noqa: S308


def preview_html(version: EntryVersion) -> SafeString:
    """The entry as /api/context returns it, and its body rendered from Markdown (sanitised)."""
    record = entry_record(entry=version.entry, version=version)
    # Not in a release yet: the stamp only dates the preview (the entry shape does not show it).
    stamp = ReleaseStamp(sequence=0, knowledge_version="", revision=timezone.localdate().isoformat(), generated_at="")
    served = Served(record, namespace_info(namespace=version.entry.namespace), stamp)
    payload = json.dumps(ENTRY.json(served), ensure_ascii=False, indent=2)
    body = markdown_to_safe_html(version.body)
    aliases = (
        format_html(
            "<p>Also found as: <strong>{}</strong> "
            "(aliases are searched like the title; agents do not receive them)</p>",
            ", ".join(version.aliases),
        )
        if version.aliases
        else ""
    )
    return format_html(
        "<p><strong>{} tokens</strong> (seed §4 estimate of title + summary + body)</p>{}{}"
        '<div class="evergreen-preview">{}</div><details><summary>JSON</summary><pre>{}</pre></details>',
        version.tokens,
        aliases,
        paths_preview_html(version.paths),
        mark_safe(body),  # noqa: S308  # sanitised by markdown_to_safe_html (nh3)
        payload,
    )


def paths_preview_html(globs: list[str]) -> SafeString:
    """What the path globs do for an agent, with a path each glob matches (checked by the matcher)."""
    if not globs:
        return mark_safe(  # a constant
            "<p>No path globs: the entry applies everywhere; a request with <code>paths</code> finds it "
            "by its topic, as one without.</p>"
        )
    examples = [example for glob in globs if (example := glob_example(glob)) is not None]
    shown = ", ".join(f"paths={example}" for example in examples[:3]) or "a path one of its globs matches"
    return format_html(
        "<p>Applies to <strong>{}</strong>. With <code>{}</code> an agent gets this entry first, before "
        "topic hits; a request whose paths match none of these globs leaves it out; a request without "
        "<code>paths</code> finds it by topic.</p>",
        ", ".join(globs),
        shown,
    )


def warnings_html(version: EntryVersion) -> SafeString:
    entries = Entry.objects.filter(namespace_id=version.entry.namespace_id, public_id__in=version.links)
    states = {e.public_id: "retired" if e.retired_at else "live" for e in entries}
    draft = Draft(
        title=version.title,
        summary=version.summary,
        body=version.body,
        confidence=float(version.confidence),
        updated=version.updated,
        links=tuple(version.links),
    )
    warnings = authoring_warnings(draft, link_states=states, today=timezone.localdate())
    if not warnings:
        return mark_safe("<p>None.</p>")
    return format_html(
        '<ul class="evergreen-warnings">{}</ul>', format_html_join("", "<li>{}</li>", ((w,) for w in warnings))
    )
