"""What reviewers of an entry version look at besides the diff: the agent's view and the authoring warnings."""

from __future__ import annotations

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
from knowledge.selectors.layers import layers_below
from knowledge.selectors.snapshots import entry_record, namespace_info


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


OVERRIDES_NOTHING = (
    "Overrides {id}, which is no live entry of a namespace this one builds on ({bases}): it replaces nothing "
    "and is served as itself."
)


def override_warnings(version: EntryVersion) -> list[str]:
    """An override must name a live entry of a base (issue 16 §1); anything else would silently do nothing."""
    if not version.overrides:
        return []
    below = layers_below(namespace=version.entry.namespace)
    live = Entry.objects.filter(
        namespace__in=below, public_id=version.overrides, retired_at__isnull=True, live_version__isnull=False
    ).exists()
    if live:
        return []
    return [OVERRIDES_NOTHING.format(id=version.overrides, bases=", ".join(b.slug for b in below) or "no base")]


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
    warnings += override_warnings(version)
    if not warnings:
        return mark_safe("<p>None.</p>")
    return format_html(
        '<ul class="evergreen-warnings">{}</ul>', format_html_join("", "<li>{}</li>", ((w,) for w in warnings))
    )
