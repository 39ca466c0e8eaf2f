"""Markdown mirrors (seed §3 L2): the index page, one entry, a tombstone, an unknown ID, a docs page."""

from __future__ import annotations

from knowledge.retrieval.browse import BrowsePage
from knowledge.retrieval.contract.quoting import DATA_NOTICE, one_line, quoted_entry
from knowledge.retrieval.contract.records import Tombstone
from knowledge.retrieval.contract.shapes import is_stale
from knowledge.retrieval.render.labels import ENDPOINTS, labels_for
from knowledge.retrieval.render.messages import messages_for
from knowledge.retrieval.snapshot import DocRecord, EntryRecord, NamespaceInfo, ReleaseStamp, Snapshot

INDEX_LISTED = 1000  # the index lists this many entries; llms.txt and sitemap.xml list all


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def entry_markdown(entry: EntryRecord, *, namespace: NamespaceInfo, stamp: ReleaseStamp) -> str:
    label = labels_for(namespace.language)
    stale = " · stale" if is_stale(entry.updated, revision=stamp.revision, review_by=entry.review_by) else ""
    lines = [
        f"# {entry.id} {one_line(entry.title)}",
        "",
        f"- {label['category']}: `{entry.category}` · {label['confidence']}: {entry.confidence:.2f} · "
        f"{label['tokens']}: {entry.tokens} · {label['updated']}: {entry.updated}{stale} · "
        f"{label['version']}: {entry.version}",
        f"- {label['tags']}: {', '.join(entry.tags) or '-'}",
        f"- {label['cite']}: [{entry.id}] — {namespace.url(f'entries/{entry.id}')}",
    ]
    if entry.layer:  # issue 16 §1: which namespace (layer) the entry comes from
        lines.append(f"- layer: `{entry.layer}`" + (f" · overrides [{entry.overrides}]" if entry.overrides else ""))
    if entry.paths:  # issue 16 §2: the files it applies to
        lines.append("- paths: " + ", ".join(f"`{glob}`" for glob in entry.paths))
    if entry.links:
        lines.append(
            "- links: " + ", ".join(f"[{link}]({namespace.url(f'entries/{link}.md')})" for link in entry.links)
        )
    summary = f"> {' '.join(entry.summary.split())}\n\n" if entry.summary.strip() else ""
    return "\n".join([*lines, "", DATA_NOTICE, "", quoted_entry(entry, text=summary + entry.body.strip()), ""])


def tombstone_markdown(tombstone: Tombstone, *, namespace: NamespaceInfo) -> str:
    text = messages_for(namespace.language)
    lines = [
        f"# {tombstone.id} {tombstone.title} (410 Gone)",
        "",
        text.gone.format(id=tombstone.id, retired_at=tombstone.retired_at[:10], reason=tombstone.reason),
    ]
    if tombstone.replaced_by:
        lines += ["", f"→ [{tombstone.replaced_by}]({namespace.url(f'entries/{tombstone.replaced_by}.md')})"]
    return "\n".join([*lines, ""])


def missing_markdown(entry_id: str, nearest: tuple[str, ...], *, namespace: NamespaceInfo) -> str:
    text = messages_for(namespace.language)
    message = text.not_found.format(name=namespace.name, id=entry_id, nearest=", ".join(nearest) or "-")
    links = [f"- [{n}]({namespace.url(f'entries/{n}.md')})" for n in nearest]
    return "\n".join([f"# {entry_id} (404 Not Found)", "", message, "", *links, ""])


def doc_markdown(doc: DocRecord) -> str:
    return doc.body.rstrip() + "\n"


def render_index_md(snapshot: Snapshot, stamp: ReleaseStamp) -> bytes:
    """/index.html.md: the same knowledge as /index.html, without the page chrome and the Playground."""
    ns = snapshot.namespace
    label = labels_for(ns.language)
    lines = [
        f"# {ns.title}",
        "",
        f"> {' '.join(ns.summary.split())}",
        "",
        "- "
        + label["stats"].format(
            version=stamp.knowledge_version,
            revision=stamp.revision,
            license=ns.license,
            count=len(snapshot.entries),
            tokens=snapshot.total_tokens,
        ),
        *([f"- {label['contact']}: {ns.contact}"] if ns.contact else []),
        "",
        f"## {label['use']}",
        "",
        label["use_text"].format(
            llms=f"`{ns.url('llms.txt')}`", context=f"`{ns.url('api/context')}?topic=…&budget=2000`"
        ),
        "",
        f"## {label['entries']}",
        "",
        f"| {label['id']} | {label['title']} | {label['category']} | {label['confidence']} | {label['tokens']} "
        f"| {label['updated']} |",
        "|---|---|---|---|---|---|",
    ]
    for entry in snapshot.entries[:INDEX_LISTED]:
        lines.append(
            f"| [{entry.id}]({ns.url(f'entries/{entry.id}.md')}) | {_cell(entry.title)} | {entry.category} "
            f"| {entry.confidence:.2f} | {entry.tokens} | {entry.updated} |"
        )
    if len(snapshot.entries) > INDEX_LISTED:
        lines += ["", label["more"].format(count=len(snapshot.entries) - INDEX_LISTED, llms=ns.url("llms.txt"))]
    lines += ["", f"## {label['categories']}", ""]
    lines += [f"- `{c.slug}` {c.name}: {_cell(c.purpose)}" for c in ns.categories]
    lines += ["", f"## {label['rules']}", ""]
    lines += [f"{n}. {rule}" for n, rule in enumerate(ns.rules, start=1)]
    if snapshot.docs:
        lines += ["", f"## {label['docs']}", ""]
        lines += [f"- [{_cell(d.title)}]({ns.url(f'docs/{d.slug}.md')})" for d in snapshot.docs]
    if ns.faq:
        lines += ["", f"## {label['faq']}", ""]
        for question, answer in ns.faq:
            lines += [f"**{question}**", "", answer, ""]
    lines += ["", f"## {label['endpoints']}", ""]
    lines += [f"- `{ns.url(path)}` ({kind})" for path, kind in ENDPOINTS]
    if snapshot.tombstones:
        lines += ["", f"## {label['retired']}", ""]
        lines += [f"- {t.id} {t.title}: {t.reason} ({t.retired_at[:10]})" for t in snapshot.tombstones]
    return ("\n".join(lines).rstrip() + "\n").encode()


def entries_page_markdown(listing: BrowsePage, *, namespace: NamespaceInfo) -> str:
    """The Markdown twin of one page of /entries/ (Accept: text/markdown)."""
    label = labels_for(namespace.language)
    heading = label["results_for"].format(query=listing.query) if listing.query else label["entries"]
    lines = [
        f"# {heading}",
        "",
        label["showing"].format(first=listing.first_number, last=listing.last_number, total=listing.total)
        + " · "
        + label["page_of"].format(page=listing.page, pages=listing.pages),
        "",
        f"| {label['id']} | {label['title']} | {label['category']} | {label['tokens']} |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| [{e.id}]({namespace.url(f'entries/{e.id}.md')}) | {_cell(e.title)} | {e.category} | {e.tokens} |"
        for e in listing.entries
    ]
    if not listing.entries:
        lines = [*lines[:2], label["no_results"]]
    return "\n".join(lines) + "\n"
