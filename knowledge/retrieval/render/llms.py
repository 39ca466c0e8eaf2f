"""/llms.txt and /llms-full.txt in the llms.txt format (llmstxt.org), with each entry's token cost."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from knowledge.retrieval.contract.quoting import DATA_NOTICE, one_line, quoted_entry
from knowledge.retrieval.contract.shapes import agent_rules
from knowledge.retrieval.render.themes import theme_lines
from knowledge.retrieval.snapshot import DocRecord, EntryRecord, ReleaseStamp, Snapshot

DOC_NOTE_MAX_CHARS = 160
# Large namespaces: beyond these, the files keep each category's share and say where the rest is, so an
# agent never loads megabytes by accident (issue 10); per-category variants hold each category alone.
LLMS_TXT_MAX_ENTRIES = 1000
LLMS_FULL_MAX_ENTRIES = 300
_SENTENCE_END = re.compile(r"(?<=[。！？])|(?<=[.!?])\s")
_MARKUP = re.compile(r"[*_`]|\[([^\]]*)\]\([^)]*\)")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _link_text(text: str) -> str:
    """Link text without brackets: the reference parser reads a title as `[^\\]]+`."""
    return _one_line(text).replace("[", "(").replace("]", ")")


def _info_line(text: str) -> str:
    """A free-text line of the info part that can never open a section (the parser splits on `^##`)."""
    line = _one_line(text)
    return "\\" + line if line.startswith("#") else line


def _layer_note(entry: EntryRecord) -> str:
    """Issue 16 §1: in a namespace built on bases, which layer (namespace) the entry comes from."""
    return f", layer {entry.layer}" if entry.layer else ""


def _entry_link(snapshot: Snapshot, entry: EntryRecord) -> str:
    url = snapshot.namespace.url(f"api/entries/{entry.id}.md")
    notes = (
        f"{_one_line(entry.summary)} ({entry.tokens} tokens, confidence {entry.confidence:.2f}, "
        f"updated {entry.updated}{_layer_note(entry)})"
    )
    return f"- [{entry.id} {_link_text(entry.title)}]({url}): {notes}"


def _doc_note(doc: DocRecord) -> str:
    """The first sentence of the page's first paragraph, as plain text (llms.txt: "- [name](url): notes")."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", doc.body) if p.strip()]
    first = next((p for p in paragraphs if not p.startswith(("#", "|", "-", ">", "```"))), "")
    text = _one_line(_MARKUP.sub(lambda m: m.group(1) or "", first))
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0].strip() if text else ""
    if len(sentence) > DOC_NOTE_MAX_CHARS:
        sentence = sentence[: DOC_NOTE_MAX_CHARS - 1].rstrip() + "…"
    return sentence


def _doc_link(snapshot: Snapshot, doc: DocRecord) -> str:
    link = f"- [{_link_text(doc.title)}]({snapshot.namespace.url(f'docs/{doc.slug}.md')})"
    note = _doc_note(doc)
    return f"{link}: {note}" if note else link


# The last entries grouped and their groups: llms.txt, llms-full.txt and the category variants each
# ask for the same release's groups (seven passes over every entry per build, before).
_LAST_GROUPED: list[tuple[object, dict[str, list[EntryRecord]]]] = []


def _grouped(snapshot: Snapshot) -> dict[str, list[EntryRecord]]:
    """The entries by category slug, in snapshot (ID) order: one pass, however many categories.
    Callers only read the groups."""
    entries = snapshot.entries
    last = _LAST_GROUPED[0] if _LAST_GROUPED else None
    if last is not None and last[0] is entries:
        return last[1]
    groups: dict[str, list[EntryRecord]] = {}
    for entry in entries:
        groups.setdefault(entry.category, []).append(entry)
    _LAST_GROUPED[:] = [(entries, groups)]
    return groups


