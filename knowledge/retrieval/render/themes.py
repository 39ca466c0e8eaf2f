"""Themes (issue 16 §3): one Markdown file per theme, and the llms.txt section that routes to them.

An agent reads the theme list in llms.txt (a title, a short description, how many entries and
tokens), picks a theme, and loads its file: the theme's entries in full, in the editor's order. Only
entries of the public view are listed (the files are public); an ID the release does not serve is
left out. A base's theme (its ``layer`` set) lives at ``themes/<layer>/<slug>.md``. Pure.
"""

from __future__ import annotations

from knowledge.retrieval.contract.quoting import one_line, quoted_entry
from knowledge.retrieval.snapshot import EntryRecord, ReleaseStamp, Snapshot, ThemeRecord

THEMES_HEADING = "## Themes"


def theme_file(slug: str) -> str:
    return f"themes/{slug}.md"


def theme_entries(snapshot: Snapshot, theme: ThemeRecord) -> list[EntryRecord]:
    served = {entry.id: entry for entry in snapshot.entries}
    return [served[entry_id] for entry_id in theme.entries if entry_id in served]


def theme_lines(snapshot: Snapshot) -> list[str]:
    """The llms.txt section: a link per theme with its entry count and token total (empty without themes)."""
    if not snapshot.themes:
        return []
    lines = [THEMES_HEADING, ""]
    for theme in snapshot.themes:
        entries = theme_entries(snapshot, theme)
        tokens = sum(entry.tokens for entry in entries)
        summary = f"{one_line(theme.summary)} " if theme.summary else ""
        url = snapshot.namespace.url(theme_file(theme.slug))
        layer = f"; layer {theme.layer}" if theme.layer else ""
        lines.append(f"- [{one_line(theme.title)}]({url}): {summary}({len(entries)} entries, {tokens} tokens{layer})")
    return [*lines, ""]


def render_theme_md(snapshot: Snapshot, stamp: ReleaseStamp, theme: ThemeRecord) -> bytes:
    """themes/<slug>.md: the theme's description and its entries in full, as quoted data with their IDs."""
    entries = theme_entries(snapshot, theme)
    lines = [
        f"# {one_line(theme.title)}",
        "",
        *([f"> {one_line(theme.summary)}", ""] if theme.summary else []),
        f"{len(entries)} entries, {sum(e.tokens for e in entries)} tokens; knowledge version "
        f"{stamp.knowledge_version}. Cite each as [ID].",
        "",
    ]
    for entry in entries:
        lines += [f"## [{entry.id}] {one_line(entry.title)}", "", quoted_entry(entry, text=entry.body), ""]
    return "\n".join(lines).encode()
