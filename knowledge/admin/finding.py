"""The agent preview's explanation: does the serving release pack the entry for its own title, and why; and
what an agent working on a path the entry's globs match gets from it."""

from __future__ import annotations

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from knowledge.models import EntryVersion
from knowledge.retrieval.paths import glob_example
from knowledge.selectors.explain import entry_found_for, paths_answer


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


def paths_finding_html(version: EntryVersion) -> SafeString:
    """With paths=<a path the version's first matching glob example names>, what the serving release packs
    (issue 16 §4): the IDs, titles and layers an agent gets, and whether this entry is among them."""
    example = next((found for glob in version.paths if (found := glob_example(glob)) is not None), None)
    if example is None:
        return mark_safe("")  # no globs (or none with an example): the paths preview above says what that means
    entry = version.entry
    answer = paths_answer(namespace=entry.namespace, paths=[example])
    if answer is None:
        return mark_safe("")
    got = format_html_join(
        ", ",
        "<code>{}</code> {}{}",
        ((e.id, e.title, f" (layer {e.layer})" if e.layer else "") for e in answer.entries),
    )
    served = any(e.id == entry.public_id for e in answer.entries)
    verdict = (
        "This entry is among them."
        if served
        else "This entry is not among them yet: the release serves no version of it with these globs."
    )
    return format_html(
        '<p id="evergreen-paths-finding">With <code>paths={}</code> an agent gets (release #{}, no topic): {}. {}</p>',
        example,
        answer.release_id,
        got or "nothing",
        verdict,
    )
