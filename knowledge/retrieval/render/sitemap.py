"""sitemap.xml: the namespace's pages, Markdown mirrors and machine-readable files."""

from __future__ import annotations

from xml.sax.saxutils import escape

from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot

STATIC_PATHS = ("", "index.html.md", "llms.txt", "llms-full.txt", "context.json", "metrics.json", "ai-policy.json")


def render_sitemap_xml(snapshot: Snapshot, stamp: ReleaseStamp) -> bytes:
    ns = snapshot.namespace
    rows: list[tuple[str, str]] = [(ns.url(path), stamp.revision) for path in STATIC_PATHS]
    for entry in snapshot.entries:
        rows.append((ns.url(f"entries/{entry.id}"), entry.updated))
        rows.append((ns.url(f"entries/{entry.id}.md"), entry.updated))
    for doc in snapshot.docs:
        rows.append((ns.url(f"docs/{doc.slug}"), stamp.revision))
        rows.append((ns.url(f"docs/{doc.slug}.md"), stamp.revision))
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">']
    lines += [f"  <url><loc>{escape(loc)}</loc><lastmod>{lastmod}</lastmod></url>" for loc, lastmod in rows]
    lines += ["</urlset>", ""]
    return "\n".join(lines).encode()
