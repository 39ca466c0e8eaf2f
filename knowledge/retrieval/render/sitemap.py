"""sitemap.xml: the namespace's pages, Markdown mirrors and machine-readable files.

The sitemaps protocol (sitemaps.org) allows at most 50,000 URLs in one file; a namespace lists two
per entry, so above about 25,000 entries `sitemap.xml` becomes a sitemap index that points to
`sitemaps/1.xml`, `sitemaps/2.xml` … of at most SITEMAP_MAX_URLS URLs each (all in the same order
as the single file would list them). Smaller namespaces keep the single file, byte for byte.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot

STATIC_PATHS = ("", "index.html.md", "llms.txt", "llms-full.txt", "context.json", "metrics.json", "ai-policy.json")
SITEMAP_XML = "sitemap.xml"
SITEMAP_MAX_URLS = 50_000
XMLNS = "http://www.sitemaps.org/schemas/sitemap/0.9"
HEAD = '<?xml version="1.0" encoding="UTF-8"?>'


def sitemap_part(number: int) -> str:
    """The name (and path) of the n-th file of a sitemap index, counted from 1."""
    return f"sitemaps/{number}.xml"


def _rows(snapshot: Snapshot, stamp: ReleaseStamp) -> list[tuple[str, str]]:
    ns = snapshot.namespace
    rows: list[tuple[str, str]] = [(ns.url(path), stamp.revision) for path in STATIC_PATHS]
    for entry in snapshot.entries:
        rows.append((ns.url(f"entries/{entry.id}"), entry.updated))
        rows.append((ns.url(f"entries/{entry.id}.md"), entry.updated))
    for doc in snapshot.docs:
        rows.append((ns.url(f"docs/{doc.slug}"), stamp.revision))
        rows.append((ns.url(f"docs/{doc.slug}.md"), stamp.revision))
    return rows


def _document(root: str, item: str, rows: list[tuple[str, str]]) -> bytes:
    lines = [HEAD, f'<{root} xmlns="{XMLNS}">']
    lines += [f"  <{item}><loc>{escape(loc)}</loc><lastmod>{lastmod}</lastmod></{item}>" for loc, lastmod in rows]
    lines += [f"</{root}>", ""]
    return "\n".join(lines).encode()


def render_sitemaps(snapshot: Snapshot, stamp: ReleaseStamp) -> list[tuple[str, bytes]]:
    """(name, bytes) of sitemap.xml, and of its parts when it is an index."""
    rows = _rows(snapshot, stamp)
    if len(rows) <= SITEMAP_MAX_URLS:
        return [(SITEMAP_XML, _document("urlset", "url", rows))]
    parts = [rows[start : start + SITEMAP_MAX_URLS] for start in range(0, len(rows), SITEMAP_MAX_URLS)]
    files = [(sitemap_part(number), _document("urlset", "url", part)) for number, part in enumerate(parts, start=1)]
    index = [(snapshot.namespace.url(name), stamp.revision) for name, _ in files]
    return [(SITEMAP_XML, _document("sitemapindex", "sitemap", index)), *files]
