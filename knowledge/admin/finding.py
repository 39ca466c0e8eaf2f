"""The agent preview's explanation: does the serving release pack the entry for its own title, and why."""

from __future__ import annotations

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from knowledge.models import EntryVersion
from knowledge.selectors.explain import entry_found_for


def finding_html(version: EntryVersion) -> SafeString:
    """What /api/context?topic=<title>&explain=1&why=<ID> says about the entry in the serving release."""
    entry = version.entry
    found = entry_found_for(namespace=entry.namespace, topic=version.title, entry_id=entry.public_id)
    if found is None:
        return mark_safe("<p>No release yet: agents cannot find anything.</p>")
    parts = found.get("breakdown", {}).get("terms", [])
    terms = format_html_join(", ", "{} {} ({})", ((p["term"], p["part"], ", ".join(p["fields"])) for p in parts))
    rank = (
        format_html(" Rank {}, score {}: {}.", found["rank"], found["breakdown"]["score"], terms)
        if "rank" in found
        else ""
    )
    return format_html(
        '<p id="evergreen-finding">Asked “{}” (release #{}, matched={}): <strong>{}</strong> {}{}</p>'
        "<p>The same explanation as <code>/api/context?topic=…&amp;explain=1&amp;why={}</code>.</p>",
        found["topic"],
        found["releaseId"],
        str(found["matching"]["matched"]).lower(),
        found["outcome"],
        found["reason"],
        rank,
        entry.public_id,
    )