def _by_category(snapshot: Snapshot, cap: int) -> Iterable[tuple[str, list[EntryRecord]]]:
    """Each category's entries; past `cap` in all, each category keeps its share (at least one), first by ID."""
    total = len(snapshot.entries)
    groups = _grouped(snapshot)
    for category in snapshot.namespace.categories:
        entries = groups.get(category.slug, [])
        if entries:
            share = len(entries) if total <= cap else max(1, cap * len(entries) // total)
            yield f"{category.name} (`{category.slug}`)", entries[:share]


def category_file(kind: str, slug: str) -> str:
    """The name (and path) of a category's variant: ``llms/<slug>.txt`` or ``llms-full/<slug>.txt``."""
    return f"{kind}/{slug}.txt"


def _omission(snapshot: Snapshot, shown: int, cap: int) -> list[str]:
    """Past the cap, say what is left out and where every entry is (the info part: free Markdown)."""
    if shown >= len(snapshot.entries):
        return []
    ns = snapshot.namespace
    return [
        f"This file holds {shown} of {len(snapshot.entries)} entries (at most about {cap}: the first of each "
        f"category by ID). Each category's own index is {ns.url(category_file('llms', '<category>'))} "
        f"(in full: {ns.url(category_file('llms-full', '<category>'))}); {ns.url('api/context')}?topic=… "
        "searches all of them.",
        "",
    ]


def _variants(snapshot: Snapshot) -> list[str]:
    ns = snapshot.namespace
    groups = _grouped(snapshot)
    counts = {c.slug: len(groups.get(c.slug, ())) for c in ns.categories}
    return [
        f"- [{_link_text(c.name)} (`{c.slug}`)]({ns.url(category_file('llms', c.slug))}): the {counts[c.slug]} "
        f"entries of this category; in full: {ns.url(category_file('llms-full', c.slug))}"
        for c in ns.categories
        if counts[c.slug]
    ]


def _header(snapshot: Snapshot, stamp: ReleaseStamp) -> list[str]:
    ns = snapshot.namespace
    return [
        f"# {_one_line(ns.title)}",
        "",
        f"> {_one_line(ns.summary)}",
        "",
        f"Knowledge version {stamp.knowledge_version}, revision {stamp.revision}: "
        f"{len(snapshot.entries)} entries, {snapshot.total_tokens} tokens in all. "
        f"License {ns.license}." + (f" Contact {ns.contact}." if ns.contact else ""),
        "",
        f"Query {ns.url('api/context')}?topic=…&budget=2000 for a token-budgeted pack of cited facts; "
        f"the full knowledge base is {ns.url('context.json')}.",
        "",
    ]


def _rules(snapshot: Snapshot) -> list[str]:
    lines = ["Rules for answers built from this site:", ""]
    lines += [f"{n}. {_one_line(rule)}" for n, rule in enumerate(agent_rules(snapshot.namespace), start=1)]
    return [*lines, ""]


def render_llms_txt(snapshot: Snapshot, stamp: ReleaseStamp, *, cap: int = LLMS_TXT_MAX_ENTRIES) -> bytes:
    ns = snapshot.namespace
    sections = list(_by_category(snapshot, cap))
    shown = sum(len(entries) for _, entries in sections)
    lines = _header(snapshot, stamp) + _omission(snapshot, shown, cap) + _rules(snapshot) + theme_lines(snapshot)
    for heading, entries in sections:
        lines += [f"## {heading}", "", *(_entry_link(snapshot, e) for e in entries), ""]
    if snapshot.docs:
        lines += ["## Docs", ""]
        lines += [_doc_link(snapshot, d) for d in snapshot.docs]
        lines.append("")
    lines += [
        "## Optional",
        "",
        f"- [llms-full.txt]({ns.url('llms-full.txt')}): every entry in full; load once and cache",
        f"- [context.json]({ns.url('context.json')}): the knowledge base as JSON",
        *_variants(snapshot),
        "",
    ]
    return "\n".join(lines).encode()


def _demote_headings(markdown: str) -> str:
    """Turn Markdown headings into bold lines: inside llms.txt only H1 and H2 carry structure."""
    lines = []
    for line in markdown.strip().splitlines():
        stripped = line.lstrip()
        if stripped.startswith("#"):
            text = stripped.lstrip("#").strip()
            lines.append(f"**{text}**" if text else "")
        else:
            lines.append(line)
    return "\n".join(lines)


def render_llms_full_txt(snapshot: Snapshot, stamp: ReleaseStamp, *, cap: int = LLMS_FULL_MAX_ENTRIES) -> bytes:
    """Every entry in full (up to the cap), in the info part (the format allows free Markdown only there)."""
    sections = list(_by_category(snapshot, cap))
    shown = sum(len(entries) for _, entries in sections)
    lines = [*_header(snapshot, stamp), *_omission(snapshot, shown, cap), *_rules(snapshot), DATA_NOTICE, ""]
    for heading, entries in sections:
        lines += [f"**{heading}**", ""]
        for entry in entries:
            text = f"{_info_line(entry.summary)}\n\n{_demote_headings(entry.body)}"
            lines += [
                f"**[{entry.id}] {one_line(entry.title)}** — confidence {entry.confidence:.2f} · "
                f"{entry.tokens} tokens · updated {entry.updated} · tags {', '.join(entry.tags) or '-'}"
                + (f" · layer {entry.layer}" if entry.layer else ""),
                "",
                quoted_entry(entry, text=text),
                "",
            ]
    lines += ["## Entries", "", *(_entry_link(snapshot, e) for _, entries in sections for e in entries), ""]
    lines += ["## Optional", "", f"- [llms.txt]({snapshot.namespace.url('llms.txt')}): the short index", ""]
    return "\n".join(lines).encode()


def render_category_variants(snapshot: Snapshot, stamp: ReleaseStamp) -> list[tuple[str, bytes, bytes]]:
    """(category, llms.txt, llms-full.txt) of each category that has entries: the same files, one category."""
    variants = []
    groups = _grouped(snapshot)
    for category in snapshot.namespace.categories:
        entries = tuple(groups.get(category.slug, ()))
        if entries:
            alone = replace(snapshot, entries=entries)
            variants.append((category.slug, render_llms_txt(alone, stamp), render_llms_full_txt(alone, stamp)))
    return variants
